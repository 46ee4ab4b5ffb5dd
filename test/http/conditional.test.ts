// Conditional requests on the three lists (docs/api.md, "Conditional requests"): a strong ETag on every
// 200, a 304 without a body for If-None-Match with it, and never a 304 when the 200 would differ:
// after a change of data, and when only time passes (the default windows move at the clinic's
// midnight, a client's ultima_cita when one of her appointments starts), checked with a
// controlled clock against the pages themselves.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { capturing } from '../../src/db/explain.js';
import { importJsonLines } from '../../src/services/import.js';
import { appFor, buildTestApp, type TestApp } from '../helpers/app.js';
import { anotherInstance, keyUseWritten } from '../helpers/runtime.js';
import { dialects } from '../helpers/db.js';
import { A, FIXTURE_NOW_MS } from '../helpers/fixtures.js';
import { call, JSON_UTF8, ME_PATH, PATHS } from './helpers.js';

describe.each(dialects())('conditional requests on %s', (dialect) => {
  let t: TestApp;
  // The clock walks back and forth over the same hours here: a burst worth days keeps the key's limiter out of the way.
  // No page cache: every 200 here is a page built from the data, so a tag that failed to change
  // with the page would show as a 304 beside a different page (with the cache, the "fresh" page
  // would be the one kept under that same tag, and the check would prove nothing).
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '1000000', PAGE_CACHE_MB: '0' } });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    t.clock.now = Math.max(t.clock.now, FIXTURE_NOW_MS);
  });

  const get = (url: string, tag?: string, key?: string) =>
    call(t, url, { ...(key ? { key } : {}), headers: tag === undefined ? {} : { 'if-none-match': tag } });

  it.each(PATHS)('%s: a 200 carries a strong ETag; If-None-Match with it is a 304 with no body, in any of its forms', async (path) => {
    const first = await get(path);
    expect(first.statusCode).toBe(200);
    const tag = first.headers.etag as string;
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    for (const header of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
      const res = await get(path, header);
      expect(res.statusCode, header).toBe(304);
      expect(res.body).toBe('');
      expect(res.headers.etag).toBe(tag);
      expect(res.headers['cache-control']).toBe('no-store');
    }
    for (const header of ['"other"', tag.slice(0, -2) + '"', 'W/"x"']) {
      const res = await get(path, header);
      expect(res.statusCode, header).toBe(200);
      expect(res.headers['content-type']).toBe(JSON_UTF8);
      expect(res.headers.etag).toBe(tag);
    }
    // Other parameters, another clinic: other tags.
    expect((await get(`${path}?limit=3`)).headers.etag).not.toBe(tag);
    expect((await get(`${path}?offset=1`)).headers.etag).not.toBe(tag);
    expect((await get(path, undefined, t.keyB)).headers.etag).not.toBe(tag);
    expect((await get(path, tag, t.keyB)).statusCode).toBe(200);
  });

  it("a change of data changes every list's tag; an import that changes nothing changes none", async () => {
    const urls = ['/api/v1/citas?desde=2026-01-01&hasta=2026-12-31', '/api/v1/clientas', '/api/v1/llamadas?desde=2026-01-01'];
    const before = await Promise.all(urls.map(async (u) => (await get(u)).headers.etag as string));
    const line = (nombre: string) =>
      JSON.stringify({
        type: 'clienta',
        id: A.pct,
        nombre,
        telefono: '+34633444555',
        email: null,
        idioma: 'es',
        vip: false,
        cliente_desde: '2024-05-10',
        created_at: '2024-05-10T10:00:00+02:00',
      });
    const run = (l: string) => importJsonLines(t.database, t.clinicA.id, Readable.from([l]), { now: () => t.clock.now });
    expect((await run(line('Ana 100%_Ruiz'))).changed).toBe(false);
    for (const [i, u] of urls.entries()) expect((await get(u, before[i])).statusCode, u).toBe(304);
    expect((await run(line('Ana Ruiz'))).changed).toBe(true);
    for (const [i, u] of urls.entries()) {
      const res = await get(u, before[i]);
      expect(res.statusCode, u).toBe(200);
    }
    expect(JSON.stringify((await get('/api/v1/clientas')).json())).toContain('Ana Ruiz');
  });

  /**
   * Walks the clock over `instants` and asks `url` at each with the tag of the previous answer:
   * a 304 must mean the page is the same as the previous one (checked against a fresh page), and
   * the tag must change at least at `mustChangeAt` (the instants where the page changes).
   */
  async function walk(url: string, instants: number[]) {
    let tag: string | undefined;
    let body: string | undefined;
    const changedAt: number[] = [];
    for (const at of instants) {
      t.clock.now = at;
      const conditional = await get(url, tag);
      const fresh = await get(url);
      expect(fresh.statusCode).toBe(200);
      if (conditional.statusCode === 304) {
        // Never hidden: the page as it is now is the page the client has.
        expect(fresh.body, new Date(at).toISOString()).toBe(body);
        expect(conditional.headers.etag).toBe(tag);
      } else {
        expect(conditional.statusCode).toBe(200);
        if (body !== undefined) changedAt.push(at);
        expect(conditional.body).toBe(fresh.body);
      }
      tag = fresh.headers.etag as string;
      body = fresh.body;
    }
    return changedAt;
  }

  it("the default windows move at the clinic's midnight: the tag changes exactly then, not before", async () => {
    // Madrid's next midnight after 2026-03-28 13:00 is 23:00Z (the night before the DST change).
    const midnight = Date.UTC(2026, 2, 28, 23, 0, 0);
    const instants = [midnight - 3_600_000, midnight - 1_000, midnight, midnight + 1_000, midnight + 3_600_000];
    const citas = await walk('/api/v1/citas', instants);
    expect(citas).toEqual([midnight]);
    const llamadas = await walk('/api/v1/llamadas', instants);
    expect(llamadas).toEqual([midnight]);
    // With explicit days nothing moves with time.
    expect(await walk('/api/v1/citas?desde=2026-03-01&hasta=2026-04-30', instants)).toEqual([]);
    expect(await walk('/api/v1/llamadas?desde=2026-03-20', instants)).toEqual([]);
  });

  it('ultima_cita moves when one of her appointments starts: the clientas tag changes exactly then', async () => {
    // Ángela's cita "dstDayEarly" starts at 2026-03-29T00:30+01:00 = 23:30Z; María's and Mario's
    // next ones at 03:00+02:00 (01:00Z) and 23:30+02:00 (21:30Z).
    const angela = Date.UTC(2026, 2, 28, 23, 30, 0);
    const maria = Date.UTC(2026, 2, 29, 1, 0, 0);
    const instants = [angela - 60_000, angela - 1_000, angela, angela + 1_000, maria - 1_000, maria, maria + 60_000];
    expect(await walk('/api/v1/clientas', instants)).toEqual([angela, maria]);
    t.clock.now = angela;
    const body = (await get('/api/v1/clientas')).json() as { clientas: { id: string; ultima_cita: string | null }[] };
    expect(body.clientas.find((c) => c.id === A.angela)!.ultima_cita).toBe('2026-03-29');
  });

  it("a 304 builds no page: one read of the clinic's versions (and, for clientas, one seek for the next start)", async () => {
    const cap = capturing(t.database.db);
    const rt = anotherInstance(t.rt, { ...t.database, db: cap.db });
    const app = await appFor(rt);
    try {
      const expected: Record<string, RegExp[]> = {
        '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31&limit=500': [/from "clinic_data_versions"/],
        '/api/v1/llamadas?limit=500': [/from "clinic_data_versions"/],
        '/api/v1/clientas?limit=500&q=mar': [/from "clinic_data_versions"/, /from "citas" .*"fecha_hora" > .* limit/],
        '/api/v1/eventos?limit=500': [/from "clinic_data_versions"/],
      };
      // The instance's first request with the key, and the background write it makes, before any count.
      expect((await app.inject({ url: ME_PATH, headers: { authorization: `Bearer ${t.keyA}` } })).statusCode).toBe(200);
      await keyUseWritten(cap);
      for (const [url, statements] of Object.entries(expected)) {
        const tag = (await app.inject({ url, headers: { authorization: `Bearer ${t.keyA}` } })).headers.etag as string;
        cap.queries.length = 0;
        const res = await app.inject({ url, headers: { authorization: `Bearer ${t.keyA}`, 'if-none-match': tag } });
        expect(res.statusCode, url).toBe(304);
        // (run in parallel on PostgreSQL: in either order)
        const sent = cap.queries.map((q) => q.sql.replace(/\s+/g, ' '));
        expect(sent, url).toHaveLength(statements.length);
        expect(sent, url).toEqual(expect.arrayContaining(statements.map((re) => expect.stringMatching(re))));
      }
      // The plan comes first: a malformed request is a 400, never a 304.
      expect(
        (await app.inject({ url: '/api/v1/citas?limit=0', headers: { authorization: `Bearer ${t.keyA}`, 'if-none-match': '*' } }))
          .statusCode,
      ).toBe(400);
    } finally {
      await app.close();
      await rt.close();
    }
  });
});
