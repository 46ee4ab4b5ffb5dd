// The retry decisions (packages/sdk/src/retry.ts), exactly: which answers are retried, the
// back-off under a doubling ceiling with full jitter, Retry-After honoured and never shortened,
// the bounds on attempts and on the total time.
import { describe, expect, it } from 'vitest';
import { backoffCeiling, DEFAULT_RETRY, parseRetryAfter, retryDelay, type RetryDecisionInput } from '../src/retry.js';

const input = (over: Partial<RetryDecisionInput> = {}): RetryDecisionInput => ({
  method: 'GET',
  status: 503,
  attempts: 1,
  elapsedMs: 0,
  retryAfterMs: undefined,
  options: DEFAULT_RETRY,
  random: 0.5,
  ...over,
});

describe('retryDelay', () => {
  it('retries 429, 500, 502, 503, 504 and no answer at all; nothing else', () => {
    for (const status of [429, 500, 502, 503, 504, undefined]) expect(retryDelay(input({ status })), String(status)).not.toBeNull();
    for (const status of [400, 401, 403, 404, 405, 408, 410, 431, 501]) expect(retryDelay(input({ status })), String(status)).toBeNull();
  });

  it('only idempotent requests', () => {
    expect(retryDelay(input({ method: 'HEAD' }))).not.toBeNull();
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expect(retryDelay(input({ method }))).toBeNull();
      expect(retryDelay(input({ method, status: undefined }))).toBeNull();
    }
  });

  it('full jitter under a ceiling that doubles from baseDelayMs up to maxDelayMs', () => {
    const opts = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000, maxAttempts: 100, maxElapsedMs: Infinity };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffCeiling(n, opts))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffCeiling(10_000, opts)).toBe(1000);
    expect(retryDelay(input({ options: opts, attempts: 3, random: 0 }))).toBe(0);
    expect(retryDelay(input({ options: opts, attempts: 3, random: 0.5 }))).toBe(200);
    expect(retryDelay(input({ options: opts, attempts: 3, random: 0.999 }))).toBe(400);
  });

  it('Retry-After as given, plus at most 10 % (at most one base delay), never less', () => {
    expect(retryDelay(input({ status: 429, retryAfterMs: 2000, random: 0 }))).toBe(2000);
    expect(retryDelay(input({ status: 429, retryAfterMs: 2000, random: 0.999 }))).toBe(2200);
    expect(retryDelay(input({ status: 429, retryAfterMs: 30_000, random: 0.999 }))).toBe(30_500);
    // longer than the back-off ceiling: still honoured
    expect(retryDelay(input({ status: 503, retryAfterMs: 25_000, random: 0 }))).toBe(25_000);
  });

  it('bounded by attempts and by the total time', () => {
    expect(retryDelay(input({ attempts: 4 }))).not.toBeNull();
    expect(retryDelay(input({ attempts: 5 }))).toBeNull();
    // a wait that would end past maxElapsedMs is not started
    expect(retryDelay(input({ elapsedMs: 59_000, retryAfterMs: 2000 }))).toBeNull();
    expect(retryDelay(input({ elapsedMs: 57_000, retryAfterMs: 2000, random: 0 }))).toBe(2000);
    const unbounded = { ...DEFAULT_RETRY, maxAttempts: Infinity, maxElapsedMs: Infinity };
    expect(retryDelay(input({ options: unbounded, attempts: 1e6, elapsedMs: 1e12 }))).not.toBeNull();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 2, 28, 12, 0, 0);
  it('delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('1', now)).toBe(1000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Sat, 28 Mar 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sat, 28 Mar 2026 11:00:00 GMT', now)).toBe(0);
  });
  it('absent or unreadable: undefined (the back-off applies)', () => {
    for (const v of [null, undefined, '', 'soon', '-1', '1.5']) expect(parseRetryAfter(v, now), String(v)).toBeUndefined();
  });
});
