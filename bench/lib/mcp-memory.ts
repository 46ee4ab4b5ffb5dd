// The memory part of the MCP comparison (lib/mcp.ts): whether answering on /mcp leaves anything
// behind. The server makes an MCP server and a transport of the SDK for every request
// (stateless); if either were kept (a listener, a map entry, a timer), the process would hold
// more with every request. Each round starts a service process of its own for each side, sends it
// 1,000 requests from 50 concurrent connections, and reads its resident memory twice: a second
// after the last answer (garbage not yet collected counts there: a side that makes more of it
// looks bigger), then after V8's last-resort collection (../gc-on-signal.mjs, preloaded), which
// leaves what the requests really left behind: the verdict's figure. Both sides are measured
// alike, and alternate which goes first, round by round.
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuMeter, freePort, readMemory, startServer, waitForQuiet, type ChildServer } from './processes.js';
import { ROOT } from './options.js';
import type { Side, SideRequest } from './mcp-time.js';

export const MCP_MEMORY_REQUESTS = 1_000;
export const MCP_MEMORY_CLIENTS = 50;
const QUIET_CORES = 0.15;
const MiB = 2 ** 20;
const GC_PRELOAD = path.join(ROOT, 'bench/gc-on-signal.mjs');
const GC_DONE = 'bench-gc-done ';

export interface MemoryRow {
  side: Side;
  round: number;
  /** RSS once ready, before the requests */
  idleMiB: number;
  /** RSS a second after the last answer */
  afterMiB: number;
  /** RSS after the last-resort collection */
  collectedMiB: number;
  /** V8's heap in use after it */
  heapUsedMiB: number;
  /** the process's peak (VmHWM) */
  hwmMiB: number;
  bad: number;
  /** the answers' status codes and their counts, e.g. `200: 1000` */
  statuses: string;
  seconds: number;
  otherCores: number;
}

/** Runs the preload's collection in `server` (SIGWINCH) and waits for its report. */
async function collect(server: ChildServer): Promise<{ heapUsed: number }> {
  const before = server.output().split(GC_DONE).length;
  process.kill(server.pid, 'SIGWINCH');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const parts = server.output().split(GC_DONE);
    if (parts.length > before) return JSON.parse(parts[parts.length - 1]!.split('\n')[0]!) as { heapUsed: number };
    if (Date.now() > deadline) throw new Error(`${server.name} did not report its collection within 30 s:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function memoryRound(
  side: Side,
  round: number,
  request: (baseUrl: string) => SideRequest & { url: string },
  o: { nodeArgs: string[]; bin: string; env: (port: number) => NodeJS.ProcessEnv; quietWait: number; pids: number[]; dbPids: number[] },
): Promise<MemoryRow> {
  const port = await freePort();
  const server = await startServer({
    name: `service (${side}, memory round ${round})`,
    port,
    readyPath: '/livez',
    cwd: ROOT,
    args: [...o.nodeArgs, '--expose-gc', '--import', GC_PRELOAD, o.bin, 'serve'],
    env: o.env(port),
  });
  try {
    const pids = [...o.pids, server.pid];
    if (o.quietWait > 0) await waitForQuiet(pids, QUIET_CORES, o.quietWait * 1000, o.dbPids);
    const idle = readMemory(server.pid);
    const meter = cpuMeter(server.pid, pids, o.dbPids);
    const r = request(server.baseUrl);
    const result = await autocannon({
      url: r.url,
      method: r.method,
      headers: r.headers,
      ...(r.body === undefined ? {} : { body: r.body }),
      connections: MCP_MEMORY_CLIENTS,
      amount: MCP_MEMORY_REQUESTS,
      timeout: 10,
    });
    const cpu = meter.stop();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const after = readMemory(server.pid);
    const { heapUsed } = await collect(server);
    const collected = readMemory(server.pid);
    const bad = result.non2xx + result.errors + Math.max(0, MCP_MEMORY_REQUESTS - result.requests.total);
    return {
      side,
      round,
      idleMiB: (idle?.rss ?? NaN) / MiB,
      afterMiB: (after?.rss ?? NaN) / MiB,
      collectedMiB: (collected?.rss ?? NaN) / MiB,
      heapUsedMiB: heapUsed / MiB,
      hwmMiB: (collected?.hwm ?? NaN) / MiB,
      bad,
      statuses: Object.entries(result.statusCodeStats)
        .map(([code, s]) => `${code}: ${s.count}`)
        .join(', '),
      seconds: cpu.elapsedMs / 1000,
      otherCores: cpu.otherCores,
    };
  } finally {
    await server.stop();
  }
}
