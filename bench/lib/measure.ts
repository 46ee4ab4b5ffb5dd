// One measurement: wait for a quiet machine, warm up, then run the load with the server's CPU
// time and peak RSS accounted (closed loop by autocannon, or a fixed offered rate).
import { Worker } from 'node:worker_threads';
import autocannon, { type Result } from 'autocannon';
import type { OpenLoopResult } from './open-loop.js';
import type { OpenLoopWorkerData } from './open-loop-worker.js';
import { cpuMeter, rssSampler, waitForQuiet, type ChildServer, type CpuReport } from './processes.js';

const MiB = 2 ** 20;
/** Before each case, wait for other programs to use less than this many cores (see --quiet-wait). */
const QUIET_CORES = 0.15;

export interface Measured<T> {
  result: T;
  peakRssMiB: number;
  cpu: CpuReport;
}

/** Waits for a quiet machine, warms up, then measures `run` with RSS and CPU accounting. */
export async function measure<T>(
  server: ChildServer,
  pids: number[],
  o: { warmup: number; quietWait: number },
  run: (seconds: number) => Promise<T>,
): Promise<Measured<T>> {
  if (o.quietWait > 0) await waitForQuiet(pids, QUIET_CORES, o.quietWait * 1000);
  if (o.warmup > 0) await run(o.warmup);
  const sampler = rssSampler(server.pid);
  const meter = cpuMeter(server.pid, pids);
  const result = await run(-1);
  const cpu = meter.stop();
  return { result, peakRssMiB: sampler.stop() / MiB, cpu };
}

/** Closed loop: `connections` connections, each sending its next request when answered. */
export function closedLoop(
  url: string,
  req: { method?: 'GET' | 'POST'; body?: string; headers: Record<string, string> },
  o: { connections: number; duration: number },
) {
  return (seconds: number): Promise<Result> =>
    Promise.resolve(autocannon({ url, ...req, connections: o.connections, timeout: 10, duration: seconds > 0 ? seconds : o.duration }));
}

/**
 * Open loop at a fixed offered rate (see lib/open-loop.ts for why not autocannon's overallRate),
 * run by a worker thread (lib/open-loop-worker.ts), whose heap is its own. The client counts any
 * pause of its own event loop as the server's latency, rightly for a client; in the harness's
 * thread it paused for the harness's garbage (about two collections a second of 4-9 ms each,
 * where autocannon's results and the data set live), and the p99 at 300 requests/s was theirs:
 * 13.2-13.4 ms in the harness's thread, 2.6-3.2 ms in a worker, against the same cold service.
 * The warm-up and the measurement share the worker and its agent: the measurement starts on the
 * warm-up's keep-alive connections, as a client in steady state does. With a new agent its first
 * requests each opened a connection while the next were due, and that start-up, not the server,
 * was much of the p99.
 */
export function fixedRate(url: string, headers: Record<string, string>, o: { rate: number; duration: number; status: number }) {
  const workerData: OpenLoopWorkerData = { url, headers, rate: o.rate, status: o.status };
  let worker: Worker | null = null;
  return async (seconds: number): Promise<OpenLoopResult> => {
    const measured = seconds <= 0;
    const w = (worker ??= new Worker(new URL('./open-loop-worker.ts', import.meta.url), { workerData }));
    try {
      return await new Promise<OpenLoopResult>((resolve, reject) => {
        const failed = (err: Error) => reject(err);
        w.once('error', failed);
        w.once('message', (r: OpenLoopResult) => {
          w.off('error', failed);
          resolve(r);
        });
        w.postMessage(measured ? o.duration : seconds);
      });
    } finally {
      if (measured) {
        worker = null;
        await w.terminate();
      }
    }
  };
}

/** The run with the median `key` (the lower of the middle two of an even number). */
export function median<T>(runs: readonly T[], key: (m: T) => number): T {
  const sorted = [...runs].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** Answers other than 200, and errors. */
export function bad(r: Result): number {
  return r.non2xx + r.errors;
}
