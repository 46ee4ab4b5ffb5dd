// When to try an endpoint's head event again: pure decisions, tested with arithmetic.
//
// Exponential back-off with full jitter: attempt n waits a uniformly random time in
// [0, min(max, base * 2^(n-1))]; so many endpoints failing together (a receiver's outage) do not
// come back in lockstep. A `Retry-After` from the receiver (seconds or an HTTP date) is honoured
// as given, up to a cap. Failures go on for at least DISABLE_AFTER_MS: an endpoint whose head
// event has failed for that long is disabled at its next failure.

/** 3 days: the contract's "retried for at least 3 days", and when a failing endpoint is disabled. */
export const DISABLE_AFTER_MS = 3 * 86_400_000;
/** A receiver may ask for at most this long a pause per attempt. */
export const RETRY_AFTER_CAP_MS = 3_600_000;

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

/** The longest pause after failed attempt `attempt` (1 = the first failure): base * 2^(n-1), at most max. */
export function backoffCeiling(policy: BackoffPolicy, attempt: number): number {
  return Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40));
}

/** The pause after failed attempt `attempt` (1 = the first failure); `random` in [0, 1). */
export function backoffDelay(policy: BackoffPolicy, attempt: number, retryAfterMs: number | null, random: number): number {
  if (retryAfterMs !== null) return Math.min(Math.max(retryAfterMs, 0), RETRY_AFTER_CAP_MS);
  return Math.floor(random * backoffCeiling(policy, attempt));
}

/**
 * A Retry-After header (RFC 9110: delay-seconds or an HTTP-date) as milliseconds from `nowMs`;
 * null when absent or not one of those forms. A date in the past is 0.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(v)) return null;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** Whether an endpoint failing since `failingSinceMs` is disabled at a failure at `nowMs`. */
export function shouldDisable(failingSinceMs: number | null, nowMs: number): boolean {
  return failingSinceMs !== null && nowMs - failingSinceMs >= DISABLE_AFTER_MS;
}
