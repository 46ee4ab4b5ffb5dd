// The MCP server's memory (`mcp-memory`): whether answering on /mcp leaves anything behind. The
// server makes an MCP server and a transport for every request (stateless); if either were kept
// (a listener, a map entry, a timer), the process would grow with the requests. Each round starts
// a service process of its own for each side, sends it 1,000 requests from 50 concurrent
// connections, the same page either way (GET /api/v1/citas?limit=100, or the tool call
// list_citas {"limit":100} on /mcp), waits a second, and reads its resident memory: what the
// requests left. The sides alternate which goes first, round by round; the verdict compares the
// medians. Run after the cases, with --cases mcp-memory alone, or skipped with --no-mcp-memory.
import autocannon from 'autocannon';
import { median } from '../scale/common.js';
import { MCP_HEADERS, mcpToolCall } from './cases.js';
import { ROOT, type Options } from './options.js';
import { cpuMeter, freePort, readMemory, startServer, waitForQuiet } from './processes.js';
import { table } from './report.js';
import { serviceEnv } from './servers.js';
import type { ServiceBuild } from './service.js';

export const MCP_MEMORY_REQUESTS = 1_000;
export const MCP_MEMORY_CLIENTS = 50;
const MIN_ROUNDS = 3;
/** RSS after the MCP requests within this factor of RSS after the REST ones. */
const MCP_MEMORY_TARGET = 1.1;
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

interface MemoryRun {
  opts: Options;
  build: ServiceBuild;
  dataDir: string;
  databaseUrl: string | null;
  apiKey: string;
  pids: number[];
  dbPids: () => number[];
  log: (line: string) => void;
}

async function oneSide(run: MemoryRun, side: Side, round: number): Promise<MemoryRow> {
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
    const request =
      side === 'rest'
        ? { url: `${server.baseUrl}/api/v1/citas?limit=100` }
        : { url: `${server.baseUrl}/mcp`, method: 'POST', body: mcpToolCall('list_citas', { limit: 100 }) };
    const r = await autocannon({
      ...request,
      headers: { authorization: `Bearer ${run.apiKey}`, ...(side === 'mcp' ? MCP_HEADERS : {}) },
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

export async function runMcpMemory(run: MemoryRun): Promise<McpMemoryReport> {
  const rounds = Math.max(MIN_ROUNDS, run.opts.repeat);
  run.log(
    `MCP memory: ${rounds} rounds of ${MCP_MEMORY_REQUESTS} requests from ${MCP_MEMORY_CLIENTS} connections, REST and MCP alternating ...`,
  );
  const rows: MemoryRow[] = [];
  for (let round = 1; round <= rounds; round++) {
    const order: Side[] = round % 2 === 1 ? ['rest', 'mcp'] : ['mcp', 'rest'];
    for (const side of order) rows.push(await oneSide(run, side, round));
  }
  const of = (side: Side) => median(rows.filter((r) => r.side === side).map((r) => r.afterMiB));
  return { rows, restMiB: of('rest'), mcpMiB: of('mcp') };
}

export function mcpMemoryVerdict(r: McpMemoryReport): string {
  const ratio = r.mcpMiB / r.restMiB;
  const bad = r.rows.reduce((n, row) => n + row.bad, 0);
  const mark = ratio <= MCP_MEMORY_TARGET && bad === 0 ? 'met' : '**not met**';
  return (
    `Memory after ${MCP_MEMORY_REQUESTS.toLocaleString('en-US')} requests from ${MCP_MEMORY_CLIENTS} concurrent connections, a fresh process per side and round ` +
    `(median of ${r.rows.length / 2} rounds): MCP ${r.mcpMiB.toFixed(1)} MiB vs REST ${r.restMiB.toFixed(1)} MiB RSS (${ratio.toFixed(2)}×)` +
    `${bad ? `, ${bad} non-2xx or errors` : ''}: ${mark} (target: within ${Math.round((MCP_MEMORY_TARGET - 1) * 100)}%).`
  );
}

export function mcpMemoryTable(r: McpMemoryReport): string {
  const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
  return table(
    [
      'round',
      'side',
      'request',
      'RSS when ready MiB',
      'RSS after MiB',
      'peak RSS MiB',
      'seconds',
      'non-2xx + errors',
      'other load (cores)',
    ],
    r.rows.map((row) => [
      String(row.round),
      row.side === 'rest' ? 'REST' : 'MCP',
      row.side === 'rest' ? '`GET /api/v1/citas?limit=100`' : '`POST /mcp`: tools/call list_citas {"limit":100}',
      f1(row.idleMiB),
      f1(row.afterMiB),
      f1(row.hwmMiB),
      f1(row.seconds),
      String(row.bad),
      row.otherCores.toFixed(2),
    ]),
    ['r', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
}
