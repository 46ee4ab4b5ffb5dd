// The MCP server against REST (`mcp`), the goals of issue 24, measured on the same page either
// way: GET /api/v1/citas?limit=100, or the tool call list_citas {"limit":100} on /mcp (whose
// structuredContent is checked to be the REST body itself first). Run after the cases (--cases
// mcp alone; skipped with --no-mcp), in two parts:
//
//  1. Time (lib/mcp-time.ts): rounds on the service of the cases, each request timed alone, the
//     sides alternating in small blocks; per round the ratio of the median times (the goal:
//     within 1.5x) and of the server's CPU per request.
//  2. Memory (lib/mcp-memory.ts): per round and side, a fresh service process answers 1,000
//     requests from 50 concurrent connections; its RSS after a full collection is what they left
//     behind (the goal: MCP within 10% of REST).
//
// That the MCP route adds no database read beyond REST's is a test (test/mcp/statements.test.ts
// captures each tool's statements and compares them with its route's), not a measure.
import { median } from '../scale/common.js';
import { MCP_HEADERS, mcpToolCall } from './cases.js';
import { memoryRound, MCP_MEMORY_CLIENTS, MCP_MEMORY_REQUESTS, type MemoryRow } from './mcp-memory.js';
import { checkSamePage, timeRound, type Side, type SideRequest, type TimeRow } from './mcp-time.js';
import type { Options } from './options.js';
import type { ChildServer } from './processes.js';
import { serviceEnv } from './servers.js';
import type { ServiceBuild } from './service.js';

export { MCP_MEMORY_CLIENTS, MCP_MEMORY_REQUESTS, type MemoryRow, type TimeRow };

/** The tool call's median time within this factor of the REST request's. */
export const MCP_TIME_TARGET = 1.5;
/** RSS left by the MCP requests within this factor of what the REST ones left. */
export const MCP_MEMORY_TARGET = 1.1;
export const REST_PATH = '/api/v1/citas?limit=100';
const MIN_ROUNDS = 3;

export interface McpMemoryReport {
  rows: MemoryRow[];
  /** medians over the rounds, after the collection */
  restMiB: number;
  mcpMiB: number;
  /** medians over the rounds, a second after the last answer (before the collection) */
  restAfterMiB: number;
  mcpAfterMiB: number;
}

export interface McpReport {
  time: TimeRow[];
  /** per round, MCP over REST: median time and server CPU per request */
  p50Ratios: number[];
  cpuRatios: number[];
  memory: McpMemoryReport;
}

interface McpRun {
  opts: Options;
  build: ServiceBuild;
  dataDir: string;
  databaseUrl: string | null;
  apiKey: string;
  pids: number[];
  dbPids: () => number[];
  log: (line: string) => void;
}

function requestsOf(apiKey: string): Record<Side, SideRequest> {
  const authorization = `Bearer ${apiKey}`;
  return {
    rest: { method: 'GET', path: REST_PATH, headers: { authorization } },
    mcp: { method: 'POST', path: '/mcp', headers: { authorization, ...MCP_HEADERS }, body: mcpToolCall('list_citas', { limit: 100 }) },
  };
}

const f2 = (n: number) => n.toFixed(2);

/** `service`: the service of the cases (the time rounds run on it). */
export async function runMcp(run: McpRun, service: ChildServer): Promise<McpReport> {
  const { opts, log } = run;
  const rounds = Math.max(MIN_ROUNDS, opts.repeat);
  const requests = requestsOf(run.apiKey);
  await checkSamePage(service, requests);
  log(`MCP vs REST, time: ${rounds} rounds of ${opts.duration} s, one request at a time, the sides alternating every 20 requests ...`);
  const time: TimeRow[] = [];
  const p50Ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const [rest, mcp] = await timeRound(service, requests, round, { ...opts, pids: run.pids, dbPids: run.dbPids() });
    time.push(rest!, mcp!);
    p50Ratios.push(mcp!.p50 / rest!.p50);
    cpuRatios.push(mcp!.cpuMsPerReq / rest!.cpuMsPerReq);
    for (const row of [rest!, mcp!])
      log(
        `  round ${round}, ${row.side}: ${row.requests} requests, median ${f2(row.p50)} ms (p90 ${f2(row.p90)}, p99 ${f2(row.p99)}), ` +
          `server main-thread CPU ${f2(row.cpuMsPerReq)} ms/req, ${row.bad} non-200, other load ${f2(row.otherCores)} cores`,
      );
    log(`  round ${round}: MCP/REST median time ${f2(p50Ratios.at(-1)!)}x, server main-thread CPU ${f2(cpuRatios.at(-1)!)}x`);
  }

  log(
    `MCP vs REST, memory: ${rounds} rounds of ${MCP_MEMORY_REQUESTS} requests from ${MCP_MEMORY_CLIENTS} connections, ` +
      'a fresh process per side ...',
  );
  const rows: MemoryRow[] = [];
  const memoryOpts = {
    nodeArgs: opts.nodeArgs,
    bin: run.build.bin,
    // Overload protection off: on a busy machine a burst of 50 connections passed its event-loop
    // threshold and some answers were 503s, which do none of a page's work (and hold none of its memory).
    env: (port: number) => ({ ...serviceEnv(run.dataDir, port, run.databaseUrl), OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' }),
    quietWait: opts.quietWait,
    pids: run.pids,
    dbPids: run.dbPids(),
  };
  for (let round = 1; round <= rounds; round++) {
    const order: Side[] = round % 2 === 1 ? ['rest', 'mcp'] : ['mcp', 'rest'];
    for (const side of order) {
      const row = await memoryRound(side, round, (baseUrl) => ({ url: baseUrl + requests[side].path, ...requests[side] }), memoryOpts);
      rows.push(row);
      log(
        `  round ${round}, ${side}: RSS ${row.idleMiB.toFixed(0)} MiB idle, ${row.afterMiB.toFixed(0)} MiB a second after the last ` +
          `answer, ${row.collectedMiB.toFixed(0)} MiB after a full collection (heap in use ${row.heapUsedMiB.toFixed(0)} MiB), peak ` +
          `${row.hwmMiB.toFixed(0)}; answers ${row.statuses}; other load ${f2(row.otherCores)} cores`,
      );
    }
  }
  const of = (side: Side, key: 'collectedMiB' | 'afterMiB') => median(rows.filter((r) => r.side === side).map((r) => r[key]));
  return {
    time,
    p50Ratios,
    cpuRatios,
    memory: {
      rows,
      restMiB: of('rest', 'collectedMiB'),
      mcpMiB: of('mcp', 'collectedMiB'),
      restAfterMiB: of('rest', 'afterMiB'),
      mcpAfterMiB: of('mcp', 'afterMiB'),
    },
  };
}
