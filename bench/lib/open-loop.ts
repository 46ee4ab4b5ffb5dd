// An open-loop load generator: requests start at evenly spaced instants (rate per second), each
// on a free keep-alive connection, whether or not earlier ones have been answered, and latency
// is measured from the instant a request was due, so a slow server cannot hide queueing delay
// by slowing the client down (coordinated omission).
//
// Why not autocannon's overallRate: autocannon 8 lets each connection send its per-second quota
// back to back and then pause until its one-second timer fires, so "300 requests/s" arrives as
// a burst of 300 at the start of every second; and its correction for coordinated omission uses
// an expected interval of ceil(1 / per-connection rate) = 1 ms. Neither measures "p99 at 300
// requests/s offered".
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface OpenLoopResult {
  offered: number;
  /** responses received per second of the measured window */
  achieved: number;
  sent: number;
  completed: number;
  /** answers with the expected status (their latencies are kept) */
  ok: number;
  /** responses by status */
  statuses: Map<number, number>;
  /** answers with another status than the expected one (200, or 304 for a conditional poll) */
  unexpected: number;
  errors: number;
  /** milliseconds, ascending */
  latencies: number[];
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export async function openLoop(
  url: string,
  headers: Record<string, string>,
  rate: number,
  durationS: number,
  opts: {
    timeoutMs?: number;
    status?: number;
    maxSockets?: number;
    agent?: http.Agent;
    /** Instead of `durationS`: requests go out until this says stop (e.g. while a backup runs). */
    until?: () => boolean;
  } = {},
): Promise<OpenLoopResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const expected = opts.status ?? 200;
  // A caller's agent keeps its connections for the next run (a warm-up's, for the measurement).
  const agent = opts.agent ?? new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 512 });
  const interval = 1000 / rate;
  const total = opts.until ? Infinity : Math.max(1, Math.round(rate * durationS));
  const stopped = opts.until ?? (() => false);
  const latencies: number[] = [];
  let sent = 0;
  let completed = 0;
  let unexpected = 0;
  let errors = 0;
  const statuses = new Map<number, number>();
  let outstanding = 0;

  const started = performance.now();
  await new Promise<void>((resolve) => {
    let scheduledAll = false;
    const maybeDone = () => {
      if (scheduledAll && outstanding === 0) resolve();
    };
    const fire = (dueAt: number) => {
      sent++;
      outstanding++;
      let finished = false;
      const finish = (ok: boolean, status: number) => {
        if (finished) return;
        finished = true;
        outstanding--;
        if (!ok) errors++;
        else {
          completed++;
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status !== expected) unexpected++;
          else latencies.push(performance.now() - dueAt);
        }
        maybeDone();
      };
      const req = http.get(url, { agent, headers, timeout: timeoutMs }, (res) => {
        res.on('data', () => {});
        res.on('end', () => finish(true, res.statusCode ?? 0));
        res.on('error', () => finish(false, 0));
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => finish(false, 0));
    };
    let i = 0;
    const tick = () => {
      const now = performance.now();
      // Every request that is due by now goes out now, measured from when it was due.
      while (i < total && !stopped() && started + i * interval <= now) fire(started + i++ * interval);
      if (i < total && !stopped()) setTimeout(tick, Math.max(0, started + i * interval - performance.now()));
      else {
        scheduledAll = true;
        maybeDone();
      }
    };
    tick();
  });
  const elapsedS = (performance.now() - started) / 1000;
  if (!opts.agent) agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    offered: rate,
    achieved: completed / Math.max(elapsedS, durationS),
    sent,
    completed,
    ok: latencies.length,
    statuses,
    unexpected,
    errors,
    latencies,
  };
}
