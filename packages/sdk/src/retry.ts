// When to try a request again, and after how long: pure decisions (the clock and the dice are
// arguments), so that packages/sdk/test/retry.test.ts can check them exactly.
//
// Only idempotent requests are retried (GET and HEAD, and a request the caller marks as safe to
// repeat: a POST with an Idempotency-Key, a DELETE whose repeat is harmless), on the
// answers that say "try again" (429 over the rate limit, 500 (a database that failed or timed
// out), 503 overloaded or shutting down, and 502/504, which a proxy in front answers while the
// service restarts) and when no answer came (connection refused or reset, DNS, a timeout). Back-off
// is exponential with full jitter, so clients that failed together do not come back together; a
// Retry-After from the API is honoured (not shortened), with a little jitter on top. Bounded by
// attempts and by the total time: a wait that would end past the budget is not started.

export interface RetryOptions {
  /** Attempts in all, the first included (1: never retry). Default 5; Infinity: no bound. */
  maxAttempts: number;
  /** The first retry waits a random time up to this (ms); each next one up to twice the last. Default 500. */
  baseDelayMs: number;
  /** The largest back-off ceiling (ms). Default 20000. */
  maxDelayMs: number;
  /**
   * Total time (ms) from the first attempt after which no retry starts: a wait (back-off or
   * Retry-After) that would end later gives up at once, with the last error. Default 60000;
   * Infinity: no bound.
   */
  maxElapsedMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 20_000, maxElapsedMs: 60_000 };

/** Statuses that say the same request may succeed later. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

export function isIdempotent(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/** Retry-After in milliseconds: delta-seconds or an HTTP date (RFC 9110); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // an HTTP date names its day and month ("Sat, 28 Mar 2026 12:00:30 GMT"): "-1" or "1.5" is not one
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** The back-off ceiling before retry number `retry` (1 for the first retry): base × 2^(retry-1), capped. */
export function backoffCeiling(retry: number, opts: RetryOptions): number {
  return Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** Math.min(retry - 1, 52));
}

export interface RetryDecisionInput {
  method: string;
  /** The request is safe to repeat whatever its method (a POST with an Idempotency-Key). */
  idempotent?: boolean;
  /** The answer's status; undefined when none came (a network error or a timeout). */
  status: number | undefined;
  /** Attempts made so far (1 after the first). */
  attempts: number;
  /** Milliseconds since the first attempt started. */
  elapsedMs: number;
  /** The answer's Retry-After, in milliseconds. */
  retryAfterMs: number | undefined;
  options: RetryOptions;
  /** A number in [0, 1), Math.random in use. */
  random: number;
}

/** How long to wait before the next attempt, or null: do not retry (give the error to the caller). */
export function retryDelay(input: RetryDecisionInput): number | null {
  const { options } = input;
  if (!input.idempotent && !isIdempotent(input.method)) return null;
  if (input.status !== undefined && !RETRY_STATUSES.has(input.status)) return null;
  if (input.attempts >= options.maxAttempts) return null;
  const delay =
    input.retryAfterMs !== undefined
      ? // as asked, plus up to 10% (at most one base delay) so that clients told the same second spread out
        input.retryAfterMs + input.random * Math.min(options.baseDelayMs, input.retryAfterMs * 0.1)
      : input.random * backoffCeiling(input.attempts, options);
  if (input.elapsedMs + delay > options.maxElapsedMs) return null;
  return Math.round(delay);
}
