// Authentication: Bearer only, one answer for every bad key, revocation and expiry
// at once, auth before anything else, and a key reads its own clinic only.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { appFor, buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { anotherInstance } from '../helpers/runtime.js';
import { ALL_PATHS, call, expectError, ok, tick } from './helpers.js';

const WWW_AUTHENTICATE = 'Bearer realm="api"';
const FIXED_ID = 'auth-test-1';

describe.each(dialects())('authentication on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  const withAuth = (path: string, authorization: string) =>
    call(t, path, { key: null, headers: { authorization, 'x-request-id': FIXED_ID } });

  it.each(ALL_PATHS)('%s without Authorization is 401 missing_api_key with WWW-Authenticate', async (path) => {
    const res = await call(t, path, { key: null });
    const err = expectError(res, 401, 'missing_api_key');
    expect(err.message).toContain('Authorization: Bearer');
    expect(res.headers['www-authenticate']).toBe(WWW_AUTHENTICATE);
    expect(res.headers['ratelimit']).toBeUndefined();
  });

  it('answers every kind of bad key with the same 401 invalid_api_key, byte for byte', async () => {
    const revoked = await t.keys.create({ clinicId: t.clinicA.id, name: 'revoked', expiresAt: null, createdBy: null });
    await t.keys.revoke(t.clinicA.id, revoked.id);
    const expired = await t.keys.create({
      clinicId: t.clinicA.id,
      name: 'expired',
      expiresAt: Math.floor(t.clock.now / 1000) - 1,
      createdBy: null,
    });
    const headers = [
      `Basic ${Buffer.from('user:pass').toString('base64')}`,
      'Bearer',
      'Bearer ',
      `Token ${t.keyA}`,
      t.keyA,
      `Bearer ${t.keyA} extra`,
      `Bearer ${t.keyA}x`,
      'Bearer svc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      'Bearer not a key',
      'Bearer svc_<script>',
      `Bearer ${revoked.key}`,
      `Bearer ${expired.key}`,
    ];
    const bodies = new Set<string>();
    for (const h of headers) {
      const res = await withAuth('/api/v1/citas', h);
      expectError(res, 401, 'invalid_api_key');
      expect(res.headers['www-authenticate'], h).toBe(WWW_AUTHENTICATE);
      expect(res.headers['x-request-id']).toBe(FIXED_ID);
      bodies.add(res.body);
    }
    expect(bodies.size).toBe(1);
    // and no different from a bad key on another endpoint
    expect((await withAuth('/api/v1/llamadas', 'Bearer svc_nope_nope_nope')).body).toBe([...bodies][0]);
  });

  it('takes the scheme word in any case', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const res = await call(t, '/api/v1/clientas', { key: null, headers: { authorization: `${scheme} ${t.keyA}` } });
      expect(res.statusCode, scheme).toBe(200);
      expect(res.json().total).toBe(5);
    }
  });

  it('never takes a key from the query string', async () => {
    const res = await call(t, `/api/v1/citas?api_key=${t.keyA}`, { key: null });
    expectError(res, 401, 'missing_api_key');
  });

  it.each(ALL_PATHS)('%s checks the key before the parameters', async (path) => {
    expectError(await call(t, `${path}?limit=abc&foo=1`, { key: null }), 401, 'missing_api_key');
    expectError(await call(t, `${path}?limit=abc&foo=1`, { key: 'svc_unknownunknownunknown' }), 401, 'invalid_api_key');
    expectError(await call(t, `${path}?limit=abc`, { key: t.keyA }), 400, 'invalid_parameter', 'limit');
  });

  it('a revoked key stops working at once on this instance', async () => {
    const k = await t.keys.create({ clinicId: t.clinicA.id, name: 'to revoke', expiresAt: null, createdBy: null });
    expect((await call(t, '/api/v1/citas', { key: k.key })).statusCode).toBe(200);
    expect(await t.keys.revoke(t.clinicA.id, k.id)).toBe(true);
    // same instant: the cached verification must not outlive the revocation
    const res = await call(t, '/api/v1/citas', { key: k.key });
    expectError(res, 401, 'invalid_api_key');
    expect(res.headers['www-authenticate']).toBe(WWW_AUTHENTICATE);
    // the other keys are unaffected
    expect((await call(t, '/api/v1/citas')).statusCode).toBe(200);
  });

  it('a key stops working when it expires', async () => {
    const nowS = Math.floor(t.clock.now / 1000);
    const k = await t.keys.create({ clinicId: t.clinicA.id, name: 'short-lived', expiresAt: nowS + 60, createdBy: null });
    expect((await call(t, '/api/v1/llamadas', { key: k.key })).statusCode).toBe(200);
    tick(t, 59_000);
    expect((await call(t, '/api/v1/llamadas', { key: k.key })).statusCode).toBe(200);
    tick(t, 2_000);
    expectError(await call(t, '/api/v1/llamadas', { key: k.key }), 401, 'invalid_api_key');
    expect((await call(t, '/api/v1/llamadas')).statusCode).toBe(200);
  });

  it("a key of clinic B only ever sees clinic B's data", async () => {
    const citas = await ok(t, '/api/v1/citas?desde=2020-01-01&hasta=2030-12-31', { key: t.keyB });
    const clientas = await ok(t, '/api/v1/clientas', { key: t.keyB });
    const llamadas = await ok(t, '/api/v1/llamadas?desde=2020-01-01', { key: t.keyB });
    expect([citas.total, clientas.total, llamadas.total]).toEqual([2, 1, 1]);
    const all = [...citas.citas, ...clientas.clientas, ...llamadas.llamadas] as { id: string }[];
    expect(all.map((r) => r.id.slice(0, 2))).toEqual(['0b', '0b', '0b', '0b']);
    // A key created later for B reads the same
    const k = await t.keys.create({ clinicId: t.clinicB.id, name: 'B2', expiresAt: null, createdBy: null });
    expect((await ok(t, '/api/v1/clientas', { key: k.key })).clientas.map((c: { nombre: string }) => c.nombre)).toEqual([
      'María Fernández',
    ]);
  });

  it('records last_used_at when a key is used, without writing on every request', async () => {
    const k = await t.keys.create({ clinicId: t.clinicA.id, name: 'usage', expiresAt: null, createdBy: null });
    expect((await t.keys.get(t.clinicA.id, k.id))?.last_used_at).toBeNull();
    const first = Math.floor(t.clock.now / 1000);
    expect((await call(t, '/api/v1/citas', { key: k.key })).statusCode).toBe(200);
    await vi.waitFor(async () => expect(Number((await t.keys.get(t.clinicA.id, k.id))?.last_used_at)).toBe(first));
    tick(t, 61_000);
    expect((await call(t, '/api/v1/citas', { key: k.key })).statusCode).toBe(200);
    await vi.waitFor(async () => expect(Number((await t.keys.get(t.clinicA.id, k.id))?.last_used_at)).toBe(first + 61));
  });

  it('a revocation reaches another instance on the same database within 5 seconds', async () => {
    // A second instance: its own key cache and limiters, the same database and clock.
    const rt2 = anotherInstance(t.rt);
    const app2 = await appFor(rt2);
    try {
      const k = await t.keys.create({ clinicId: t.clinicA.id, name: 'shared', expiresAt: null, createdBy: null });
      const viaApp2 = () => app2.inject({ url: '/api/v1/clientas?limit=1', headers: { authorization: `Bearer ${k.key}` } });
      expect((await viaApp2()).statusCode).toBe(200);
      expect(await t.keys.revoke(t.clinicA.id, k.id)).toBe(true);
      expectError(await call(t, '/api/v1/clientas?limit=1', { key: k.key }), 401, 'invalid_api_key');
      tick(t, 5_000);
      expectError(await viaApp2(), 401, 'invalid_api_key');
    } finally {
      await app2.close();
      await rt2.close();
    }
  });
});
