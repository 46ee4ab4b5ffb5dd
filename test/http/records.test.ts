// One record by its id: GET /api/v1/citas/{id}, /clientas/{id}, /llamadas/{id} (docs/api.md,
// "Endpoints"). Exactly the list's item, byte for byte; a strong ETag and 304; 404 not_found alike
// for an unknown id and another clinic's; 400 invalid_parameter naming `id` for a malformed one,
// after authentication; HEAD like GET; 405 for other methods. Two clinics, both databases.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { capturing } from '../../src/db/explain.js';
import { importJsonLines } from '../../src/services/import.js';
import { appFor, buildTestApp, type TestApp } from '../helpers/app.js';
import { anotherInstance, keyUseWritten } from '../helpers/runtime.js';
import { dialects } from '../helpers/db.js';
import { A, B, FIXTURE_NOW_MS, uid } from '../helpers/fixtures.js';
import { call, citaA, expectError, JSON_UTF8, llamadaA, ME_PATH, ok, tick } from './helpers.js';

type Json = Record<string, any>;

/** Each collection, a wide query of its list, and ids of clinic A and B. */
const KINDS = [
  { items: 'citas', list: '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31&limit=500', a: citaA(2), b: uid('b', 2, 1) },
  { items: 'clientas', list: '/api/v1/clientas?limit=500', a: A.maria, b: B.maria },
  { items: 'llamadas', list: '/api/v1/llamadas?desde=2026-01-01&limit=500', a: llamadaA(1), b: uid('b', 3, 1) },
] as const;

/** [name, kind] pairs, for test names. */
const BY_NAME = KINDS.map((k) => [k.items, k] as const);

const MISSING = '0a000009-0000-4000-8000-000000000999';

describe.each(dialects())('single records on %s', (dialect) => {
  let t: TestApp;
  // No page cache: nothing of a single record is cached, and the lists compared with are built.
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '1000000', PAGE_CACHE_MB: '0' } });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    t.clock.now = Math.max(t.clock.now, FIXTURE_NOW_MS);
    tick(t);
  });

  const get = (url: string, opts: { key?: string | null; tag?: string; method?: 'GET' | 'HEAD' } = {}) =>
    call(t, url, {
      ...(opts.key !== undefined ? { key: opts.key } : {}),
      ...(opts.method ? { method: opts.method } : {}),
      headers: opts.tag === undefined ? {} : { 'if-none-match': opts.tag },
    });

  it.each(BY_NAME)("/api/v1/%s/{id}: every record of each clinic's list, byte for byte as the list writes it", async (_, k) => {
    for (const key of [t.keyA, t.keyB]) {
      const list = await ok(t, k.list, { key });
      expect(list[k.items].length).toBeGreaterThan(0);
      for (const item of list[k.items] as Json[]) {
        const res = await get(`/api/v1/${k.items}/${item.id}`, { key });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.headers['content-type']).toBe(JSON_UTF8);
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
        expect(res.headers['ratelimit']).toBeDefined();
        // the same fields in the same order with the same values
        expect(res.body).toBe(JSON.stringify(item));
      }
    }
  });

  it.each(BY_NAME)("/api/v1/%s/{id}: another clinic's id is a 404 not_found, the very answer of an id nobody has", async (_, k) => {
    // B asks for A's record, and A for B's
    const crossed = [
      [t.keyB, k.a],
      [t.keyA, k.b],
    ] as const;
    for (const [key, id] of crossed) {
      expect((await get(`/api/v1/${k.items}/${id}`, { key: key === t.keyA ? t.keyB : t.keyA })).statusCode).toBe(200);
      const res = await get(`/api/v1/${k.items}/${id}`, { key });
      const err = expectError(res, 404, 'not_found');
      expect(err.message).toBe(`No ${k.items.slice(0, -1)} with id ${id} in this API key's clinic`);
      expect(res.headers.etag, 'a 404 carries no tag').toBeUndefined();
      expect(res.body).not.toContain(key === t.keyB ? t.clinicA.id : t.clinicB.id);
    }
    const unknown = await get(`/api/v1/${k.items}/${MISSING}`);
    expect(expectError(unknown, 404, 'not_found').message).toBe(`No ${k.items.slice(0, -1)} with id ${MISSING} in this API key's clinic`);
  });

  it.each(BY_NAME)('/api/v1/%s/{id}: a malformed id is a 400 invalid_parameter naming id, after authentication', async (_, k) => {
    for (const bad of ['abc', '123', `${k.a}0`, k.a.replaceAll('-', ''), `{${k.a}}`, 'ñ', '%20', k.a.slice(0, -1) + 'g', '%00']) {
      const err = expectError(await get(`/api/v1/${k.items}/${bad}`), 400, 'invalid_parameter', 'id');
      if (bad !== '%00') expect(err.message).toContain('id must be a UUID');
      // without a key the answer is the 401: nothing about the path is told first
      expectError(await get(`/api/v1/${k.items}/${bad}`, { key: null }), 401, 'missing_api_key');
    }
    // A UUID in capitals is the same id (the import takes ids in any case and stores them in lower case).
    const upper = await get(`/api/v1/${k.items}/${k.a.toUpperCase()}`);
    expect(upper.statusCode).toBe(200);
    expect(upper.json().id).toBe(k.a);
    expect(upper.headers.etag).toBe((await get(`/api/v1/${k.items}/${k.a}`)).headers.etag);
    // no query parameters
    expectError(await get(`/api/v1/${k.items}/${k.a}?limit=1`), 400, 'unknown_parameter', 'limit');
  });

  it.each(BY_NAME)('/api/v1/%s/{id}: a strong ETag; If-None-Match with it (or *) is a 304 with no body', async (_, k) => {
    const url = `/api/v1/${k.items}/${k.a}`;
    const first = await get(url);
    const tag = first.headers.etag as string;
    for (const header of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
      const res = await get(url, { tag: header });
      expect(res.statusCode, header).toBe(304);
      expect(res.body).toBe('');
      expect(res.headers.etag).toBe(tag);
      expect(res.headers['cache-control']).toBe('no-store');
    }
    expect((await get(url, { tag: '"other"' })).body).toBe(first.body);
    // another record, the same record for another clinic's key: other tags, no 304
    expect((await get(`/api/v1/${k.items}/${k.b}`, { key: t.keyB })).headers.etag).not.toBe(tag);
    expect((await get(`/api/v1/${k.items}/${k.a}`, { key: t.keyB, tag })).statusCode).toBe(404);
    // "*" only matches a record that exists
    expectError(await get(`/api/v1/${k.items}/${MISSING}`, { tag: '*' }), 404, 'not_found');
    // the tag of the record is not the list's
    expect((await get(k.list)).headers.etag).not.toBe(tag);
  });

  it.each(BY_NAME)('/api/v1/%s/{id}: HEAD answers as GET without a body; other methods are 405 before authentication', async (_, k) => {
    const url = `/api/v1/${k.items}/${k.a}`;
    const got = await get(url);
    const head = await get(url, { method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers.etag).toBe(got.headers.etag);
    expect(head.headers['content-type']).toBe(JSON_UTF8);
    expect((await get(`/api/v1/${k.items}/${MISSING}`, { method: 'HEAD' })).statusCode).toBe(404);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      for (const path of [url, `/api/v1/${k.items}/not-a-uuid`]) {
        const res = await call(t, path, { method, key: null });
        expectError(res, 405, 'method_not_allowed');
        expect(res.headers.allow).toBe('GET, HEAD');
      }
    }
    // an empty id is a malformed one, for every method; deeper paths are no record's: 404
    expectError(await get(`/api/v1/${k.items}/`), 400, 'invalid_parameter', 'id');
    expectError(await call(t, `/api/v1/${k.items}/`, { method: 'DELETE', key: null }), 405, 'method_not_allowed');
    expectError(await get(`${url}/x`), 404, 'not_found');
    expectError(await call(t, `${url}/x`, { method: 'DELETE', key: null }), 404, 'not_found');
  });

  it('a change of the record changes its tag and its answer; a change elsewhere in the clinic changes the tag only', async () => {
    const url = `/api/v1/clientas/${A.mario}`;
    const before = await get(url);
    const line = (nombre: string) =>
      JSON.stringify({
        type: 'clienta',
        id: A.mario,
        nombre,
        telefono: '+34611222333',
        email: null,
        idioma: 'en',
        vip: false,
        cliente_desde: '2024-05-10',
        created_at: '2024-05-10T10:00:00+02:00',
      });
    const run = (l: string) => importJsonLines(t.database, t.clinicA.id, Readable.from([l]), { now: () => t.clock.now });
    expect((await run(line('Mario Pérez'))).changed).toBe(false);
    expect((await get(url, { tag: before.headers.etag as string })).statusCode).toBe(304);
    expect((await run(line('Mario Pérez Gil'))).changed).toBe(true);
    const after = await get(url, { tag: before.headers.etag as string });
    expect(after.statusCode).toBe(200);
    expect(after.json().nombre).toBe('Mario Pérez Gil');
    // her citas show her new name: their tags moved too
    expect((await get(`/api/v1/citas/${citaA(3)}`)).json().cliente_nombre).toBe('Mario Pérez Gil');
  });

  /** Walks the clock over `instants`, asking `url` with the previous tag: a 304 only while the record is the same. */
  async function walk(url: string, instants: number[]) {
    let tag: string | undefined;
    let body: string | undefined;
    const changedAt: number[] = [];
    for (const at of instants) {
      t.clock.now = at;
      const conditional = await get(url, tag === undefined ? {} : { tag });
      const fresh = await get(url);
      expect(fresh.statusCode).toBe(200);
      if (conditional.statusCode === 304) {
        // never hidden: the record as it is now is the one the client has
        expect(fresh.body, new Date(at).toISOString()).toBe(body);
        expect(fresh.headers.etag).toBe(tag);
      } else {
        expect(conditional.statusCode).toBe(200);
        if (body !== undefined) changedAt.push(at);
      }
      tag = fresh.headers.etag as string;
      body = fresh.body;
    }
    return changedAt;
  }

  it("a client's ultima_cita moves when one of HER citas starts: her tag changes exactly then, not at another client's", async () => {
    // Ángela's cita "dstDayEarly" starts at 2026-03-29T00:30+01:00 = 23:30Z on the 28th; María's
    // "dstDayAfterJump" at 03:00+02:00 = 01:00Z on the 29th.
    const angela = Date.UTC(2026, 2, 28, 23, 30, 0);
    const maria = Date.UTC(2026, 2, 29, 1, 0, 0);
    const instants = [angela - 60_000, angela - 1_000, angela, angela + 1_000, maria - 1_000, maria, maria + 60_000];
    expect(await walk(`/api/v1/clientas/${A.angela}`, instants)).toEqual([angela]);
    t.clock.now = angela - 60_000;
    expect(await walk(`/api/v1/clientas/${A.maria}`, instants)).toEqual([maria]);
    expect((await get(`/api/v1/clientas/${A.maria}`)).json().ultima_cita).toBe('2026-03-29');
  });

  it("a 304 reads no record: one read of the clinic's versions (and, for a client, one seek for her next cita)", async () => {
    const cap = capturing(t.database.db);
    const app = await appFor(anotherInstance(t.rt, { ...t.database, db: cap.db }));
    try {
      const expected: Record<string, RegExp[]> = {
        [`/api/v1/citas/${citaA(2)}`]: [/from "clinic_data_versions"/],
        [`/api/v1/llamadas/${llamadaA(1)}`]: [/from "clinic_data_versions"/],
        [`/api/v1/clientas/${A.maria}`]: [/from "clinic_data_versions"/, /from "citas" .*"clienta_id" = .*"fecha_hora" > .* limit/],
      };
      // The instance's first request with the key, and the background write it makes, before any count.
      expect((await app.inject({ url: ME_PATH, headers: { authorization: `Bearer ${t.keyA}` } })).statusCode).toBe(200);
      await keyUseWritten(cap);
      for (const [url, statements] of Object.entries(expected)) {
        const headers = { authorization: `Bearer ${t.keyA}` };
        const tag = (await app.inject({ url, headers })).headers.etag as string;
        cap.queries.length = 0;
        const res = await app.inject({ url, headers: { ...headers, 'if-none-match': tag } });
        expect(res.statusCode, url).toBe(304);
        const sent = cap.queries.map((q) => q.sql.replace(/\s+/g, ' '));
        expect(sent, url).toHaveLength(statements.length);
        expect(sent, url).toEqual(expect.arrayContaining(statements.map((re) => expect.stringMatching(re))));
      }
    } finally {
      await app.close();
    }
  });

  // Last: it deletes a record of clinic A.
  it('an id deleted from its clinic answers that clinic exactly as another clinic was answered before', async () => {
    const id = citaA(4);
    const fromB = await get(`/api/v1/citas/${id}`, { key: t.keyB });
    const del = await importJsonLines(t.database, t.clinicA.id, Readable.from([JSON.stringify({ type: 'cita', id, deleted: true })]), {
      now: () => t.clock.now,
    });
    expect(del.changed).toBe(true);
    const fromA = await get(`/api/v1/citas/${id}`);
    const withoutId = (body: string) => ({ ...JSON.parse(body).error, request_id: null });
    expect(fromA.statusCode).toBe(404);
    expect(withoutId(fromA.body)).toEqual(withoutId(fromB.body));
    expect(Object.keys(fromA.headers).sort()).toEqual(Object.keys(fromB.headers).sort());
  });
});
