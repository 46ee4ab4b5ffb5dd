// Rate limits: per key 60/s sustained with bursts of 120, IETF RateLimit headers on
// every authenticated response, and failed authentications limited per client IP (10/s, burst 20).
// The clock is fixed, so "at one instant" is exact; each test builds its own app (fresh buckets).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { call, expectError, PATHS, tick } from './helpers.js';

const POLICY = '"key";q=120;w=2';
const STATE_RE = /^"key";r=(\d+);t=(\d+)$/;

describe.each(dialects())('rate limits on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp(dialect);
  });
  afterEach(async () => {
    await t.close();
  });

  /** Sends `n` requests with `key` at the current instant; returns their status codes. */
  async function burst(n: number, key: string, remoteAddress?: string) {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) statuses.push((await call(t, '/api/v1/clientas?limit=1', { key, remoteAddress })).statusCode);
    return statuses;
  }

  it('puts RateLimit-Policy and RateLimit on every authenticated response, counting down', async () => {
    const responses = [
      await call(t, '/api/v1/citas'),
      await call(t, '/api/v1/clientas'),
      await call(t, '/api/v1/llamadas'),
      await call(t, '/api/v1/citas?limit=0'),
      await call(t, '/api/v1/llamadas', { method: 'HEAD' }),
    ];
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200, 400, 200]);
    expect(responses.map((r) => r.headers['ratelimit-policy'])).toEqual(Array(5).fill(POLICY));
    // a full bucket of 120: after the first request 119 more could be made right now
    expect(responses.map((r) => r.headers['ratelimit'])).toEqual([
      '"key";r=119;t=1',
      '"key";r=118;t=1',
      '"key";r=117;t=1',
      '"key";r=116;t=1',
      '"key";r=115;t=1',
    ]);
    // a second later 60 have been earned back (capped at the burst)
    tick(t, 1_000);
    expect((await call(t, '/api/v1/citas')).headers['ratelimit']).toBe('"key";r=119;t=1');
  });

  it('lets a burst of 120 through at one instant, then answers 429 with Retry-After and the headers', async () => {
    const statuses = await burst(120, t.keyA);
    expect(statuses.filter((s) => s === 200)).toHaveLength(120);

    const res = await call(t, '/api/v1/citas');
    const err = expectError(res, 429, 'too_many_requests');
    const retryAfter = res.headers['retry-after'];
    expect(retryAfter).toMatch(/^[1-9]\d*$/);
    // the next slot frees 1/60 s later: rounded up to whole seconds
    expect(Number(retryAfter)).toBe(1);
    expect(err.message).toContain('1 second');
    expect(err.message).toMatch(/^Too many requests with this API key/);
    expect(res.headers['ratelimit-policy']).toBe(POLICY);
    const m = STATE_RE.exec(String(res.headers['ratelimit']));
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBe(0);
    expect(Number(m![2])).toBe(2);
  });

  it('counts per key: exhausting A leaves B untouched', async () => {
    await burst(120, t.keyA);
    expect((await call(t, '/api/v1/citas')).statusCode).toBe(429);
    const b = await call(t, '/api/v1/citas', { key: t.keyB });
    expect(b.statusCode).toBe(200);
    expect(b.headers['ratelimit']).toBe('"key";r=119;t=1');
    expect(await burst(119, t.keyB)).toEqual(Array(119).fill(200));
    expect((await call(t, '/api/v1/citas', { key: t.keyB })).statusCode).toBe(429);
  });

  it('earns back 60 requests per second, and refused requests cost nothing', async () => {
    await burst(120, t.keyA);
    // hammering while limited does not push the recovery further away
    expect(await burst(10, t.keyA)).toEqual(Array(10).fill(429));
    tick(t, 1_000);
    const statuses = await burst(61, t.keyA);
    expect(statuses.slice(0, 60)).toEqual(Array(60).fill(200));
    expect(statuses[60]).toBe(429);
  });

  it('serves again after waiting Retry-After seconds', async () => {
    await burst(120, t.keyA);
    const limited = await call(t, '/api/v1/llamadas');
    expect(limited.statusCode).toBe(429);
    tick(t, Number(limited.headers['retry-after']) * 1000);
    expect((await call(t, '/api/v1/llamadas')).statusCode).toBe(200);
  });

  it('limits failed authentications per IP: after 20, even a valid key from that IP gets 429', async () => {
    const attacker = '203.0.113.7';
    for (let i = 0; i < 20; i++) {
      const res = await call(t, '/api/v1/citas', { key: `svc_guess${String(i).padStart(20, '0')}`, remoteAddress: attacker });
      expect(res.statusCode, `guess ${i}`).toBe(401);
    }
    for (const key of [t.keyA, 'svc_guess_another_one_xx', null]) {
      const res = await call(t, '/api/v1/citas', { key, remoteAddress: attacker });
      // The answer says why: the address's failed authentications, not the key's own budget.
      expect(expectError(res, 429, 'too_many_requests').message).toMatch(
        /^Too many requests without a valid API key from this address .*; retry after \d+ second\(s\)/,
      );
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
    }
    // another address is judged on its own
    const other = '198.51.100.20';
    expectError(await call(t, '/api/v1/citas', { key: 'svc_guess_from_elsewhere', remoteAddress: other }), 401, 'invalid_api_key');
    expect((await call(t, '/api/v1/citas', { key: t.keyA, remoteAddress: other })).statusCode).toBe(200);
    expect((await call(t, '/api/v1/citas', { key: t.keyA })).statusCode).toBe(200);
    // the attacker's address recovers at 10 per second
    tick(t, 1_000);
    expect((await call(t, '/api/v1/citas', { key: t.keyA, remoteAddress: attacker })).statusCode).toBe(200);
  });

  it('a throttled address is checked against no new key, but a key in use on this instance keeps working', async () => {
    const shared = '203.0.113.99';
    // The integration behind the shared address has just been verified (it is in the key cache) ...
    expect((await call(t, '/api/v1/citas', { key: t.keyB, remoteAddress: shared })).statusCode).toBe(200);
    // ... when a broken neighbour behind the same address burns the failure budget.
    for (let i = 0; i < 20; i++) {
      expectError(
        await call(t, '/api/v1/citas', { key: `svc_broken${String(i).padStart(20, '0')}`, remoteAddress: shared }),
        401,
        'invalid_api_key',
      );
    }
    expect((await call(t, '/api/v1/citas', { key: t.keyB, remoteAddress: shared })).statusCode).toBe(200);
    // A key not verified recently is not looked up for that address until it recovers.
    expectError(await call(t, '/api/v1/citas', { key: t.keyA, remoteAddress: shared }), 429, 'too_many_requests');
    expectError(await call(t, '/api/v1/citas', { key: 'svc_broken_again_xxxxxxxx', remoteAddress: shared }), 429, 'too_many_requests');
  });

  it('counts missing keys as failed authentications too', async () => {
    const ip = '192.0.2.55';
    for (const path of [...PATHS, ...PATHS, ...PATHS, ...PATHS, ...PATHS, ...PATHS, PATHS[0], PATHS[1]]) {
      expectError(await call(t, path, { key: null, remoteAddress: ip }), 401, 'missing_api_key');
    }
    expectError(await call(t, '/api/v1/clientas', { key: null, remoteAddress: ip }), 429, 'too_many_requests');
  });

  it('does not count successful requests as failures', async () => {
    const ip = '192.0.2.66';
    expect(await burst(40, t.keyA, ip)).toEqual(Array(40).fill(200));
    expectError(await call(t, '/api/v1/citas', { key: 'svc_wrongwrongwrong', remoteAddress: ip }), 401, 'invalid_api_key');
  });
});
