// The request log and the client access record through the API (docs/operations.md, "The request
// log"): every response to a known key recorded with its fields, secrets masked wherever they
// were pasted, the clientas each response disclosed (lists, a page sent again from the cache,
// CSV, single records, the feed), none for a 304 or an error, nothing for a request without a
// known key, a 404 for an unknown path under /api/v1/ and a 405 recorded when a known key made
// them, and no clinic's entries readable with another clinic's id. Both databases.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { accessOfEntry, accessPage, logPage, type StoredRequestLogRow } from '../../src/repos/request-log.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A, B, FIXTURE_NOW_MS } from '../helpers/fixtures.js';
import { untilRead } from '../helpers/wait.js';
import { call, citaA, expectError, llamadaA, ok, tick } from './helpers.js';

describe.each(dialects())('request log on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '1000000' } });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    t.clock.now = Math.max(t.clock.now, FIXTURE_NOW_MS);
    tick(t);
  });

  /** Writes what was collected, then the clinic's entries with this request id. */
  async function entryOf(requestId: string, clinicId = t.clinicA.id): Promise<StoredRequestLogRow> {
    await t.rt.requestLog!.flush();
    const rows = await logPage(t.database.db, clinicId, {}, null, 1000);
    const row = rows.find((r) => r.request_id === requestId);
    if (!row) throw new Error(`no log entry for ${requestId}`);
    return row;
  }

  it('a list: every field recorded, and the clientas of the page in the access record; the page sent again from the cache discloses the same', async () => {
    const url = '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31&limit=500';
    const first = await call(t, url, { headers: { 'user-agent': 'zapier/1.0' } });
    expect(first.statusCode).toBe(200);
    const again = await call(t, url);
    expect(again.statusCode).toBe(200);
    const count = (first.json() as { citas: unknown[] }).citas.length;
    for (const res of [first, again]) {
      const e = await entryOf(res.headers['x-request-id'] as string);
      expect(e).toMatchObject({
        clinic_id: t.clinicA.id,
        method: 'GET',
        path: '/api/v1/citas',
        query: 'desde=2026-01-01&hasta=2026-12-31&limit=500',
        status: 200,
        error_code: null,
        records: count,
        grant_id: null,
        error_body: null,
      });
      expect(e.key_id).toBeTruthy();
      expect(e.at_ms).toBe(t.clock.now);
      expect(e.duration_ms).toBeGreaterThanOrEqual(0);
      expect(e.client_ip).toBe('127.0.0.1');
      const clientas = await accessOfEntry(t.database.db, t.clinicA.id, e.id);
      // Every cita of clinic A in the year belongs to one of these; María has several.
      expect(clientas).toContain(A.maria);
      expect(clientas.every((id) => id.startsWith('0a'))).toBe(true);
    }
    expect((await entryOf(first.headers['x-request-id'] as string)).user_agent).toBe('zapier/1.0');
  });

  it('CSV, a single record and the feed disclose their clientas; a 304 and /me disclose none', async () => {
    const csv = await call(t, '/api/v1/clientas?limit=2', { headers: { accept: 'text/csv' } });
    expect(csv.statusCode).toBe(200);
    const csvEntry = await entryOf(csv.headers['x-request-id'] as string);
    expect(csvEntry.records).toBe(2);
    expect(await accessOfEntry(t.database.db, t.clinicA.id, csvEntry.id)).toHaveLength(2);

    const one = await call(t, `/api/v1/citas/${citaA(2)}`);
    expect(one.statusCode).toBe(200);
    const oneEntry = await entryOf(one.headers['x-request-id'] as string);
    expect(oneEntry.records).toBe(1);
    expect(await accessOfEntry(t.database.db, t.clinicA.id, oneEntry.id)).toEqual([A.maria]);

    const notModified = await call(t, `/api/v1/citas/${citaA(2)}`, { headers: { 'if-none-match': one.headers.etag as string } });
    expect(notModified.statusCode).toBe(304);
    const nmEntry = await entryOf(notModified.headers['x-request-id'] as string);
    expect(nmEntry).toMatchObject({ status: 304, records: null });
    expect(await accessOfEntry(t.database.db, t.clinicA.id, nmEntry.id)).toEqual([]);

    const call1 = await call(t, `/api/v1/llamadas/${llamadaA(1)}`);
    const callEntry = await entryOf(call1.headers['x-request-id'] as string);
    const linked = (await t.database.db.selectFrom('llamadas').select('clienta_id').where('id', '=', llamadaA(1)).executeTakeFirstOrThrow())
      .clienta_id;
    expect(await accessOfEntry(t.database.db, t.clinicA.id, callEntry.id)).toEqual(linked === null ? [] : [linked]);

    const feed = await ok<{ eventos: { tipo: string; datos: { id: string } }[] }>(t, '/api/v1/eventos?limit=500');
    const feedRes = await call(t, '/api/v1/eventos?limit=500');
    const feedEntry = await entryOf(feedRes.headers['x-request-id'] as string);
    expect(feedEntry.records).toBe(feed.eventos.length);
    const disclosed = await accessOfEntry(t.database.db, t.clinicA.id, feedEntry.id);
    const clientaEvents = feed.eventos.filter((e) => e.tipo.startsWith('clienta.')).map((e) => e.datos.id);
    expect(disclosed.sort()).toEqual(expect.arrayContaining([...new Set(clientaEvents)].sort()));

    const me = await call(t, '/api/v1/me');
    const meEntry = await entryOf(me.headers['x-request-id'] as string);
    expect(meEntry).toMatchObject({ path: '/api/v1/me', status: 200, records: null });
  });

  it('an error is recorded with its code and the body the client got; a request without a known key is not recorded', async () => {
    const bad = await call(t, '/api/v1/citas?limit=abc');
    const body = expectError(bad, 400, 'invalid_parameter', 'limit');
    const e = await entryOf(body.request_id);
    expect(e).toMatchObject({ status: 400, error_code: 'invalid_parameter', records: null });
    expect(JSON.parse(e.error_body!)).toEqual(bad.json());
    expect(await accessOfEntry(t.database.db, t.clinicA.id, e.id)).toEqual([]);

    const unknown = await call(t, '/api/v1/citas', { key: 'svc_' + 'x'.repeat(43) });
    expect(unknown.statusCode).toBe(401);
    await t.rt.requestLog!.flush();
    for (const clinicId of [t.clinicA.id, t.clinicB.id]) {
      const rows = await logPage(t.database.db, clinicId, {}, null, 10_000);
      expect(rows.some((r) => r.request_id === unknown.headers['x-request-id'])).toBe(false);
    }
  });

  it('a 404 for an unknown path under /api/v1/ and a 405 are recorded when a known key made them (a key not yet used too)', async () => {
    // The key's first request ever: it is looked up, not found in the cache.
    const fresh = (await t.keys.create({ clinicId: t.clinicA.id, name: 'Fresh', expiresAt: null, createdBy: null })).key;
    const cases = [
      { url: '/api/v1/citass?limit=1', method: 'GET', key: fresh, status: 404, code: 'not_found' },
      { url: '/api/v1/nope/deeper', method: 'GET', key: t.keyA, status: 404, code: 'not_found' },
      { url: '/api/v1/citas', method: 'DELETE', key: t.keyA, status: 405, code: 'method_not_allowed' },
      { url: '/mcp', method: 'GET', key: t.keyA, status: 405, code: 'method_not_allowed' },
    ] as const;
    for (const c of cases) {
      const res = await call(t, c.url, { key: c.key, method: c.method });
      const body = expectError(res, c.status, c.code);
      const e = await untilRead(
        `the entry of ${c.method} ${c.url}`,
        async () => {
          await t.rt.requestLog!.flush();
          return (await logPage(t.database.db, t.clinicA.id, { requestId: body.request_id }, null, 10))[0];
        },
        (row) => row !== undefined,
        10_000,
      );
      expect(e, c.url).toMatchObject({ method: c.method, path: c.url.split('?')[0], status: c.status, error_code: c.code, records: null });
      expect(JSON.parse(e!.error_body!)).toEqual(res.json());
      expect(e!.key_id).not.toBeNull();
    }
    // Another clinic's key is recorded for its own clinic only.
    const b = expectError(await call(t, '/api/v1/zzz', { key: t.keyB }), 404, 'not_found');
    const inB = await untilRead(
      'the entry of clinic B',
      async () => {
        await t.rt.requestLog!.flush();
        return logPage(t.database.db, t.clinicB.id, { requestId: b.request_id }, null, 10);
      },
      (rows) => rows.length === 1,
      10_000,
    );
    expect(inB[0]).toMatchObject({ path: '/api/v1/zzz', status: 404 });
    expect(await logPage(t.database.db, t.clinicA.id, { requestId: b.request_id }, null, 10)).toEqual([]);
  });

  it('a 404 or 405 without a known key is not recorded, nor a 404 outside /api/v1/', async () => {
    const sent = [
      await call(t, '/api/v1/nope', { key: 'svc_' + 'x'.repeat(43) }),
      await call(t, '/api/v1/nope', { key: null }),
      await call(t, '/api/v1/citas', { key: null, method: 'POST' }),
      await call(t, '/nope', {}),
    ];
    expect(sent.map((r) => r.statusCode)).toEqual([404, 404, 405, 404]);
    // A request recorded after them: once it is written, they would have been too.
    const marker = await call(t, '/api/v1/nope-marker');
    await untilRead(
      'the marker entry',
      async () => {
        await t.rt.requestLog!.flush();
        return logPage(t.database.db, t.clinicA.id, { requestId: marker.headers['x-request-id'] as string }, null, 1);
      },
      (rows) => rows.length === 1,
      10_000,
    );
    for (const clinicId of [t.clinicA.id, t.clinicB.id]) {
      const rows = await logPage(t.database.db, clinicId, {}, null, 10_000);
      for (const r of sent) expect(rows.some((e) => e.request_id === r.headers['x-request-id'])).toBe(false);
    }
  });

  it('no key, token or secret is stored, wherever it was pasted (path, parameter names and values, headers, user agent)', async () => {
    const secret = t.keyA;
    const enc = encodeURIComponent(secret);
    const urls = [
      `/api/v1/citas/${secret}`,
      `/api/v1/citas?${enc}=1`,
      `/api/v1/citas?desde=${enc}`,
      `/api/v1/clientas?q=${enc}`,
      `/api/v1/citas?limit=${enc}`,
      `/api/v1/eventos?cursor=${enc}`,
      `/api/v1/${enc}`,
    ];
    const whsec = 'whsec_' + 'A'.repeat(40);
    for (const url of urls)
      await call(t, url, { headers: { 'user-agent': `curl ${secret} ${whsec}`, 'x-api-key': secret, cookie: `s=${secret}` } });
    await t.rt.requestLog!.flush();
    const rows = [
      ...(await logPage(t.database.db, t.clinicA.id, {}, null, 100_000)),
      ...(await logPage(t.database.db, t.clinicB.id, {}, null, 100_000)),
    ];
    expect(rows.length).toBeGreaterThanOrEqual(urls.length - 1);
    const stored = JSON.stringify(rows);
    const tail = secret.slice(secret.indexOf('_') + 1);
    expect(stored).not.toContain(tail);
    expect(stored).not.toContain(tail.slice(0, 16));
    expect(stored).not.toContain('A'.repeat(40));
    expect(stored).toContain('[redacted]');
  });

  it("tenancy: a clinic's entries and access record are never read with another clinic's id", async () => {
    const resB = await call(t, '/api/v1/clientas?limit=500', { key: t.keyB });
    expect(resB.statusCode).toBe(200);
    const eB = await entryOf(resB.headers['x-request-id'] as string, t.clinicB.id);
    expect((await logPage(t.database.db, t.clinicA.id, {}, null, 100_000)).some((r) => r.id === eB.id)).toBe(false);
    expect(await accessOfEntry(t.database.db, t.clinicA.id, eB.id)).toEqual([]);
    expect(await accessPage(t.database.db, t.clinicA.id, B.maria, null, 100)).toEqual([]);
    const forB = await accessPage(t.database.db, t.clinicB.id, B.maria, null, 100);
    expect(forB.map((r) => r.id)).toContain(eB.id);
  });

  it('the access record finds every request that disclosed a clienta, newest first, with its key and endpoint', async () => {
    const r1 = await call(t, `/api/v1/clientas/${A.angela}`);
    tick(t);
    const r2 = await call(t, `/api/v1/clientas?limit=500`);
    await t.rt.requestLog!.flush();
    const rows = await accessPage(t.database.db, t.clinicA.id, A.angela, null, 1000);
    const ids = rows.map((r) => r.request_id);
    expect(ids.indexOf(r2.headers['x-request-id'] as string)).toBeLessThan(ids.indexOf(r1.headers['x-request-id'] as string));
    expect(ids.indexOf(r2.headers['x-request-id'] as string)).toBeGreaterThanOrEqual(0);
    expect(rows[0]).toMatchObject({ path: '/api/v1/clientas', method: 'GET', status: 200 });
    // Keyset: the next page starts after the last row.
    const next = await accessPage(t.database.db, t.clinicA.id, A.angela, rows[0]!.id, 1000);
    expect(next.map((r) => r.id)).toEqual(rows.slice(1).map((r) => r.id));
  });
});

describe.each(dialects())('REQUEST_LOG_DAYS=0 on %s', (dialect) => {
  it('turns the log off: nothing collected, nothing written', async () => {
    const t = await buildTestApp(dialect, { env: { REQUEST_LOG_DAYS: '0' } });
    try {
      expect(t.rt.requestLog).toBeNull();
      await ok(t, '/api/v1/clientas');
      await call(t, '/api/v1/citas?limit=abc');
      const n = await t.database.db
        .selectFrom('request_log')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(n.n)).toBe(0);
    } finally {
      await t.close();
    }
  });
});
