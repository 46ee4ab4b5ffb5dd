// GET /api/v1/eventos (docs/api.md, "Keep a mirror in sync"): a clinic's events oldest first, from
// the oldest kept, from a cursor or from now; limit, tipo, next_cursor (always), has_more; 400 for
// a cursor or type that is not one, 410 cursor_expired for a position the log no longer has;
// ETag and 304, which still need a key and count against the rate limit.
import { ALL_SCOPE_BITS } from '../../src/domain/scopes.js';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/collections/index.js';
import { dataVersions } from '../../src/repos/clinics.js';
import { expireEvents } from '../../src/repos/events.js';
import { decodeCursor, encodeCursor, feedPage, planFeed } from '../../src/services/feed.js';
import { importJsonLines } from '../../src/services/import.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A, uid } from '../helpers/fixtures.js';
import { call, expectError, JSON_UTF8, ok, tick } from './helpers.js';

interface Evento {
  id: string;
  tipo: string;
  ocurrido_at: string;
  datos: Record<string, unknown> & { id: string };
}
interface Feed {
  eventos: Evento[];
  next_cursor: string;
  has_more: boolean;
}

/** Clinic A's fixtures: 5 clientas, 13 citas, 5 calls, in that order (test/helpers/fixtures.ts). */
const A_EVENTS = 23;

describe.each(dialects())('GET /api/v1/eventos on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  const position = (c: string) => decodeCursor(c, t.clinicA.id);
  const feed = (query = '', key?: string) => ok<Feed>(t, `/api/v1/eventos${query ? `?${query}` : ''}`, key === undefined ? {} : { key });

  /** Follows the feed from `cursor` (or the start) to has_more: false, `limit` at a time. */
  async function follow(query: string, cursor: string | null = null): Promise<{ eventos: Evento[]; cursor: string; pages: number }> {
    const eventos: Evento[] = [];
    let pages = 0;
    for (;;) {
      tick(t, 100);
      const page = await feed([query, cursor === null ? '' : `cursor=${cursor}`].filter(Boolean).join('&'));
      pages++;
      eventos.push(...page.eventos);
      cursor = page.next_cursor;
      if (!page.has_more) return { eventos, cursor, pages };
    }
  }

  const importA = async (lines: object[]) => {
    const res = await importJsonLines(t.database, t.clinicA.id, Readable.from([lines.map((l) => JSON.stringify(l)).join('\n')]), {
      now: () => t.clock.now,
    });
    expect(res.ok, JSON.stringify(res.errors)).toBe(true);
  };

  it("without a cursor: every event of the key's clinic from the oldest kept, in order, in the clinic's offset", async () => {
    const page = await feed('limit=500');
    expect(page.has_more).toBe(false);
    expect(page.eventos).toHaveLength(A_EVENTS);
    expect(page.eventos.slice(0, 5).map((e) => e.tipo)).toEqual(Array(5).fill('clienta.creada'));
    expect(page.eventos.slice(5, 18).every((e) => e.tipo === 'cita.creada')).toBe(true);
    expect(page.eventos.slice(18).every((e) => e.tipo === 'llamada.creada')).toBe(true);
    for (const e of page.eventos) {
      expect(Object.keys(e)).toEqual(['id', 'tipo', 'ocurrido_at', 'datos']);
      expect(e.ocurrido_at).toBe('2026-03-28T13:00:00+01:00');
      expect(e.datos.updated_at).toBe(e.ocurrido_at);
      expect(e.datos.id.startsWith('0a')).toBe(true);
    }
    expect(page.eventos[0]!.datos).toMatchObject({ id: A.maria, nombre: 'María José Núñez', vip: true });
    const b = await feed('limit=500', t.keyB);
    expect(b.eventos.map((e) => e.datos.id).every((id) => id.startsWith('0b'))).toBe(true);
    expect(b.eventos[0]!.ocurrido_at).toBe('2026-03-28T06:00:00-06:00');
    expect(b.eventos[1]!.datos).toMatchObject({ moneda: 'MXN' });
  });

  it('pages with limit and next_cursor: every event exactly once, has_more until the end, next_cursor always', async () => {
    const all = (await feed('limit=500')).eventos;
    const first = await feed('limit=10');
    expect(first.eventos).toEqual(all.slice(0, 10));
    expect(first.has_more).toBe(true);
    const followed = await follow('limit=7');
    expect(followed.eventos).toEqual(all);
    expect(followed.pages).toBe(4);
    // The end is a cursor too: nothing new yet, the same cursor back.
    const end = await feed(`cursor=${followed.cursor}`);
    expect(end).toEqual({ eventos: [], next_cursor: followed.cursor, has_more: false });
    expect((await feed()).eventos).toHaveLength(Math.min(A_EVENTS, 100));
  });

  it('cursor=now: no events, the present as next_cursor; following it later yields exactly what happened since', async () => {
    const now = await feed('cursor=now');
    expect(now.eventos).toEqual([]);
    expect(now.has_more).toBe(false);
    tick(t, 60_000);
    await importA([
      {
        type: 'cita',
        id: uid('a', 2, 1),
        clienta_id: A.maria,
        fecha_hora: '2026-03-27T23:59:59+01:00',
        servicio: 'Otra cosa',
        duracion_min: 60,
        precio: 55.5,
        estado: 'confirmada',
        profesional_nombre: 'Laura Martín',
        sede_nombre: 'Sede Centro',
        created_at: '2026-03-01T09:00:00+01:00',
      },
      { type: 'llamada', id: uid('a', 3, 2), deleted: true },
    ]);
    const since = await feed(`cursor=${now.next_cursor}`);
    expect(since.eventos.map((e) => [e.tipo, e.datos.id])).toEqual([
      ['cita.actualizada', uid('a', 2, 1)],
      ['llamada.eliminada', uid('a', 3, 2)],
    ]);
    expect(since.eventos[0]!.datos).toMatchObject({ servicio: 'Otra cosa', updated_at: since.eventos[0]!.ocurrido_at });
    expect(since.eventos[1]!.datos).toEqual({ id: uid('a', 3, 2) });
    expect(since.has_more).toBe(false);
    expect((await feed(`cursor=${since.next_cursor}`)).eventos).toEqual([]);
    // Another clinic's changes never show here.
    const bNow = await feed('cursor=now', t.keyB);
    expect((await feed(`cursor=${bNow.next_cursor}`, t.keyB)).eventos).toEqual([]);
  });

  it('tipo: only those types, in order; next_cursor moves past the others; any order of the list is the same request', async () => {
    const all = (await follow('limit=500')).eventos;
    const only = (await follow('tipo=llamada.creada,clienta.creada&limit=3')).eventos;
    expect(only).toEqual(all.filter((e) => e.tipo === 'llamada.creada' || e.tipo === 'clienta.creada'));
    const a = await call(t, '/api/v1/eventos?tipo=cita.creada,clienta.creada');
    const b = await call(t, '/api/v1/eventos?tipo=clienta.creada,cita.creada');
    expect(a.headers.etag).toBe(b.headers.etag);
    expect(a.json()).toEqual(b.json());
    const none = await feed('tipo=cita.eliminada');
    expect(none.eventos).toEqual([]);
    expect(none.has_more).toBe(false);
    expect(position(none.next_cursor)).toBe(position((await feed('cursor=now')).next_cursor));
  });

  it('reads a bounded stretch of the log per request: a rare type comes back with has_more and a cursor past what was read', async () => {
    const ctx = { clinicId: t.clinicA.id, timezone: t.clinicA.timezone, currency: t.clinicA.currency };
    const bounds = await dataVersions(t.database.db, t.clinicA.id);
    const plan = planFeed({ tipo: 'llamada.creada' }, ctx.clinicId, ALL_SCOPE_BITS);
    const scan = 6;
    const pages: Feed[] = [];
    let from = planFeed({}, ctx.clinicId, ALL_SCOPE_BITS).from;
    for (;;) {
      const page = JSON.parse(await feedPage(t.database.db, ctx, { ...plan, from }, bounds, scan)) as Feed;
      pages.push(page);
      from = position(page.next_cursor) as number;
      if (!page.has_more) break;
    }
    // Calls are the last events of the fixtures: the first pages are empty but move on.
    expect(pages[0]).toMatchObject({ eventos: [], has_more: true });
    expect(position(pages[0]!.next_cursor)).toBe(bounds.eventsExpired + scan);
    expect(pages.flatMap((p) => p.eventos).map((e) => e.tipo)).toEqual(Array(5).fill('llamada.creada'));
    expect(position(pages.at(-1)!.next_cursor)).toBe(bounds.eventsSeq);
  });

  it.each([
    ['cursor=abc', 'cursor'],
    ['cursor=', 'cursor'],
    ['cursor=NOW', 'cursor'],
    [`cursor=${Buffer.from('v2.5.abcdefgh').toString('base64url')}`, 'cursor'],
    [`cursor=${Buffer.from('v1.-5.abcdefgh').toString('base64url')}`, 'cursor'],
    [`cursor=${Buffer.from('v1.05.abcdefgh').toString('base64url')}`, 'cursor'],
    [`cursor=${Buffer.from('v1.5').toString('base64url')}`, 'cursor'],
    [`cursor=${encodeCursor(5, 'some clinic')}%3D%3D`, 'cursor'],
    ['cursor=now&cursor=now', 'cursor'],
    ['tipo=cita.borrada', 'tipo'],
    ['tipo=cita.creada,', 'tipo'],
    ['tipo=', 'tipo'],
    ['tipo=CITA.CREADA', 'tipo'],
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['offset=10', 'offset'],
    ['desde=2026-01-01', 'desde'],
  ])('?%s is a 400 naming %s', async (query, param) => {
    const err = expectError(
      await call(t, `/api/v1/eventos?${query}`),
      400,
      param === 'offset' || param === 'desde' ? 'unknown_parameter' : 'invalid_parameter',
      param,
    );
    expect(err.message).toContain(param);
    if (param === 'tipo' && query !== 'tipo=') for (const type of EVENT_TYPES) expect(err.message).toContain(type);
  });

  it("another clinic's cursor is a 400 naming cursor", async () => {
    const theirs = (await feed('cursor=now', t.keyB)).next_cursor;
    const err = expectError(await call(t, `/api/v1/eventos?cursor=${theirs}`), 400, 'invalid_parameter', 'cursor');
    expect(err.message).toContain("another clinic's");
    expect(position(theirs)).toBe('other');
  });

  it('410 cursor_expired for a cursor older than what retention removed, and for one ahead of the log', async () => {
    const b = await buildTestApp(dialect);
    try {
      const start = (await ok<Feed>(b, '/api/v1/eventos?limit=2')).next_cursor;
      expect(decodeCursor(start, b.clinicA.id)).toBe(2);
      // Retention removed the first 5 events: a cursor before 5 has lost some; one at 5 has not.
      await b.database.writeTransaction((trx) => expireEvents(trx, b.clinicA.id, 5));
      const gone = expectError(await call(b, `/api/v1/eventos?cursor=${start}`), 410, 'cursor_expired');
      expect(gone.message).toMatch(/older than the feed keeps.*cursor=now/);
      const at5 = await ok<Feed>(b, `/api/v1/eventos?cursor=${encodeCursor(5, b.clinicA.id)}&limit=1`);
      expect(at5.eventos[0]!.tipo).toBe('cita.creada');
      // Without a cursor the feed starts at the oldest event kept.
      expect((await ok<Feed>(b, '/api/v1/eventos?limit=500')).eventos).toHaveLength(A_EVENTS - 5);
      // Ahead of the log: a database restored from an older backup.
      expectError(await call(b, `/api/v1/eventos?cursor=${encodeCursor(A_EVENTS + 1, b.clinicA.id)}`), 410, 'cursor_expired');
      const res = await call(b, `/api/v1/eventos?cursor=${start}`);
      expect(res.headers.etag).toBeUndefined();
    } finally {
      await b.close();
    }
  });

  it('every 200 carries a strong ETag; If-None-Match with it is a 304 without a body until the log moves', async () => {
    const now = await feed('cursor=now');
    const url = `/api/v1/eventos?cursor=${now.next_cursor}&limit=50`;
    const first = await call(t, url);
    const tag = first.headers.etag as string;
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    const again = await call(t, url, { headers: { 'if-none-match': tag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(tag);
    expect(again.headers['content-type']).toBeUndefined();
    expect(again.headers['ratelimit']).toMatch(/^"key";r=\d+;t=\d+$/);
    // A 304 still needs a valid key.
    expectError(await call(t, url, { key: null, headers: { 'if-none-match': tag } }), 401, 'missing_api_key');
    // Other page sizes are other answers.
    expect((await call(t, `/api/v1/eventos?cursor=${now.next_cursor}&limit=49`, { headers: { 'if-none-match': tag } })).statusCode).toBe(
      200,
    );
    // A change: the same request is a 200 with the new event.
    await importA([{ type: 'llamada', id: uid('a', 3, 4), deleted: true }]);
    const changed = await call(t, url, { headers: { 'if-none-match': tag } });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers['content-type']).toBe(JSON_UTF8);
    expect(changed.headers.etag).not.toBe(tag);
    expect((changed.json() as Feed).eventos.map((e) => e.tipo)).toEqual(['llamada.eliminada']);
    // cursor=now is a new present.
    expect(
      (
        await call(t, '/api/v1/eventos?cursor=now', {
          headers: { 'if-none-match': (await call(t, '/api/v1/eventos?cursor=now')).headers.etag as string },
        })
      ).statusCode,
    ).toBe(304);
  });

  it('304s count against the rate limit like any request', async () => {
    const limited = await buildTestApp(dialect, { env: { RATE_LIMIT_RPS: '5', RATE_LIMIT_BURST: '5' } });
    try {
      const first = await call(limited, '/api/v1/eventos?cursor=now');
      const headers = { 'if-none-match': first.headers.etag as string };
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await call(limited, '/api/v1/eventos?cursor=now', { headers })).statusCode);
      expect(statuses).toEqual([304, 304, 304, 304, 429]);
    } finally {
      await limited.close();
    }
  });
});
