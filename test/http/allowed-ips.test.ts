// Address restrictions (docs/api.md, "Address restrictions"): a key restricted to addresses and CIDR
// ranges answers 403 ip_not_allowed, naming the address the service saw, to any other address;
// the address is the socket's unless TRUST_PROXY says which proxy hops to trust
// (X-Forwarded-For is ignored by default). A refused address spends its own failed-authentication
// budget, never the key's rate limit. Both databases, two clinics.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { todayIn } from '../../src/time.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { call, expectError, ME_PATH, tick } from './helpers.js';

const RULES = ['203.0.113.0/24', '2001:db8::/32'];

/** r of the key's RateLimit header: what is left of its budget. */
const left = (res: { headers: Record<string, unknown> }) => Number(/;r=(\d+)/.exec(String(res.headers['ratelimit']))?.[1]);

describe.each(dialects())('address restrictions on %s', (dialect) => {
  let direct: TestApp;
  let proxied: TestApp;
  let key: string;
  let proxiedKey: string;
  let keyB: string;

  beforeAll(async () => {
    direct = await buildTestApp(dialect);
    proxied = await buildTestApp(dialect, { env: { TRUST_PROXY: '1' } });
    const restricted = { name: 'office only', expiresAt: null, createdBy: null, allowedIps: RULES };
    key = (await direct.keys.create({ clinicId: direct.clinicA.id, ...restricted })).key;
    proxiedKey = (await proxied.keys.create({ clinicId: proxied.clinicA.id, ...restricted })).key;
    keyB = (await direct.keys.create({ clinicId: direct.clinicB.id, ...restricted, allowedIps: ['198.51.100.7'] })).key;
  });
  afterAll(async () => {
    await direct?.close();
    await proxied?.close();
  });
  beforeEach(() => {
    tick(direct);
    tick(proxied);
  });

  it.each(['203.0.113.5', '203.0.113.255', '2001:db8::7', '2001:DB8:0:0:0:0:0:1', '::ffff:203.0.113.9'])(
    'a request from %s, within the rules, is answered',
    async (from) => {
      expect((await call(direct, ME_PATH, { key, remoteAddress: from })).statusCode).toBe(200);
      expect((await call(direct, '/api/v1/citas', { key, remoteAddress: from })).statusCode).toBe(200);
    },
  );

  it.each(['198.51.100.7', '203.0.114.1', '2001:db9::1', '::1', '127.0.0.1'])(
    "a request from %s is 403 ip_not_allowed naming that address, without touching the key's budget",
    async (from) => {
      const res = await call(direct, '/api/v1/citas', { key, remoteAddress: from });
      const err = expectError(res, 403, 'ip_not_allowed');
      expect(err.message).toContain(from);
      // nothing of the key's policy or data: no RateLimit fields, no ETag, no challenge
      expect(res.headers['ratelimit']).toBeUndefined();
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(res.headers.etag).toBeUndefined();
    },
  );

  it('without TRUST_PROXY, X-Forwarded-For is ignored: the socket address decides, and is the one named', async () => {
    const res = await call(direct, ME_PATH, { key, remoteAddress: '198.51.100.7', headers: { 'x-forwarded-for': '203.0.113.5' } });
    expect(expectError(res, 403, 'ip_not_allowed').message).toContain('198.51.100.7');
    expect(res.body).not.toContain('203.0.113.5');
    const ok = await call(direct, ME_PATH, { key, remoteAddress: '203.0.113.5', headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect(ok.statusCode).toBe(200);
  });

  it('with TRUST_PROXY=1, the address the proxy saw (the last X-Forwarded-For hop) decides', async () => {
    const via = (xff: string) =>
      call(proxied, ME_PATH, { key: proxiedKey, remoteAddress: '10.0.0.2', headers: { 'x-forwarded-for': xff } });
    expect((await via('203.0.113.5')).statusCode).toBe(200);
    const refused = await via('198.51.100.9');
    expect(expectError(refused, 403, 'ip_not_allowed').message).toContain('198.51.100.9');
    // a client cannot pass by writing an allowed address in front of its own
    const spoofed = await via('203.0.113.5, 198.51.100.9');
    expect(expectError(spoofed, 403, 'ip_not_allowed').message).toContain('198.51.100.9');
    // without the header, the proxy's own address is the client's
    expect(
      expectError(await call(proxied, ME_PATH, { key: proxiedKey, remoteAddress: '10.0.0.2' }), 403, 'ip_not_allowed').message,
    ).toContain('10.0.0.2');
  });

  it("refused requests spend the address's failed-authentication budget, never the key's: the real integration keeps working", async () => {
    const before = left(await call(direct, ME_PATH, { key, remoteAddress: '203.0.113.5' }));
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await call(direct, ME_PATH, { key, remoteAddress: '198.51.100.77' })).statusCode);
    // the address's burst (AUTH_FAIL_BURST, 20), then 429 for it
    expect(statuses.slice(0, 20).every((s) => s === 403)).toBe(true);
    expect(statuses[20]).toBe(429);
    // the key's budget lost only the one request made from the allowed address since
    const after = await call(direct, ME_PATH, { key, remoteAddress: '203.0.113.5' });
    expect(after.statusCode).toBe(200);
    expect(left(after)).toBe(before - 1);
    // the clinic sees the refusals among the key's errors on the dashboard
    const today = todayIn(direct.clinicA.timezone, direct.clock.now);
    const usage = await direct.rt.usage.summary(direct.clinicA.id, [today]);
    const id = (await direct.keys.list(direct.clinicA.id)).find((k) => k.name === 'office only')!.id;
    expect(usage.get(id)!.lastErrors.map((e) => [e.status, e.code])).toContainEqual([403, 'ip_not_allowed']);
  });

  it("a key without restrictions is answered from any address; each clinic's key has its own rules", async () => {
    for (const from of ['198.51.100.7', '2001:db9::1']) expect((await call(direct, ME_PATH, { remoteAddress: from })).statusCode).toBe(200);
    expect((await call(direct, ME_PATH, { key: keyB, remoteAddress: '198.51.100.7' })).statusCode).toBe(200);
    expectError(await call(direct, ME_PATH, { key: keyB, remoteAddress: '203.0.113.5' }), 403, 'ip_not_allowed');
  });
});
