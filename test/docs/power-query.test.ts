// The Excel query of docs/spreadsheets.md (docs/spreadsheets/clinic-api.pq, shown there verbatim:
// spreadsheets.test.ts). Excel cannot run here, so: Microsoft's own M parser reads the file; the
// request parts the query writes (the path, the query parameters, the headers, the rule that ends
// the walk) are read from the file, and the requests they make are sent to a real listening server
// on both databases, page by page as the query walks, which must answer each with CSV (the same
// records as the JSON), X-Total-Count, and a Link exactly while the walk goes on; and the errors
// the query turns into messages (the statuses of its ManualStatusHandling) must be the API's JSON
// with error.message.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultSettings, TaskUtils } from '@microsoft/powerquery-parser';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { ok, tick } from '../http/helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const M = fs.readFileSync(path.join(ROOT, 'docs/spreadsheets/clinic-api.pq'), 'utf8');
type Json = Record<string, any>;

/** The parts of the request and of the walk, as the query writes them. */
const PARTS = {
  base: 'Web.Contents(\n                Server,',
  path: 'RelativePath = "api/v1/" & List,',
  query: 'Query = Filters & [limit = Text.From(PageSize), offset = Text.From(offset)],',
  headers: 'Headers = [Authorization = "Bearer " & Key, Accept = "text/csv"],',
  manual: 'ManualStatusHandling = {400, 404, 500}',
  problem: 'Problem = Json.Document(Body)[error],',
  message: 'Problem[message] & " (reference " & Problem[request_id] & ")"',
  first: '() => [Offset = 0, Page = GetPage(0)],',
  last: 'if Table.RowCount([Page]) < PageSize then',
  next: '[Offset = [Offset] + PageSize, Page = GetPage([Offset] + PageSize)],',
};
const PAGE_SIZE = Number(/\bPageSize = (\d+),/.exec(M)![1]);

async function lexParse(text: string) {
  return TaskUtils.tryLexParse(DefaultSettings, text);
}

describe('the Excel query (docs/spreadsheets/clinic-api.pq)', () => {
  it("is M that Microsoft's parser reads (and the parser does refuse broken M)", async () => {
    expect((await lexParse(M)).resultKind).toBe('Ok');
    expect((await lexParse(M.replace('PageSize = 500,', 'PageSize = 500'))).resultKind).toBe('Error');
  });

  it('writes the request and the walk that are tested below', () => {
    for (const [name, part] of Object.entries(PARTS)) expect(M, name).toContain(part);
    expect(PAGE_SIZE).toBe(500);
  });
});

describe.each(dialects())('the requests of the Excel query against a real server (%s)', (dialect) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t.close();
  });

  /** One request as Web.Contents(Server, [RelativePath, Query, Headers]) makes it. */
  function getPage(list: string, filters: Record<string, string>, pageSize: number, offset: number, key = t.keyA) {
    const query = new URLSearchParams({ ...filters, limit: String(pageSize), offset: String(offset) });
    return fetch(`${base}/api/v1/${list}?${query}`, { headers: { Authorization: `Bearer ${key}`, Accept: 'text/csv' } });
  }

  it.each([
    ['citas', {}],
    ['clientas', {}],
    ['llamadas', { desde: '2026-01-01' }],
    ['citas', { estado: 'confirmada' }],
  ] as [string, Record<string, string>][])(
    '%s %j: every page is CSV with its paging headers, and the walk reads the JSON records',
    async (list, filters) => {
      const json = await ok<Json>(t, `/api/v1/${list}?${new URLSearchParams({ ...filters, limit: '500' })}`);
      const total = json['total'] as number;
      expect(total, 'the fixtures have several').toBeGreaterThan(2);
      for (const pageSize of [PAGE_SIZE, 2, 1]) {
        tick(t);
        const rows: string[][] = [];
        let columns: string[] = [];
        let requests = 0;
        for (let offset = 0; ; offset += pageSize) {
          const res = await getPage(list, filters, pageSize, offset);
          requests++;
          expect(res.status).toBe(200);
          expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
          expect(res.headers.get('x-total-count')).toBe(String(total));
          const link = res.headers.get('link');
          if (offset + pageSize < total) {
            const next = new URL(/^<([^>]+)>; rel="next"$/.exec(link!)![1]!, base).searchParams;
            expect([next.get('limit'), next.get('offset')]).toEqual([String(pageSize), String(offset + pageSize)]);
          } else expect(link).toBeNull();
          const [header, ...page] = parse(await res.text()) as string[][];
          columns = header!;
          rows.push(...page);
          if (page.length < pageSize) break; // the query's rule: a short page is the last
        }
        expect(requests, `page size ${pageSize}`).toBe(Math.floor(total / pageSize) + 1);
        const records = json[list] as Json[];
        expect(columns).toEqual(Object.keys(records[0]!));
        expect(rows).toEqual(records.map((r) => columns.map((c) => (r[c] === null ? '' : String(r[c])))));
      }
    },
  );

  it("turns the API's errors into its messages: 400 and 404 are JSON with error.message and error.request_id; 401 and 403 stay Excel's own prompt", async () => {
    tick(t);
    const bad = await getPage('citas', { estado: 'bogus' }, PAGE_SIZE, 0);
    expect(bad.status).toBe(400);
    const badError = ((await bad.json()) as Json)['error'];
    expect(badError['message']).toMatch(/estado/);
    expect(badError['request_id']).toEqual(expect.any(String));
    const unknown = await getPage('cita', {}, PAGE_SIZE, 0);
    expect(unknown.status).toBe(404);
    const unknownError = ((await unknown.json()) as Json)['error'];
    expect([unknownError['message'], unknownError['request_id']]).toEqual([expect.any(String), expect.any(String)]);
    const refused = await getPage('citas', {}, PAGE_SIZE, 0, `svc_${'x'.repeat(43)}`);
    expect(refused.status).toBe(401);
    // Outside a custom connector Power Query cannot take 401 and 403 itself, and 429 must keep its automatic retry.
    const manual = /ManualStatusHandling = \{([^}]*)\}/.exec(M)![1]!.split(',').map(Number);
    for (const status of [401, 403, 429]) expect(manual).not.toContain(status);
  });
});
