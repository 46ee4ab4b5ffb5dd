// The time part of the MCP comparison (lib/mcp.ts): how long one request takes, REST and MCP side
// by side. A client sends one request at a time on a keep-alive connection per side, and times
// each from its first byte out to the last byte of its answer: the time a request takes, not the
// queue in front of it (with 20 requests in flight, a closed loop's p50 is 20 / throughput). The
// sides alternate in blocks of BLOCK requests, which side starts a pair of blocks alternating too,
// so both meet the same moments of the machine's load; the server's CPU time is read around each
// block (its main thread's, to the nanosecond) and counted to its side. A round is --duration seconds of this after --warmup seconds.
import fs from 'node:fs';
import http from 'node:http';
import { median } from '../scale/common.js';
import { cpuMeter, waitForQuiet, type ChildServer } from './processes.js';

/** Requests per block: a few milliseconds each side, so that their CPU times are told apart. */
const BLOCK = 20;
const QUIET_CORES = 0.15;

export type Side = 'rest' | 'mcp';

/** What a side sends (lib/mcp.ts builds both). */
export interface SideRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface TimeRow {
  side: Side;
  round: number;
  requests: number;
  /** per request, ms */
  p50: number;
  p90: number;
  p99: number;
  /** the server's main-thread CPU time per request, ms */
  cpuMsPerReq: number;
  /** answers other than 200 */
  bad: number;
  otherCores: number;
}

interface Answer {
  ms: number;
  status: number;
  body: string;
}

function send(agent: http.Agent, port: number, r: SideRequest, keepBody: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const headers = r.body === undefined ? r.headers : { ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) };
    const req = http.request({ host: '127.0.0.1', port, agent, method: r.method, path: r.path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => void (keepBody && chunks.push(c)));
      res.on('end', () =>
        resolve({ ms: performance.now() - t0, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

/**
 * The CPU time of a process's main thread so far, in ms, from /proc/<pid>/schedstat (in ns: the
 * per-process counters of /proc/<pid>/stat count in 10 ms ticks, too coarse for a block of 20
 * requests). The main thread runs the requests; V8's helper threads (GC, compilers) are not in it.
 */
function mainThreadMs(pid: number): number {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN; // not Linux
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

/**
 * The first answer of each side, compared: the tool call's structuredContent must be the REST
 * body itself (the same page of the same data), else the comparison would measure two things.
 */
export async function checkSamePage(service: ChildServer, requests: Record<Side, SideRequest>): Promise<void> {
  const agent = new http.Agent({ keepAlive: false });
  try {
    const rest = await send(agent, service.port, requests.rest, true);
    const mcp = await send(agent, service.port, requests.mcp, true);
    if (rest.status !== 200 || mcp.status !== 200)
      throw new Error(`REST answered ${rest.status}, MCP ${mcp.status}: ${mcp.body.slice(0, 300)}`);
    const result = (JSON.parse(mcp.body) as { result?: { isError?: boolean; structuredContent?: unknown } }).result;
    if (!result || result.isError) throw new Error(`the tool call did not succeed: ${mcp.body.slice(0, 300)}`);
    const page = JSON.parse(rest.body) as { citas?: unknown[] };
    if (JSON.stringify(result.structuredContent) !== JSON.stringify(page))
      throw new Error('the tool call answered another page than the REST request (structuredContent differs from the REST body)');
    if (page.citas?.length !== 100) throw new Error(`the page has ${page.citas?.length ?? 0} citas, not 100: use a larger --scale`);
  } finally {
    agent.destroy();
  }
}

/** One round: `seconds` of alternating blocks (0: the warm-up's, not kept). */
async function blocks(service: ChildServer, requests: Record<Side, SideRequest>, round: number, seconds: number) {
  const agents = { rest: new http.Agent({ keepAlive: true, maxSockets: 1 }), mcp: new http.Agent({ keepAlive: true, maxSockets: 1 }) };
  const ms: Record<Side, number[]> = { rest: [], mcp: [] };
  const cpu: Record<Side, number> = { rest: 0, mcp: 0 };
  const bad: Record<Side, number> = { rest: 0, mcp: 0 };
  const end = performance.now() + seconds * 1000;
  try {
    for (let pair = 0; performance.now() < end; pair++) {
      const order: Side[] = (pair + round) % 2 === 0 ? ['rest', 'mcp'] : ['mcp', 'rest'];
      for (const side of order) {
        const before = mainThreadMs(service.pid);
        for (let i = 0; i < BLOCK; i++) {
          const a = await send(agents[side], service.port, requests[side], false);
          ms[side].push(a.ms);
          if (a.status !== 200) bad[side]++;
        }
        cpu[side] += mainThreadMs(service.pid) - before;
      }
    }
  } finally {
    agents.rest.destroy();
    agents.mcp.destroy();
  }
  return { ms, cpu, bad };
}

export async function timeRound(
  service: ChildServer,
  requests: Record<Side, SideRequest>,
  round: number,
  o: { warmup: number; duration: number; quietWait: number; pids: number[]; dbPids: number[] },
): Promise<TimeRow[]> {
  if (o.quietWait > 0) await waitForQuiet(o.pids, QUIET_CORES, o.quietWait * 1000, o.dbPids);
  if (o.warmup > 0) await blocks(service, requests, round, o.warmup);
  const meter = cpuMeter(service.pid, o.pids, o.dbPids);
  const r = await blocks(service, requests, round, o.duration);
  const { otherCores } = meter.stop();
  return (['rest', 'mcp'] as const).map((side) => {
    const sorted = [...r.ms[side]].sort((a, b) => a - b);
    return {
      side,
      round,
      requests: sorted.length,
      p50: median(sorted),
      p90: quantile(sorted, 0.9),
      p99: quantile(sorted, 0.99),
      cpuMsPerReq: r.cpu[side] / Math.max(1, sorted.length),
      bad: r.bad[side],
      otherCores,
    };
  });
}
