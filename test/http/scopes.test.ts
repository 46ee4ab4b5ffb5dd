// Scopes (docs/api.md, "Scopes: what a key may read"): each route needs its scope (403
// insufficient_scope naming it, with the RFC 6750 challenge, after authentication and before
// anything else); /me needs none and lists them; without contacto:read the contact fields are null
// in every record a key receives (lists, single records, CSV, the feed's datos) and q never matches
// phone digits; the two views have their own ETags and pages in the page cache; the feed shows
// only the event types of the collections a key may read. Two clinics, both databases.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { capturing } from '../../src/db/explain.js';
import { DEFAULT_SCOPES, type Scope } from '../../src/domain/scopes.js';
import { dataVersions } from '../../src/repos/clinics.js';
import { decodeCursor } from '../../src/services/feed.js';
import { appFor, bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A, B } from '../helpers/fixtures.js';
import { anotherInstance, keyUseWritten } from '../helpers/runtime.js';
import { call, citaA, expectError, expectScopeError, llamadaA, ME_PATH, ok, tick } from './helpers.js';

const WIDE = '?desde=2026-01-01&hasta=2026-12-31&limit=500';
const LISTS = [
  { path: '/api/v1/citas', scope: 'citas:read', items: 'citas', contact: ['telefono', 'notas'], query: WIDE },
  { path: '/api/v1/clientas', scope: 'clientas:read', items: 'clientas', contact: ['telefono', 'email'], query: '?limit=500' },
  { path: '/api/v1/llamadas', scope: 'llamadas:read', items: 'llamadas', contact: ['telefono_caller'], query: WIDE },
] as const;
const RECORDS = [
  { path: `/api/v1/citas/${citaA(2)}`, scope: 'citas:read' },
  { path: `/api/v1/clientas/${A.maria}`, scope: 'clientas:read' },
  { path: `/api/v1/llamadas/${llamadaA(1)}`, scope: 'llamadas:read' },
] as const;
const ALL_CONTACT = ['telefono', 'email', 'notas', 'telefono_caller'];

type Rec = Record<string, unknown> & { id: string };
type Evento = { id: string; tipo: string; datos: Rec };

/** The record with its contact fields null: what a key without contacto:read must receive. */
const blanked = (r: Rec) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, ALL_CONTACT.includes(k) ? null : v]));

describe.each(dialects())('scopes on %s', (dialect) => {
  let t: TestApp;
  const key: Record<string, string> = {};
  const make = async (name: string, scopes: Scope[], clinicId?: string) =>
    (key[name] = (await t.keys.create({ clinicId: clinicId ?? t.clinicA.id, name, expiresAt: null, createdBy: null, scopes })).key);

  beforeAll(async () => {
    t = await buildTestApp(dialect);
    await make('contactOnly', ['contacto:read']);
    await make('noContact', ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read']);
    await make('feedCitas', ['eventos:read', 'citas:read']);
    await make('feedOnly', ['eventos:read']);
    await make('bNoContact', ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read'], t.clinicB.id);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  const SCOPED: [string, string][] = [
    ...LISTS.map((l): [string, string] => [l.path, l.scope]),
    ...RECORDS.map((r): [string, string] => [r.path, r.scope]),
    ['/api/v1/eventos', 'eventos:read'],
  ];
  it.each(SCOPED)(
    "%s outside the key's scopes is 403 insufficient_scope naming %s, with WWW-Authenticate (after the rate limit: RateLimit headers)",
    async (path, scope) => {
      const res = await call(t, path, { key: key.contactOnly });
      expectScopeError(res, scope);
      expect(res.headers['ratelimit']).toMatch(/^"key";r=\d+;t=\d+$/);
      // HEAD answers the same status
      expect((await call(t, path, { key: key.contactOnly, method: 'HEAD' })).statusCode).toBe(403);
    },
  );

  it('a 403 reveals nothing: the same answer for a record that exists, one that does not, bad parameters and any filter', async () => {
    const answers = await Promise.all(
      [
        `/api/v1/citas/${citaA(2)}`,
        '/api/v1/citas/00000000-0000-4000-8000-000000000000',
        '/api/v1/citas/not-a-uuid',
        '/api/v1/citas?limit=abc',
        '/api/v1/citas?nope=1',
        '/api/v1/citas?estado=confirmada',
      ].map((p) => call(t, p, { key: key.contactOnly })),
    );
    const shapes = new Set(answers.map((r) => JSON.stringify({ ...expectScopeError(r, 'citas:read'), request_id: null })));
    expect(shapes.size).toBe(1);
  });

  it('authentication comes first: no key or a bad key is a 401 on every scoped route', async () => {
    for (const path of ['/api/v1/citas', `/api/v1/clientas/${A.maria}`, '/api/v1/eventos']) {
      expectError(await call(t, path, { key: null }), 401, 'missing_api_key');
      expectError(await call(t, path, { key: 'svc_' + 'x'.repeat(43) }), 401, 'invalid_api_key');
    }
  });

  it('/me needs no scope and lists the scopes, in their one order', async () => {
    expect((await ok(t, ME_PATH, { key: key.contactOnly })).api_key.scopes).toEqual(['contacto:read']);
    expect((await ok(t, ME_PATH, { key: key.feedCitas })).api_key.scopes).toEqual(['citas:read', 'eventos:read']);
    // A key made without naming scopes: every one but webhooks:write, which is only ever chosen.
    expect((await ok(t, ME_PATH)).api_key.scopes).toEqual([...DEFAULT_SCOPES]);
  });

  it.each(LISTS)('$path without contacto:read: every contact field null, every other field as the full view', async (l) => {
    const full = (await ok(t, l.path + l.query))[l.items] as Rec[];
    const without = (await ok(t, l.path + l.query, { key: key.noContact }))[l.items] as Rec[];
    expect(without.length).toBe(full.length);
    expect(without).toEqual(full.map(blanked));
    // The full view had contact details to hide, and none survived.
    for (const f of l.contact)
      expect(
        full.some((r) => r[f] !== null),
        f,
      ).toBe(true);
    expect(JSON.stringify(without)).not.toMatch(/\+\d{8,}|@example/);
  });

  it.each(RECORDS)('$path without contacto:read: the record with its contact fields null', async (r) => {
    const full = await ok<Rec>(t, r.path);
    expect(await ok<Rec>(t, r.path, { key: key.noContact })).toEqual(blanked(full));
  });

  it.each(LISTS)('$path as CSV without contacto:read: the contact columns empty', async (l) => {
    const csv = async (k?: string) => (await call(t, l.path + l.query, { key: k, headers: { accept: 'text/csv' } })).body;
    const full = await csv();
    const without = await csv(key.noContact);
    expect(without.split('\r\n')[0]).toBe(full.split('\r\n')[0]);
    expect(full).toMatch(/\+\d{8,}/);
    expect(without).not.toMatch(/\+\d{8,}|@example|látex/);
    expect(without.split('\r\n').length).toBe(full.split('\r\n').length);
  });

  it('q never matches phone digits without contacto:read (names only); names match alike', async () => {
    const total = async (q: string, k?: string) => (await ok(t, `/api/v1/clientas?q=${encodeURIComponent(q)}`, { key: k })).total;
    for (const q of ['600 12', '+34600123456', '600-123-456', '34']) {
      expect(await total(q), q).toBeGreaterThan(0);
      expect(await total(q, key.noContact), q).toBe(0);
    }
    // A name with digits is still found by them: q searched the name only.
    expect(await total('100', key.noContact)).toBe(1);
    for (const q of ['maria', 'mari', 'ángela']) expect(await total(q, key.noContact), q).toBe(await total(q));
  });

  it('the two views have their own ETags: no 304 across them, and the page cache never sends one view for the other', async () => {
    for (const path of [`/api/v1/citas${WIDE}`, `/api/v1/clientas/${A.maria}`, '/api/v1/clientas?limit=10']) {
      const full = await call(t, path);
      await call(t, path); // kept by the page cache (the lists)
      const without = await call(t, path, { key: key.noContact });
      expect(without.statusCode).toBe(200);
      expect(without.headers.etag).not.toBe(full.headers.etag);
      expect(without.body).not.toBe(full.body);
      expect(without.body).not.toMatch(/\+34/);
      // the full view's tag is not a 304 for the other view, and the other way round
      expect((await call(t, path, { key: key.noContact, headers: { 'if-none-match': full.headers.etag as string } })).statusCode).toBe(200);
      expect((await call(t, path, { headers: { 'if-none-match': without.headers.etag as string } })).statusCode).toBe(200);
      // each view's own tag still is
      expect((await call(t, path, { key: key.noContact, headers: { 'if-none-match': without.headers.etag as string } })).statusCode).toBe(
        304,
      );
    }
  });

  it('the feed shows only the event types of the collections the key may read, and its cursor reaches the head', async () => {
    const head = (await dataVersions(t.database.db, t.clinicA.id)).eventsSeq;
    const all = (await ok(t, '/api/v1/eventos?limit=500')).eventos as Evento[];
    const page = await ok(t, '/api/v1/eventos?limit=500', { key: key.feedCitas });
    const citas = all.filter((e) => e.tipo.startsWith('cita.'));
    expect(citas.length).toBe(13);
    expect((page.eventos as Evento[]).map((e) => e.id)).toEqual(citas.map((e) => e.id));
    // ...without contact details (no contacto:read), every other field as the full view
    expect((page.eventos as Evento[]).map((e) => e.datos)).toEqual(citas.map((e) => blanked(e.datos)));
    expect(decodeCursor(page.next_cursor, t.clinicA.id)).toBe(head);
    expect(page.has_more).toBe(false);
    // a key that may read no collection sees no event, and follows all the same
    const none = await ok(t, '/api/v1/eventos?limit=500', { key: key.feedOnly });
    expect(none.eventos).toEqual([]);
    expect(decodeCursor(none.next_cursor, t.clinicA.id)).toBe(head);
    // and the same request with the full key has another tag
    const tags = await Promise.all([call(t, '/api/v1/eventos?limit=500'), call(t, '/api/v1/eventos?limit=500', { key: key.feedCitas })]);
    expect(tags[0].headers.etag).not.toBe(tags[1].headers.etag);
  });

  it('the feed without contacto:read blanks the datos of clientas and llamadas too', async () => {
    const all = (await ok(t, '/api/v1/eventos?limit=500')).eventos as Evento[];
    const without = (await ok(t, '/api/v1/eventos?limit=500', { key: key.noContact })).eventos as Evento[];
    expect(without.map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect(without.map((e) => e.datos)).toEqual(all.map((e) => blanked(e.datos)));
    expect(JSON.stringify(without)).not.toMatch(/\+\d{8,}|@example|látex/);
  });

  it.each([
    ['clienta.creada', 'clientas:read'],
    ['cita.creada,llamada.actualizada', 'llamadas:read'],
    ['llamada.eliminada,clienta.eliminada', 'clientas:read'],
  ])("the feed: tipo=%s outside the key's scopes is 403 naming %s", async (tipo, scope) => {
    const err = expectScopeError(await call(t, `/api/v1/eventos?tipo=${tipo}`, { key: key.feedCitas }), scope);
    expect(err.message).toContain('tipo');
  });

  it("the feed: tipo within the key's scopes is answered; an unknown type is still a 400 first", async () => {
    const page = await ok(t, '/api/v1/eventos?tipo=cita.creada&limit=500', { key: key.feedCitas });
    expect((page.eventos as Evento[]).every((e) => e.tipo === 'cita.creada')).toBe(true);
    expectError(await call(t, '/api/v1/eventos?tipo=cita.borrada', { key: key.feedCitas }), 400, 'invalid_parameter', 'tipo');
  });

  it("another clinic's key without contacto:read: its own clinic's records only, blanked", async () => {
    const citas = (await ok(t, `/api/v1/citas${WIDE}`, { key: key.bNoContact })).citas as Rec[];
    expect(citas.map((c) => c.id).every((id) => id.startsWith('0b'))).toBe(true);
    expect(citas.every((c) => c.telefono === null)).toBe(true);
    expect(await ok<Rec>(t, `/api/v1/clientas/${B.maria}`, { key: key.bNoContact })).toMatchObject({
      nombre: 'María Fernández',
      telefono: null,
    });
    expectError(await call(t, `/api/v1/clientas/${A.maria}`, { key: key.bNoContact }), 404, 'not_found');
  });

  it("scopes and addresses travel with the cached key: a known key's 403s and /me read nothing from the database", async () => {
    const k = await t.keys.create({
      clinicId: t.clinicA.id,
      name: 'cached',
      expiresAt: null,
      createdBy: null,
      scopes: ['citas:read'],
      allowedIps: ['203.0.113.0/24'],
    });
    const cap = capturing(t.database.db);
    const rt = anotherInstance(t.rt, { ...t.database, db: cap.db });
    const app = await appFor(rt);
    const get = (url: string, from: string) => app.inject({ url, headers: bearer(k.key), remoteAddress: from });
    try {
      expect((await get(ME_PATH, '203.0.113.5')).statusCode).toBe(200);
      // the first request read the key, and marks it used in the background
      await keyUseWritten(cap);
      cap.queries.length = 0;
      expect((await get('/api/v1/clientas', '203.0.113.5')).statusCode).toBe(403);
      expect((await get(`/api/v1/llamadas/${llamadaA(1)}`, '203.0.113.5')).statusCode).toBe(403);
      expect((await get('/api/v1/eventos', '203.0.113.5')).statusCode).toBe(403);
      expect((await get('/api/v1/citas', '198.51.100.7')).statusCode).toBe(403);
      expect((await get(ME_PATH, '203.0.113.5')).statusCode).toBe(200);
      expect(cap.queries.map((q) => q.sql)).toEqual([]);
    } finally {
      await app.close();
      await rt.close();
    }
  });
});
