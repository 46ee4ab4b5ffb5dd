// GET /api/v1/me: the key's clinic, the key and its rate limit, for each of two clinics; the
// same authentication, limits, strict validation, usage counts and error shape as the lists;
// and answered from what authentication already holds (it keeps working with the database
// gone, for a key verified a moment before).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { call, expectError, JSON_UTF8, ME_PATH, ok, tick, UUID_RE } from './helpers.js';

describe.each(dialects())('GET /api/v1/me on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  const keyIdOf = async (clinicId: string, name: string) => (await t.keys.list(clinicId)).find((k) => k.name === name)!.id;

  it("answers each clinic's key with its own clinic, the key and the rate limit; never the other clinic", async () => {
    const a = await ok(t, ME_PATH, { key: t.keyA });
    const b = await ok(t, ME_PATH, { key: t.keyB });
    expect(a).toEqual({
      clinica: { id: t.clinicA.id, nombre: 'Clínica Uno', zona_horaria: 'Europe/Madrid', moneda: 'EUR' },
      // created at the fixture's instant, 2026-03-28 12:00 UTC: in Madrid still winter time
      api_key: {
        id: await keyIdOf(t.clinicA.id, 'A'),
        nombre: 'A',
        created_at: '2026-03-28T13:00:00+01:00',
        expires_at: null,
        scopes: ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read'],
      },
      rate_limit: { rps: 60, burst: 120 },
      modo: 'live',
    });
    expect(b).toEqual({
      clinica: { id: t.clinicB.id, nombre: 'Clínica Dos', zona_horaria: 'America/Mexico_City', moneda: 'MXN' },
      api_key: {
        id: await keyIdOf(t.clinicB.id, 'B'),
        nombre: 'B',
        created_at: '2026-03-28T06:00:00-06:00',
        expires_at: null,
        scopes: ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read'],
      },
      rate_limit: { rps: 60, burst: 120 },
      modo: 'live',
    });
    expect(JSON.stringify(a)).not.toContain(t.clinicB.id);
    expect(JSON.stringify(b)).not.toContain(t.clinicA.id);
    // the key itself (or its hash) never appears
    expect(JSON.stringify(a)).not.toContain(t.keyA);
  });

  it("writes expires_at with the clinic's offset at that instant (across the DST change)", async () => {
    const nowS = Math.floor(t.clock.now / 1000);
    // 2026-03-30 12:00 UTC: Madrid is on summer time since the 29th
    const expiresAt = Date.UTC(2026, 2, 30, 12) / 1000;
    const k = await t.keys.create({ clinicId: t.clinicA.id, name: 'Zapier', expiresAt, createdBy: null });
    const me = await ok(t, ME_PATH, { key: k.key });
    expect(me.api_key).toEqual({
      id: k.id,
      nombre: 'Zapier',
      created_at: formatMadrid(nowS),
      expires_at: formatMadrid(expiresAt),
      scopes: ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read'],
    });
    expect(me.api_key.created_at).toMatch(/\+01:00$/);
    expect(me.api_key.expires_at).toBe('2026-03-30T14:00:00+02:00');
  });

  const formatMadrid = (s: number) => {
    // independent of src/time.ts: Intl's own offset for Europe/Madrid
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat('en-GB', {
        timeZone: 'Europe/Madrid',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
        hourCycle: 'h23',
        timeZoneName: 'longOffset',
      })
        .formatToParts(new Date(s * 1000))
        .map((p) => [p.type, p.value]),
    );
    const offset = String(parts.timeZoneName).replace('GMT', '');
    return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
  };

  it('carries the headers of every API response, the rate-limit fields included', async () => {
    const res = await call(t, ME_PATH);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(JSON_UTF8);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-request-id']).toMatch(UUID_RE);
    expect(res.headers['ratelimit-policy']).toBe('"key";q=120;w=2');
    expect(res.headers['ratelimit']).toMatch(/^"key";r=\d+;t=\d+$/);
  });

  it('takes no parameters: any is 400 unknown_parameter naming it', async () => {
    for (const [query, param] of [
      ['foo=1', 'foo'],
      ['limit=10', 'limit'],
      ['api_key=x', 'api_key'],
      ['a=1&a=2', 'a'],
      ['desde=2026-03-01', 'desde'],
    ] as const) {
      const err = expectError(await call(t, `${ME_PATH}?${query}`), 400, 'unknown_parameter', param);
      expect(err.message).toContain('allowed: none');
    }
    // an empty query string is no parameter
    expect((await call(t, `${ME_PATH}?`)).statusCode).toBe(200);
  });

  it('needs a valid key, checked before the parameters, with WWW-Authenticate', async () => {
    for (const url of [ME_PATH, `${ME_PATH}?foo=1`]) {
      const missing = await call(t, url, { key: null });
      expectError(missing, 401, 'missing_api_key');
      expect(missing.headers['www-authenticate']).toBe('Bearer realm="api"');
      expectError(await call(t, url, { key: 'svc_unknownunknownunknown' }), 401, 'invalid_api_key');
    }
    const k = await t.keys.create({ clinicId: t.clinicB.id, name: 'short', expiresAt: null, createdBy: null });
    expect((await call(t, ME_PATH, { key: k.key })).statusCode).toBe(200);
    await t.keys.revoke(t.clinicB.id, k.id);
    expectError(await call(t, ME_PATH, { key: k.key }), 401, 'invalid_api_key');
  });

  it('is GET and HEAD only', async () => {
    const head = await call(t, ME_PATH, { method: 'HEAD' });
    expect([head.statusCode, head.body]).toEqual([200, '']);
    for (const method of ['POST', 'DELETE', 'OPTIONS'] as const) {
      const res = await call(t, ME_PATH, { method });
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers['allow']).toBe('GET, HEAD');
    }
  });

  it("counts in the key's usage like any request", async () => {
    const k = await t.keys.create({ clinicId: t.clinicA.id, name: 'counted', expiresAt: null, createdBy: null });
    for (let i = 0; i < 3; i++) await ok(t, ME_PATH, { key: k.key });
    expectError(await call(t, `${ME_PATH}?x=1`, { key: k.key }), 400, 'unknown_parameter', 'x');
    await t.app.usage.flush();
    const rows = await t.database.db.selectFrom('api_key_usage').selectAll().where('key_id', '=', k.id).orderBy('status_class').execute();
    expect(rows.map((r) => [r.status_class, r.error_code, Number(r.n)])).toEqual([
      ['2xx', '', 3],
      ['4xx', 'unknown_parameter', 1],
    ]);
  });
});

describe.each(dialects())('GET /api/v1/me, limits and faults on %s', (dialect) => {
  it("spends the key's rate limit, shared with the lists, and reports the configured policy", async () => {
    const t = await buildTestApp(dialect, { env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '3' } });
    try {
      expect((await ok(t, ME_PATH)).rate_limit).toEqual({ rps: 1, burst: 3 });
      expect((await call(t, '/api/v1/citas')).statusCode).toBe(200);
      expect((await call(t, ME_PATH)).statusCode).toBe(200);
      const limited = await call(t, ME_PATH);
      expectError(limited, 429, 'too_many_requests');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // another clinic's key has its own bucket
      expect((await call(t, ME_PATH, { key: t.keyB })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('is answered from what authentication holds: no database work of its own', async () => {
    const t = await buildTestApp(dialect);
    try {
      const before = await ok(t, ME_PATH);
      // a key verified this instant is cached; the database goes away
      await t.database.close();
      expect(await ok(t, ME_PATH)).toEqual(before);
      // the lists do need the database, and a key not yet verified needs it to authenticate
      expectError(await call(t, '/api/v1/citas'), 500, 'database_error');
      expectError(await call(t, ME_PATH, { key: t.keyB }), 500, 'database_error');
    } finally {
      await t.close();
    }
  });
});
