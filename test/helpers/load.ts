// A steady stream of API requests from a few concurrent loops, recording every outcome, for the
// tests that break things under load (database faults). Not a benchmark: nothing here is timed
// against a figure, except the client-side timeout that turns a hang into a failure.
import { pause } from './wait.js';

export interface Outcome {
  /** 0 when no HTTP answer came (connection refused or reset, or the timeout) */
  status: number;
  code: string | null;
  retryAfter: string | null;
  /** why no answer came */
  error: string | null;
  ms: number;
}

export interface Load {
  outcomes: Outcome[];
  stop(): Promise<Outcome[]>;
}

export async function fetchOutcome(url: string, headers: Record<string, string>, timeoutMs: number): Promise<Outcome> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let code: string | null = null;
    try {
      code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? null;
    } catch {
      code = null;
    }
    return { status: res.status, code, retryAfter: res.headers.get('retry-after'), error: null, ms: performance.now() - t0 };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return { status: 0, code: null, retryAfter: null, error: cause ?? (err as Error).name, ms: performance.now() - t0 };
  }
}

/** `concurrency` loops, each sending its next request when the last one is answered. */
export function steadyLoad(url: string, headers: Record<string, string>, concurrency: number, timeoutMs: number): Load {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Array.from({ length: concurrency }, async () => {
    while (running) {
      outcomes.push(await fetchOutcome(url, headers, timeoutMs));
      // A refused connection answers at once: do not spin.
      if (outcomes[outcomes.length - 1]!.status === 0) await pause(20);
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

/** Polls `url` until it answers 200; the time that took, in ms, or null past `withinMs`. */
export async function firstSuccess(url: string, headers: Record<string, string>, withinMs: number): Promise<number | null> {
  const t0 = performance.now();
  while (performance.now() - t0 < withinMs) {
    const o = await fetchOutcome(url, headers, withinMs);
    if (o.status === 200) return performance.now() - t0;
    await pause(50); // the poll's pace
  }
  return null;
}
