// The MCP server against REST (`mcp`), the same page either way: GET /api/v1/citas?limit=100, or
// the tool call list_citas {"limit":100} on /mcp. Run after the cases (--cases mcp alone; skipped
// with --no-mcp), in two parts:
//
//  1. Time: rounds of the closed loop (--connections, --duration after --warmup) on the service
//     of the cases, REST then MCP then REST ..., so that both sides of a round share the
//     machine's load of that minute (on a shared machine the cases, run one after the other, saw
//     other programs take from 0.2 to 1.7 cores); per round the ratio of p50 and of the server's
//     CPU per request, and the verdict on their medians.
//  2. Memory: whether answering on /mcp leaves anything behind. The server makes an MCP server and
//     a transport for every request (stateless); if either were kept (a listener, a map entry, a
//     timer), the process would grow with the requests. Each round starts a service process of
//     its own for each side, sends it 1,000 requests from 50 concurrent connections, waits a
//     second, and reads its resident memory: what the requests left. The sides alternate which
//     goes first, round by round; the verdict compares the medians.
import autocannon, { type Result } from 'autocannon';
import { median } from '../scale/common.js';
import { MCP_HEADERS, mcpToolCall } from './cases.js';
import { closedLoop, measure, type Measured } from './measure.js';
import { ROOT, type Options } from './options.js';
import { cpuMeter, freePort, readMemory, startServer, waitForQuiet, type ChildServer } from './processes.js';
import { serviceEnv } from './servers.js';
import type { ServiceBuild } from './service.js';

export const MCP_MEMORY_REQUESTS = 1_000;
/** The tool call within this factor of the REST request's median time (p50), and of its CPU. */
export const MCP_TIME_TARGET = 1.5;
export const REST_PATH = '/api/v1/citas?limit=100';
const TOOL_CALL = mcpToolCall('list_citas', { limit: 100 });
export const MCP_MEMORY_CLIENTS = 50;
const MIN_ROUNDS = 3;
/** RSS after the MCP requests within this factor of RSS after the REST ones. */
export const MCP_MEMORY_TARGET = 1.1;
const QUIET_CORES = 0.15;
const MiB = 2 ** 20;

type Side = 'rest' | 'mcp';

export interface MemoryRow {
  side: Side;
  round: number;
  /** RSS once ready, before the requests */
  idleMiB: number;
  /** RSS a second after the last answer */
  afterMiB: number;
  /** the process's peak (VmHWM) */
  hwmMiB: number;
  bad: number;
  seconds: number;
  otherCores: number;
}

export interface McpMemoryReport {
  rows: MemoryRow[];
  restMiB: number;
  mcpMiB: number;
}

export interface TimeRow {
  side: Side;
  round: number;
  reqPerSec: number;
  p50: number;
  p99: number;
  cpuMsPerReq: number;
  bad: number;
  otherCores: number;
}

export interface McpReport {
  time: TimeRow[];
  /** per round, MCP over REST: p50 and server CPU per request */
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

/** The request of a side, for autocannon. */
function requestOf(side: Side, baseUrl: string, apiKey: string) {
  return {
    url: side === 'rest' ? `${baseUrl}${REST_PATH}` : `${baseUrl}/mcp`,
    headers: { authorization: `Bearer ${apiKey}`, ...(side === 'mcp' ? MCP_HEADERS : {}) },
    post: side === 'rest' ? undefined : TOOL_CALL,
  };
}

async function timeRound(run: McpRun, service: ChildServer, side: Side, round: number): Promise<TimeRow> {
  const r = requestOf(side, service.baseUrl, run.apiKey);
  const m: Measured<Result> = await measure(service, run.pids, run.dbPids, run.opts, closedLoop(r.url, r.headers, run.opts, r.post));
  const row: TimeRow = {
    side,
    round,
    reqPerSec: m.result.requests.average,
    p50: m.result.latency.p50,
    p99: m.result.latency.p99,
    cpuMsPerReq: m.cpu.serverMs / Math.max(1, m.result.requests.total),
    bad: m.result.non2xx + m.result.errors,
    otherCores: m.cpu.otherCores,
  };
  run.log(
    `  ${side}, round ${round}: ${row.reqPerSec.toFixed(0)} req/s, p50 ${row.p50} ms, server CPU ${row.cpuMsPerReq.toFixed(2)} ms/req, other load ${row.otherCores.toFixed(2)} cores`,
  );
  return row;
}

async function memoryRound(run: McpRun, side: Side, round: number): Promise<MemoryRow> {
  const port = await freePort();
  const server = await startServer({
    name: `service (${side}, memory round ${round})`,
    port,
    readyPath: '/livez',
    cwd: ROOT,
    args: [...run.opts.nodeArgs, run.build.bin, 'serve'],
    env: serviceEnv(run.dataDir, port, run.databaseUrl),
  });
  try {
    const pids = [...run.pids, server.pid];
    if (run.opts.quietWait > 0) await waitForQuiet(pids, QUIET_CORES, run.opts.quietWait * 1000, run.dbPids());
    const idle = readMemory(server.pid);
    const meter = cpuMeter(server.pid, pids, run.dbPids());
    const request = requestOf(side, server.baseUrl, run.apiKey);
    const r = await autocannon({
      url: request.url,
      headers: request.headers,
      ...(request.post === undefined ? {} : { method: 'POST', body: request.post }),
      connections: MCP_MEMORY_CLIENTS,
      amount: MCP_MEMORY_REQUESTS,
      timeout: 10,
    });
    const cpu = meter.stop();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const after = readMemory(server.pid);
    const row: MemoryRow = {
      side,
      round,
      idleMiB: (idle?.rss ?? NaN) / MiB,
      afterMiB: (after?.rss ?? NaN) / MiB,
      hwmMiB: (after?.hwm ?? NaN) / MiB,
      bad: r.non2xx + r.errors + Math.max(0, MCP_MEMORY_REQUESTS - r.requests.total),
      seconds: cpu.elapsedMs / 1000,
      otherCores: cpu.otherCores,
    };
    run.log(
      `  ${side}, round ${round}: RSS ${row.idleMiB.toFixed(0)} MiB idle -> ${row.afterMiB.toFixed(0)} MiB after ${MCP_MEMORY_REQUESTS} requests ` +
        `(peak ${row.hwmMiB.toFixed(0)}), ${row.bad} non-2xx/errors, other load ${row.otherCores.toFixed(2)} cores`,
    );
    return row;
  } finally {
    await server.stop();
  }
}

/** `service`: the service of the cases (the time rounds run on it). */
export async function runMcp(run: McpRun, service: ChildServer): Promise<McpReport> {
  const rounds = Math.max(MIN_ROUNDS, run.opts.repeat);
  run.log(`MCP vs REST: ${rounds} rounds of ${run.opts.duration} s each side, ${run.opts.connections} connections, alternating ...`);
  const time: TimeRow[] = [];
  const p50Ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const rest = await timeRound(run, service, 'rest', round);
    const mcp = await timeRound(run, service, 'mcp', round);
    time.push(rest, mcp);
    p50Ratios.push(mcp.p50 / rest.p50);
    cpuRatios.push(mcp.cpuMsPerReq / rest.cpuMsPerReq);
  }
  run.log(
    `MCP memory: ${rounds} rounds of ${MCP_MEMORY_REQUESTS} requests from ${MCP_MEMORY_CLIENTS} connections, REST and MCP alternating ...`,
  );
  const rows: MemoryRow[] = [];
  for (let round = 1; round <= rounds; round++) {
    const order: Side[] = round % 2 === 1 ? ['rest', 'mcp'] : ['mcp', 'rest'];
    for (const side of order) rows.push(await memoryRound(run, side, round));
  }
  const of = (side: Side) => median(rows.filter((r) => r.side === side).map((r) => r.afterMiB));
  return { time, p50Ratios, cpuRatios, memory: { rows, restMiB: of('rest'), mcpMiB: of('mcp') } };
}
