// The MCP server's tools against the REST API (docs/ai-assistants.md):
// every tool's structured result is the REST answer to the same request, for both clinics (one in
// Europe/Madrid across both DST changes of 2026, one in America/Mexico_City), with filters,
// defaults and paging; the text beside it names the time zone, the total and the next page; the
// tools are listed read-only with the REST routes' own schemas. The SDK's client over real HTTP,
// both databases.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EventosQuery, MeQuery, RecordParams } from '../../src/domain/api-schemas.js';
import { Cita, CitasList, CitasQuery } from '../../src/collections/citas.js';
import { Clienta, ClientasQuery } from '../../src/collections/clientas.js';
import { LlamadasQuery } from '../../src/collections/llamadas.js';
import { nullableAsAnyOf, type JsonSchema } from '../../src/http/mcp/schemas.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A, B, FIXTURE_NOW_MS } from '../helpers/fixtures.js';
import { ok, tick } from '../http/helpers.js';
import { callOk, connect, listen } from './helpers.js';

type Args = Record<string, string | number | boolean>;

/** The REST query string of a tool's arguments (numbers and booleans as their text). */
const query = (args: Args) => new URLSearchParams(Object.entries(args).map(([k, v]): [string, string] => [k, String(v)])).toString();

const CITAS: Args[] = [
  {},
  // Madrid's 23-hour day (2026-03-29) and its 25-hour day (2026-10-25)
  { desde: '2026-03-29', hasta: '2026-03-29' },
  { desde: '2026-10-25', hasta: '2026-10-25' },
  { desde: '2026-03-28', hasta: '2026-03-30', estado: 'confirmada' },
  { desde: '2026-01-01', hasta: '2026-12-31', limit: 3, offset: 4 },
  { desde: '2026-01-01', hasta: '2026-12-31', limit: 500, offset: 0 },
  { hasta: '2026-04-27', limit: 2 },
  { updated_since: '2026-03-01T00:00:00+01:00', limit: 5 },
  { updated_since: '2026-03-28T12:00:00Z', desde: '2026-03-29' },
];
const CLIENTAS: Args[] = [
  {},
  { q: 'maria' },
  { q: 'MARIA' },
  { q: '600 12' },
  { vip: true },
  { vip: 'false', limit: 2, offset: 1 },
  { q: 'mar', limit: 1, offset: 2 },
];
const LLAMADAS: Args[] = [
  {},
  { desde: '2026-03-01' },
  { desde: '2026-03-21', hasta: '2026-03-21' },
  { desde: '2026-01-01', resultado: 'transferida' },
  { desde: '2026-01-01', limit: 2, offset: 1 },
  { updated_since: '2026-01-01T00:00:00Z' },
];

describe.each(dialects())('MCP tools against REST on %s', (dialect) => {
  let t: TestApp;
  let url: URL;
  let a: Client;
  let b: Client;
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: { RATE_LIMIT_BURST: '1000000' } });
    url = await listen(t);
    a = await connect(url, t.keyA);
    b = await connect(url, t.keyB);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await t.close();
  });
  beforeEach(() => {
    t.clock.now = Math.max(t.clock.now, FIXTURE_NOW_MS);
    tick(t);
  });

  const clients = () =>
    [
      ['A', a, t.keyA],
      ['B', b, t.keyB],
    ] as const;

  it('lists ten read-only tools, their schemas the REST routes’, their descriptions naming the clinic’s time zone', async () => {
    const { tools } = await a.listTools();
    expect(tools.map((x) => x.name)).toEqual([
      'get_clinic',
      'list_citas',
      'get_cita',
      'list_clientas',
      'get_clienta',
      'list_llamadas',
      'get_llamada',
      'list_eventos',
      'search',
      'fetch',
    ]);
    const json = (s: unknown) => JSON.parse(JSON.stringify(s));
    const byName = new Map(tools.map((x) => [x.name, x]));
    for (const tool of tools) {
      // what connector directories ask of a tool: a name within 64 characters, a human title
      expect(tool.name).toMatch(/^[a-z_]{1,64}$/);
      expect(tool.title?.length).toBeGreaterThan(10);
      expect(tool.annotations).toEqual({
        title: tool.title,
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      });
      expect(tool.outputSchema?.type).toBe('object');
      // (search returns names and ids, no times)
      if (tool.name !== 'search') expect(tool.description).toContain('Europe/Madrid');
      // standalone: no reference or id left for a client's validator to trip on
      expect(JSON.stringify(tool)).not.toMatch(/"\$(ref|id)"/);
    }
    // The input schemas ARE the routes' query and path schemas.
    expect(byName.get('list_citas')!.inputSchema).toEqual(json(CitasQuery));
    expect(byName.get('list_clientas')!.inputSchema).toEqual(json(ClientasQuery));
    expect(byName.get('list_llamadas')!.inputSchema).toEqual(json(LlamadasQuery));
    expect(byName.get('list_eventos')!.inputSchema).toEqual(json(EventosQuery));
    expect(byName.get('get_clinic')!.inputSchema).toEqual(json(MeQuery));
    for (const name of ['get_cita', 'get_clienta', 'get_llamada']) expect(byName.get(name)!.inputSchema).toEqual(json(RecordParams));
    // The output schemas are the 200 bodies', with the named records written in and each nullable
    // value as anyOf (no `type` list anywhere: the MCP Inspector warns about those).
    expect(JSON.stringify(tools)).not.toMatch(/"type":\[/);
    const anyOfNulls = (v: unknown): any =>
      Array.isArray(v)
        ? v.map(anyOfNulls)
        : v !== null && typeof v === 'object'
          ? nullableAsAnyOf(Object.fromEntries(Object.entries(v).map(([k, x]) => [k, anyOfNulls(x)])) as JsonSchema)
          : v;
    const { $id: _list, ...citasList } = anyOfNulls(json(CitasList));
    const { $id: _cita, ...cita } = anyOfNulls(json(Cita));
    const { $id: _clienta, ...clienta } = anyOfNulls(json(Clienta));
    expect(byName.get('list_citas')!.outputSchema!.properties).toEqual({
      ...citasList.properties,
      citas: { type: 'array', items: cita },
      rango: expect.objectContaining({ type: 'object' }),
    });
    expect(byName.get('get_clienta')!.outputSchema).toEqual(clienta);
    // The other clinic's tools name its own zone.
    for (const tool of (await b.listTools()).tools) if (tool.name !== 'search') expect(tool.description).toContain('America/Mexico_City');
  });

  it('list_citas answers what GET /api/v1/citas answers, on both DST days, with defaults, filters and paging', async () => {
    for (const [name, client, key] of clients()) {
      for (const args of CITAS) {
        const rest = await ok(t, `/api/v1/citas?${query(args)}`, { key });
        const { structured, text } = await callOk(client, 'list_citas', args);
        expect(structured, `${name} ${JSON.stringify(args)}`).toEqual(rest);
        expect(text).toContain(`${rest.total} appointment`);
        expect(text).toContain(name === 'A' ? 'Europe/Madrid' : 'America/Mexico_City');
        for (const c of rest.citas) expect(text).toContain(c.id);
      }
    }
    // The DST days hold what the REST answer holds: 3 citas on the 23-hour day, 3 on the 25-hour one.
    expect((await callOk(a, 'list_citas', CITAS[1]!)).structured.total).toBe(3);
    expect((await callOk(a, 'list_citas', CITAS[2]!)).structured.total).toBe(3);
  });

  it('list_clientas answers what GET /api/v1/clientas answers (q by name or phone, vip as true/false or "true"/"false")', async () => {
    for (const [name, client, key] of clients()) {
      for (const args of CLIENTAS) {
        const rest = await ok(t, `/api/v1/clientas?${query(args)}`, { key });
        const { structured, text } = await callOk(client, 'list_clientas', args);
        expect(structured, `${name} ${JSON.stringify(args)}`).toEqual(rest);
        expect(text).toContain(`${rest.total} client`);
      }
    }
    expect((await callOk(a, 'list_clientas', { q: '600 12' })).structured.clientas.map((c: { id: string }) => c.id)).toEqual([A.maria]);
  });

  it('list_llamadas answers what GET /api/v1/llamadas answers', async () => {
    for (const [name, client, key] of clients()) {
      for (const args of LLAMADAS) {
        const rest = await ok(t, `/api/v1/llamadas?${query(args)}`, { key });
        const { structured, text } = await callOk(client, 'list_llamadas', args);
        expect(structured, `${name} ${JSON.stringify(args)}`).toEqual(rest);
        expect(text).toContain(`${rest.total} call`);
      }
    }
  });

  it('get_cita, get_clienta, get_llamada answer what GET /api/v1/<list>/{id} answers, for every record of both clinics', async () => {
    const kinds = [
      ['get_cita', 'citas', '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31&limit=500'],
      ['get_clienta', 'clientas', '/api/v1/clientas?limit=500'],
      ['get_llamada', 'llamadas', '/api/v1/llamadas?desde=2026-01-01&limit=500'],
    ] as const;
    for (const [, client, key] of clients()) {
      for (const [tool, items, list] of kinds) {
        const page = await ok(t, list, { key });
        expect(page[items].length).toBeGreaterThan(0);
        for (const item of page[items] as { id: string }[]) {
          const rest = await ok(t, `/api/v1/${items}/${item.id}`, { key });
          const { structured, text } = await callOk(client, tool, { id: item.id });
          expect(structured).toEqual(rest);
          expect(text).toContain(item.id);
        }
        // an id in capitals is the same record, as in the path
        const first = (page[items] as { id: string }[])[0]!.id;
        expect((await callOk(client, tool, { id: first.toUpperCase() })).structured.id).toBe(first);
      }
    }
  });

  it('list_eventos answers what GET /api/v1/eventos answers, followed page by page with next_cursor', async () => {
    for (const [, client, key] of clients()) {
      let cursor: string | null = null;
      let pages = 0;
      for (;;) {
        const args: Args = cursor === null ? { limit: 3 } : { limit: 3, cursor };
        const rest = await ok(t, `/api/v1/eventos?${query(args)}`, { key });
        const { structured, text } = await callOk(client, 'list_eventos', args);
        expect(structured).toEqual(rest);
        expect(text).toContain(`cursor=${rest.next_cursor}`);
        pages++;
        cursor = rest.next_cursor;
        if (!rest.has_more) break;
      }
      expect(pages).toBeGreaterThan(1);
      for (const args of [{ cursor: 'now' }, { tipo: 'cita.creada,llamada.creada', limit: 3 }] as Args[]) {
        expect((await callOk(client, 'list_eventos', args)).structured).toEqual(await ok(t, `/api/v1/eventos?${query(args)}`, { key }));
      }
    }
  });

  it('get_clinic answers what GET /api/v1/me answers, and its text names the zone and the tools', async () => {
    for (const [name, client, key] of clients()) {
      const { structured, text } = await callOk(client, 'get_clinic');
      expect(structured).toEqual(await ok(t, '/api/v1/me', { key }));
      expect(text).toContain(name === 'A' ? 'time zone Europe/Madrid' : 'time zone America/Mexico_City');
      expect(text).toContain('list_citas');
    }
  });

  it("walking list_citas by the text's next-page offsets gives every appointment once, in REST's order", async () => {
    const range = { desde: '2026-01-01', hasta: '2026-12-31' };
    const all = (await ok(t, `/api/v1/citas?${query({ ...range, limit: 500 })}`)).citas.map((c: { id: string }) => c.id);
    const seen: string[] = [];
    let offset = 0;
    for (;;) {
      const { structured, text } = await callOk(a, 'list_citas', { ...range, limit: 4, offset });
      seen.push(...structured.citas.map((c: { id: string }) => c.id));
      const next = /call list_citas again with offset=(\d+)/.exec(text);
      if (!next) {
        expect(text).toContain('This is the last page.');
        break;
      }
      offset = Number(next[1]);
    }
    expect(seen).toEqual(all);
    // past the end: nothing, and the text says where the end is
    const past = await callOk(a, 'list_citas', { ...range, offset: all.length });
    expect(past.structured.citas).toEqual([]);
    expect(past.text).toContain(`use an offset below ${all.length}`);
  });

  it('search finds clients by name or phone digits as list_clientas?q does, and fetch reads each result', async () => {
    for (const [, client, key] of clients()) {
      for (const q of ['maria', 'MARÍA', 'mar', '600', 'nobody at all']) {
        const rest = await ok(t, `/api/v1/clientas?${query({ q, limit: 20 })}`, { key });
        const { structured, text } = await callOk(client, 'search', { query: q });
        // ChatGPT's shape: the text is the JSON of { results: [{ id, title, url }] }
        expect(JSON.parse(text)).toEqual(structured);
        expect(structured.results.map((r: { id: string }) => r.id)).toEqual(rest.clientas.map((c: { id: string }) => `clienta:${c.id}`));
        for (const r of structured.results as { id: string; title: string; url: string }[]) {
          const id = r.id.slice('clienta:'.length);
          expect(r.url).toBe(`${url.origin}/api/v1/clientas/${id}`);
          const fetched = await callOk(client, 'fetch', { id: r.id });
          expect(JSON.parse(fetched.text)).toEqual(fetched.structured);
          const record = await ok(t, `/api/v1/clientas/${id}`, { key });
          expect(fetched.structured).toMatchObject({ id: r.id, url: r.url, metadata: { tipo: 'clienta', updated_at: record.updated_at } });
          expect(fetched.structured.title).toContain(record.nombre);
          expect(fetched.structured.text).toContain(record.nombre);
        }
      }
    }
    // fetch reads every kind, by its prefix or by the bare UUID
    const cita = (await ok(t, '/api/v1/citas?limit=1')).citas[0];
    for (const id of [`cita:${cita.id}`, cita.id]) {
      const fetched = await callOk(a, 'fetch', { id });
      expect(fetched.structured.id).toBe(`cita:${cita.id}`);
      expect(fetched.structured.text).toContain(cita.cliente_nombre);
      expect(fetched.structured.metadata).toEqual({ tipo: 'cita', zona_horaria: 'Europe/Madrid', updated_at: cita.updated_at });
    }
    const llamada = (await ok(t, '/api/v1/llamadas?limit=1')).llamadas[0];
    expect((await callOk(a, 'fetch', { id: `llamada:${llamada.id}` })).structured.url).toBe(`${url.origin}/api/v1/llamadas/${llamada.id}`);
    expect((await callOk(b, 'fetch', { id: `clienta:${B.maria}` })).structured.metadata.zona_horaria).toBe('America/Mexico_City');
  });
});
