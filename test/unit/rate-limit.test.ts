// GCRA arithmetic (60 requests per second sustained, bursts of 120), with explicit
// clocks. Every scenario runs at a small clock (0) and at real epoch-millisecond clocks, because
// floating-point rounding depends on the clock's magnitude and production uses Date.now().
//
// The numbers, worked out: one "interval" is 1/60 s. A request is allowed while the key's
// theoretical arrival time (TAT, pushed one interval further by each allowed request) stays within
// burst x interval = 2 s of now.
//  - 120 at one instant: the 120th puts TAT exactly 2 s ahead (allowed); the 121st would be 2 s +
//    one interval ahead, so it waits one interval (16.7 ms): Retry-After 1 s.
//  - 59/s: the gap between requests (1/59 s) exceeds the interval, so TAT never runs ahead of now
//    by more than one interval: every request passes with 119 left.
//  - 61/s from a fresh key: after n requests TAT is n/60 s, request n arrives at (n-1)/61 s, and it
//    is refused when n/60 - (n-1)/61 > 2, i.e. n > 7260: the 7261st request, 119.0 s in. After
//    that exactly 60 of every 61 pass.
//  - 60/s after a full burst: TAT stays exactly 2 s ahead; every request passes, none to spare.
import { describe, expect, it } from 'vitest';
import { MemoryGcraLimiter, policyHeader, stateHeader, type RateDecision } from '../../src/services/rate-limit.js';

const BASES = [0, Date.UTC(2026, 2, 28, 12, 0, 0), 1_800_000_000_123];

/** `count` requests spaced evenly at `perSecond` starting at `start` ms; their decisions. */
function stream(l: MemoryGcraLimiter, key: string, start: number, perSecond: number, count: number): RateDecision[] {
  const out: RateDecision[] = [];
  for (let i = 0; i < count; i++) out.push(l.decide(key, start + (i * 1000) / perSecond, true));
  return out;
}

function burst(l: MemoryGcraLimiter, key: string, at: number, count: number): RateDecision[] {
  return Array.from({ length: count }, () => l.decide(key, at, true));
}

describe.each(BASES)('GCRA 60/s, burst 120, clock at %d ms', (t0) => {
  it('a burst of 120 at one instant passes; the 121st is refused with Retry-After 1 s', () => {
    const l = new MemoryGcraLimiter(60, 120);
    const ds = burst(l, 'k', t0, 120);
    expect(ds.every((d) => d.allowed)).toBe(true);
    expect(ds.map((d) => d.remaining)).toEqual(Array.from({ length: 120 }, (_, i) => 119 - i));
    expect(ds.every((d) => d.limit === 120 && d.retryAfterSeconds === 0)).toBe(true);
    expect(ds[0]!.resetSeconds).toBe(1); // one interval to refill
    expect(ds[119]!.resetSeconds).toBe(2); // 120 intervals = 2 s to refill

    const refused = l.decide('k', t0, true);
    expect(refused).toEqual({ allowed: false, limit: 120, remaining: 0, resetSeconds: 2, retryAfterSeconds: 1 });
    expect(Number.isInteger(refused.retryAfterSeconds)).toBe(true);
    // Refusals take nothing: still refused at the same instant, still one interval to wait.
    expect(l.decide('k', t0, true)).toEqual(refused);
  });

  it('after a full burst, one more passes one interval later, and 60 more one second later', () => {
    const l = new MemoryGcraLimiter(60, 120);
    burst(l, 'k', t0, 120);
    expect(l.decide('k', t0 + 10, true).allowed).toBe(false); // 10 ms < 16.7 ms
    const oneSecond = burst(l, 'k', t0 + 1000, 61);
    expect(oneSecond.filter((d) => d.allowed)).toHaveLength(60);
    expect(oneSecond[60]!.allowed).toBe(false);
    const two = new MemoryGcraLimiter(60, 120);
    burst(two, 'k', t0, 120);
    expect(two.decide('k', t0 + 17, true)).toMatchObject({ allowed: true, remaining: 0 });
    expect(two.decide('k', t0 + 17, true).allowed).toBe(false);
  });

  it('after a full burst the bucket is full again 2 s later', () => {
    const l = new MemoryGcraLimiter(60, 120);
    burst(l, 'k', t0, 120);
    expect(l.decide('k', t0 + 2000, false)).toMatchObject({ allowed: true, remaining: 120, resetSeconds: 0 });
    expect(burst(l, 'k', t0 + 2000, 121).filter((d) => d.allowed)).toHaveLength(120);
  });

  it('59/s for a minute: all 3540 pass, with 119 left each time', () => {
    const l = new MemoryGcraLimiter(60, 120);
    const ds = stream(l, 'k', t0, 59, 59 * 60);
    expect(ds.filter((d) => !d.allowed)).toHaveLength(0);
    expect(new Set(ds.map((d) => d.remaining))).toEqual(new Set([119]));
  });

  it('exactly 60/s without a burst passes forever with 119 left', () => {
    const l = new MemoryGcraLimiter(60, 120);
    const ds = stream(l, 'k', t0, 60, 60 * 300);
    expect(ds.filter((d) => !d.allowed)).toHaveLength(0);
    expect(new Set(ds.map((d) => d.remaining))).toEqual(new Set([119]));
  });

  it('a sustained 61/s is limited from the 7261st request (119 s in), then 60 of every 61 pass', () => {
    const l = new MemoryGcraLimiter(60, 120);
    const ds = stream(l, 'k', t0, 61, 61 * 200);
    const first = ds.findIndex((d) => !d.allowed);
    expect(first + 1).toBe(7261);
    expect(Math.floor((first * 1000) / 61 / 1000)).toBe(119); // seconds into the stream
    expect(ds[first]!.retryAfterSeconds).toBe(1);
    // The backlog after n requests is (n + 60) / 61 intervals, so after one minute (n = 3660)
    // 120 - 60.98 leaves 59.
    expect(ds[61 * 60 - 1]!.remaining).toBe(59);
    // Once limited: in each following full second exactly 60 of the 61 requests pass.
    for (let sec = 120; sec < 200; sec++) {
      const window = ds.slice(sec * 61, sec * 61 + 61);
      expect(window.filter((d) => d.allowed), `second ${sec}`).toHaveLength(60);
    }
  });

  it('60/s exactly, sustained after a full burst: every request passes with nothing to spare', () => {
    const l = new MemoryGcraLimiter(60, 120);
    burst(l, 'k', t0, 120);
    const ds = stream(l, 'k', t0 + 1000 / 60, 60, 60 * 300);
    expect(ds.filter((d) => !d.allowed)).toHaveLength(0);
    expect(new Set(ds.map((d) => d.remaining))).toEqual(new Set([0]));
    // ...and one request more at the same instant as the last is refused.
    expect(l.decide('k', t0 + (60 * 300 * 1000) / 60, true).allowed).toBe(false);
  });

  it('peek reports without consuming', () => {
    const l = new MemoryGcraLimiter(60, 120);
    expect(l.decide('k', t0, false)).toEqual({ allowed: true, limit: 120, remaining: 120, resetSeconds: 0, retryAfterSeconds: 0 });
    for (let i = 0; i < 500; i++) l.decide('k', t0, false);
    expect(burst(l, 'k', t0, 121).filter((d) => d.allowed)).toHaveLength(120);
    expect(l.decide('k', t0, false)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    // peek counts what could be taken now (1); consume counts what is left after taking (0).
    expect(l.decide('k', t0 + 17, false)).toMatchObject({ allowed: true, remaining: 1 });
    expect(l.decide('k', t0 + 17, true)).toMatchObject({ allowed: true, remaining: 0 }); // the peek left it there to take
  });

  it('keys are independent', () => {
    const l = new MemoryGcraLimiter(60, 120);
    burst(l, 'a', t0, 120);
    expect(l.decide('a', t0, true).allowed).toBe(false);
    expect(l.decide('b', t0, true)).toMatchObject({ allowed: true, remaining: 119 });
    expect(burst(l, 'c', t0, 121).filter((d) => d.allowed)).toHaveLength(120);
  });

  it('rate and burst are configurable', () => {
    const l = new MemoryGcraLimiter(10, 20);
    const ds = burst(l, 'k', t0, 21);
    expect(ds.filter((d) => d.allowed)).toHaveLength(20);
    expect(ds[19]).toMatchObject({ remaining: 0, resetSeconds: 2 });
    expect(ds[20]).toEqual({ allowed: false, limit: 20, remaining: 0, resetSeconds: 2, retryAfterSeconds: 1 });
    expect(burst(l, 'k', t0 + 1000, 11).filter((d) => d.allowed)).toHaveLength(10);

    const strict = new MemoryGcraLimiter(1, 1);
    expect(strict.decide('k', t0, true).allowed).toBe(true);
    expect(strict.decide('k', t0 + 999, true)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect(strict.decide('k', t0 + 1000, true).allowed).toBe(true);
  });

  it('Retry-After rounds the wait up to whole seconds', () => {
    // one request per 2.5 s
    const l = new MemoryGcraLimiter(0.4, 1);
    expect(l.decide('k', t0, true).allowed).toBe(true);
    expect(l.decide('k', t0, true)).toMatchObject({ allowed: false, retryAfterSeconds: 3, resetSeconds: 3 });
    expect(l.decide('k', t0 + 1500, true)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect(l.decide('k', t0 + 2499, true)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect(l.decide('k', t0 + 2500, true).allowed).toBe(true);
  });

  it('a key idle long enough is fresh again (and survives the periodic sweep)', () => {
    const l = new MemoryGcraLimiter(60, 120);
    burst(l, 'k', t0, 120);
    burst(l, 'other', t0 + 60_000, 5); // triggers the sweep, which drops 'k'
    expect(burst(l, 'k', t0 + 60_000, 121).filter((d) => d.allowed)).toHaveLength(120);
  });
});

describe('async interface', () => {
  it('consume and peek give the same decisions as decide', async () => {
    const l = new MemoryGcraLimiter(60, 120);
    const t0 = Date.UTC(2026, 2, 28, 12);
    expect(await l.peek('k', t0)).toMatchObject({ allowed: true, remaining: 120 });
    for (let i = 0; i < 119; i++) await l.consume('k', t0);
    expect(await l.consume('k', t0)).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 2 });
    expect(await l.consume('k', t0)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect(await l.peek('k', t0)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
  });

  it('defaults to the wall clock', async () => {
    const l = new MemoryGcraLimiter(60, 120);
    expect(await l.consume('k')).toMatchObject({ allowed: true, remaining: 119 });
    expect(await l.peek('k')).toMatchObject({ allowed: true });
  });
});

describe('rate-limit headers (draft-ietf-httpapi-ratelimit-headers)', () => {
  it('RateLimit-Policy names the quota (the burst) and its window in seconds', () => {
    expect(policyHeader('key', new MemoryGcraLimiter(60, 120))).toBe('"key";q=120;w=2');
    expect(policyHeader('key', new MemoryGcraLimiter(10, 20))).toBe('"key";q=20;w=2');
    expect(policyHeader('ip', new MemoryGcraLimiter(10, 5))).toBe('"ip";q=5;w=1');
  });

  it('RateLimit carries what is left and when the bucket is full again', () => {
    const l = new MemoryGcraLimiter(60, 120);
    const t0 = Date.UTC(2026, 2, 28, 12);
    expect(stateHeader('key', l.decide('k', t0, true))).toBe('"key";r=119;t=1');
    const last = burst(l, 'k', t0, 119).at(-1)!;
    expect(stateHeader('key', last)).toBe('"key";r=0;t=2');
    expect(stateHeader('key', l.decide('k', t0, true))).toBe('"key";r=0;t=2');
  });
});
