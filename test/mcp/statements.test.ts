// The MCP server adds no database read to what REST reads for the same request: each tool runs
// its route's use-case, and nothing else. Every statement sent to the database is recorded (a
// second instance of the service on a handle that captures them, as test/http/conditional.test.ts
// does) for the REST request and then for the tool call: the tool's statements are some of the
// route's (the route also reads the clinic's data version for its ETag, which a tool result has
// no use for). With the page cache off: every REST answer here is a page built from the data.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { capturing } from '../../src/db/explain.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A } from '../helpers/fixtures.js';
import { anotherInstance, keyUseWritten, type TestRuntime } from '../helpers/runtime.js';
import { citaA, llamadaA } from '../http/helpers.js';
import { callOk, connect, listenApp } from './helpers.js';

/** [tool, its arguments, the same request to REST] */
const CASES: [string, Record<string, unknown>, string][] = [
  ['list_citas', { limit: 100 }, '/api/v1/citas?limit=100'],
  [
    'list_citas',
    { desde: '2026-01-01', hasta: '2026-12-31', estado: 'confirmada' },
    '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31&estado=confirmada',
  ],
  ['list_citas', { updated_since: '2026-01-01T00:00:00Z' }, '/api/v1/citas?updated_since=2026-01-01T00:00:00Z'],
  ['list_clientas', {}, '/api/v1/clientas'],
  ['list_clientas', { q: 'mar', limit: 2 }, '/api/v1/clientas?q=mar&limit=2'],
  ['list_clientas', { q: '600', vip: true }, '/api/v1/clientas?q=600&vip=true'],
  ['list_llamadas', { desde: '2026-03-01' }, '/api/v1/llamadas?desde=2026-03-01'],
  ['get_cita', { id: citaA(2) }, `/api/v1/citas/${citaA(2)}`],
  ['get_clienta', { id: A.maria }, `/api/v1/clientas/${A.maria}`],
  ['get_llamada', { id: llamadaA(1) }, `/api/v1/llamadas/${llamadaA(1)}`],
  ['list_eventos', { limit: 5 }, '/api/v1/eventos?limit=5'],
  ['list_eventos', { cursor: 'now' }, '/api/v1/eventos?cursor=now'],
  ['get_clinic', {}, '/api/v1/me'],
];

describe.each(dialects())('database statements of /mcp on %s', (dialect) => {
  let t: TestApp;
  let rt: TestRuntime;
  let app: FastifyInstance;
  let client: Client;
  let cap: ReturnType<typeof capturing>;
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: { RATE_LIMIT_BURST: '1000000', PAGE_CACHE_MB: '0' } });
    cap = capturing(t.database.db);
    rt = anotherInstance(t.rt, { ...t.database, db: cap.db });
    app = await buildApp(rt);
    client = await connect(await listenApp(app), t.keyA);
    // Connecting read the key, which is then marked used in the background: wait for that write
    // (on PostgreSQL it can end during a later request), so no case counts it.
    await keyUseWritten(cap);
  });
  afterAll(async () => {
    await client.close();
    await app.close();
    await rt.close();
    await t.close();
  });

  const rest = (url: string) => app.inject({ url, headers: { authorization: `Bearer ${t.keyA}` } });
  const statements = () => cap.queries.splice(0).map((q) => q.sql.replace(/\s+/g, ' '));

  it.each(CASES)('%s %j: the statements of the REST request, less its ETag’s version read', async (tool, args, url) => {
    // Once each first: a search's counts are kept after its first run, by REST and MCP alike.
    expect((await rest(url)).statusCode).toBe(200);
    await callOk(client, tool, args);
    statements();

    expect((await rest(url)).statusCode).toBe(200);
    const byRest = statements();
    await callOk(client, tool, args);
    const byMcp = statements();

    // (PostgreSQL runs a page's statements in parallel: compared in any order)
    const left = [...byRest];
    for (const s of byMcp) {
      const i = left.indexOf(s);
      expect(i, `${tool} sent a statement REST did not: ${s}\nREST sent: ${byRest.join('\n')}`).toBeGreaterThanOrEqual(0);
      left.splice(i, 1);
    }
    // what REST read besides: its ETag's reads (the clinic's versions, a client's next cita)
    for (const s of left) expect(s).toMatch(/from "clinic_data_versions"|from "citas" .*"fecha_hora" > .* limit/);
    if (tool === 'get_clinic') expect(byMcp).toEqual([]);
    else expect(byMcp.length).toBeGreaterThan(0);
  });
});
