// /mcp as HTTP and as MCP (docs/ai-assistants.md): the API key's
// authentication (401 with WWW-Authenticate), 405 for anything but POST, stateless requests
// (a tool call needs no initialize), the transport's own JSON-RPC errors, the protocol versions of
// the SDK, bad arguments as tool errors naming the argument, tenancy, a revoked key, the usage
// counts and what a response disclosed. The SDK's client, and plain fetch for what it hides, over
// real HTTP; both databases.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, LATEST_PROTOCOL_VERSION, McpError, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { localDate } from '../../src/time.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A, B, FIXTURE_NOW_MS } from '../helpers/fixtures.js';
import { accessOfEntry, logPage } from '../../src/repos/request-log.js';
import { anotherInstance } from '../helpers/runtime.js';
import { citaA, JSON_UTF8, tick } from '../http/helpers.js';
import { callError, callOk, connect, listen, listenApp } from './helpers.js';

const ACCEPT = 'application/json, text/event-stream';
const MISSING = '0a000009-0000-4000-8000-000000000999';

/** One JSON-RPC message POSTed as it is (no initialize before it: the server is stateless). */
function post(url: URL, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { accept: ACCEPT, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const toolCall = (name: string, args: Record<string, unknown> = {}, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

async function expectApiError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe(JSON_UTF8);
  const body = (await res.json()) as { error: { code: string; message: string; request_id: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.request_id).toBe(res.headers.get('x-request-id'));
  return body.error;
}

describe.each(dialects())('/mcp on %s', (dialect) => {
  let t: TestApp;
  let url: URL;
  let a: Client;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: { RATE_LIMIT_BURST: '1000000' } });
    url = await listen(t);
    a = await connect(url, t.keyA);
  });
  afterAll(async () => {
    await a.close();
    await t.close();
  });
  beforeEach(() => {
    t.clock.now = Math.max(t.clock.now, FIXTURE_NOW_MS);
    tick(t);
  });

  it('without a valid key: 401 in the API error shape with WWW-Authenticate: Bearer, and the SDK client fails to connect', async () => {
    const missing = await post(url, toolCall('get_clinic'));
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="api"');
    await expectApiError(missing, 401, 'missing_api_key');
    for (const authorization of ['Bearer svc_nope', 'Basic abc', `Bearer ${t.keyA}x`]) {
      const res = await post(url, toolCall('get_clinic'), { authorization });
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="api"');
      await expectApiError(res, 401, 'invalid_api_key');
    }
    // authentication comes first: a body that is not even JSON is still a 401 without a key
    await expectApiError(await post(url, '{nope'), 401, 'missing_api_key');
    const err = await connect(url, 'svc_not-a-key-at-all').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(401);
    expect((err as Error).message).toContain('invalid_api_key');
  });

  it('only POST: every other method is a 405 with Allow: POST, before authentication', async () => {
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS']) {
      // DELETE as a client ending a session sends it: a JSON content type and no body
      const res = await fetch(url, { method, headers: { accept: ACCEPT, 'content-type': 'application/json' } });
      expect(res.headers.get('allow'), method).toBe('POST');
      await expectApiError(res, 405, 'method_not_allowed');
      const withKey = await fetch(url, { method, headers: { accept: 'text/event-stream', ...bearer(t.keyA) } });
      expect(withKey.status, method).toBe(405);
    }
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('POST');
  });

  it('stateless: a tool call needs no initialize and no session; the answer carries the API’s headers', async () => {
    const res = await post(url, toolCall('list_citas', { limit: 1 }), bearer(t.keyA));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('ratelimit-policy')).toMatch(/^"key";/);
    expect(res.headers.get('ratelimit')).toMatch(/^"key";r=\d+;t=\d+$/);
    const body = (await res.json()) as { id: number; result: { structuredContent: { citas: unknown[] } } };
    expect(body.id).toBe(1);
    expect(body.result.structuredContent.citas).toHaveLength(1);
    // an incoming request id is echoed, as on every route
    expect(
      (await post(url, toolCall('get_clinic'), { ...bearer(t.keyA), 'x-request-id': 'mcp-trace-1' })).headers.get('x-request-id'),
    ).toBe('mcp-trace-1');
    // a large answer is compressed for a client that accepts it
    const big = await post(url, toolCall('list_citas', { desde: '2026-01-01', hasta: '2026-12-31', limit: 500 }), {
      ...bearer(t.keyA),
      'accept-encoding': 'gzip',
    });
    expect(big.headers.get('content-encoding')).toBe('gzip');
    expect(((await big.json()) as { result: { structuredContent: { citas: unknown[] } } }).result.structuredContent.citas.length).toBe(13);
  });

  it('what is not JSON-RPC gets the transport’s own JSON-RPC errors (parse error, media type, Accept)', async () => {
    const rpcError = async (res: Response, status: number, code: number) => {
      expect(res.status).toBe(status);
      const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string }; id: null };
      expect(body.jsonrpc).toBe('2.0');
      expect(body.error.code).toBe(code);
      return body.error.message;
    };
    expect(await rpcError(await post(url, '{"jsonrpc": "2.0", ', bearer(t.keyA)), 400, -32700)).toContain('Parse error');
    expect(await rpcError(await post(url, '', bearer(t.keyA)), 400, -32700)).toContain('Parse error');
    expect(await rpcError(await post(url, { hello: 'world' }, bearer(t.keyA)), 400, -32700)).toContain('JSON-RPC');
    expect(
      await rpcError(await post(url, toolCall('get_clinic'), { ...bearer(t.keyA), 'content-type': 'text/plain' }), 415, -32000),
    ).toContain('Content-Type');
    expect(
      await rpcError(await post(url, toolCall('get_clinic'), { ...bearer(t.keyA), accept: 'application/json' }), 406, -32000),
    ).toContain('text/event-stream');
    // a tool that does not exist is a protocol error (-32602), as MCP says
    const unknown = await a.callTool({ name: 'delete_everything', arguments: {} }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((unknown as Error).message).toContain('list_citas');
  });

  it('a JSON-RPC batch is refused whole with -32600 before anything in it runs (one POST is one request of the rate limit)', async () => {
    const batch = [toolCall('list_clientas', { limit: 500 }, 1), toolCall('list_citas', { limit: 500 }, 2), toolCall('get_clinic', {}, 3)];
    for (const body of [batch, [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }], []]) {
      const res = await post(url, body, bearer(t.keyA));
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const answer = (await res.json()) as { jsonrpc: string; id: null; error: { code: number; message: string } };
      expect(answer).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } });
      expect(answer.error.message).toBe(
        'Invalid Request: JSON-RPC batches are not accepted (MCP 2025-06-18 removed them). ' +
          'Send each message in its own POST to /mcp; nothing in this batch was run.',
      );
    }
    // the same messages one per POST are answered as ever
    expect((await post(url, batch[2], bearer(t.keyA))).status).toBe(200);
  });

  it('a tools/call whose arguments or params are not an object is -32602 naming what to fix, never a raw -32603', async () => {
    const rpc = async (params: unknown) => {
      const res = await post(url, { jsonrpc: '2.0', id: 7, method: 'tools/call', params }, bearer(t.keyA));
      expect(res.status, `${JSON.stringify(params)}: ${await res.clone().text()}`).toBe(200);
      const body = (await res.json()) as { id: number; error: { code: number; message: string } };
      expect(body.id).toBe(7);
      expect(body.error.code, body.error.message).toBe(ErrorCode.InvalidParams);
      return body.error.message;
    };
    expect(await rpc({ name: 'list_citas', arguments: [10] })).toBe(
      'Invalid argument arguments: arguments must be an object of named arguments, such as {"limit": 10}, not a list (leave it out ' +
        'for none). list_citas takes: desde, hasta, estado, updated_since, limit, offset. Correct it and call list_citas again.',
    );
    expect(await rpc({ name: 'get_clinic', arguments: 'limit=10' })).toMatch(
      /^Invalid argument arguments: .* not a string .*get_clinic takes no arguments\./,
    );
    expect(await rpc({ name: 'list_citas', arguments: null })).toMatch(/not null \(leave it out for none\)/);
    expect(await rpc(undefined)).toMatch(/^Invalid params: they are missing; tools\/call takes params \{"name": "<tool>", "arguments"/);
    expect(await rpc({ arguments: {} })).toMatch(/^Invalid params: name is missing; .*The tools are: (\w+, )*list_citas, /);
    // and through the SDK's client
    const viaClient = await a.callTool({ name: 'list_citas', arguments: [] as unknown as Record<string, unknown> }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(viaClient).toBeInstanceOf(McpError);
    expect((viaClient as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((viaClient as Error).message).toContain('arguments must be an object');
  });

  it('speaks every protocol version of the SDK: initialize agrees on the client’s, or offers the latest', async () => {
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
      const res = await post(
        url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } },
        },
        bearer(t.keyA),
      );
      const body = (await res.json()) as {
        result: {
          protocolVersion: string;
          serverInfo: { name: string; title: string; icons: { src: string; mimeType: string }[] };
          instructions: string;
        };
      };
      expect(body.result.protocolVersion).toBe(version);
      expect(body.result.serverInfo.name).toBe('clinic-api');
      expect(body.result.serverInfo.title).toBe('Clinic API');
      // the icon is self-contained: no URL for a host to fetch
      expect(body.result.serverInfo.icons).toEqual([expect.objectContaining({ mimeType: 'image/svg+xml' })]);
      expect(body.result.serverInfo.icons[0]!.src).toMatch(/^data:image\/svg\+xml;base64,/);
      expect(Buffer.from(body.result.serverInfo.icons[0]!.src.split(',')[1]!, 'base64').toString()).toMatch(/^<svg [^>]*>.*<\/svg>$/);
      expect(body.result.instructions).toContain('Clínica Uno (time zone Europe/Madrid');
      const listed = await post(
        url,
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { ...bearer(t.keyA), 'mcp-protocol-version': version },
      );
      expect(((await listed.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(10);
    }
    const old = await post(
      url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2023-01-01', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
      bearer(t.keyA),
    );
    expect(((await old.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    const unsupported = await post(url, toolCall('get_clinic'), { ...bearer(t.keyA), 'mcp-protocol-version': '1999-01-01' });
    expect(unsupported.status).toBe(400);
  });

  it('a bad argument is a tool error that names the argument and the fix, never a protocol failure', async () => {
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      ['list_citas', { limit: 0 }, 'limit', /integer from 1 to 500/],
      ['list_citas', { limit: 1.5 }, 'limit', /integer from 1 to 500/],
      ['list_citas', { limit: 'ten' }, 'limit', /integer from 1 to 500/],
      ['list_citas', { offset: -1 }, 'offset', /integer from 0/],
      ['list_citas', { offset: null }, 'offset', /leave it out/],
      ['list_citas', { limit: [10, 20] }, 'limit', /one value, not a list/],
      ['list_citas', { estado: { is: 'confirmada' } }, 'estado', /one value, not an object/],
      ['list_citas', { desde: '2026-02-30' }, 'desde', /not a real calendar date/],
      ['list_citas', { desde: '1/3/2026' }, 'desde', /YYYY-MM-DD/],
      ['list_citas', { desde: '2026-05-01', hasta: '2026-04-01' }, 'desde', /must not be after hasta/],
      ['list_citas', { desde: '2026-06-01' }, 'desde', /hasta defaults to today \+ 30 days/],
      ['list_citas', { estado: 'done' }, 'estado', /one of: pendiente, confirmada/],
      ['list_citas', { updated_since: '2026-03-01 10:00' }, 'updated_since', /RFC 3339 .*2026-03-01T10:30:00\+01:00/],
      ['list_citas', { page: 2 }, 'page', /list_citas takes: desde, hasta, estado, updated_since, limit, offset/],
      ['list_clientas', { q: '' }, 'q', /1 to 100 characters/],
      ['list_clientas', { q: '   ' }, 'q', /must hold a name or phone/],
      ['list_clientas', { q: 'a\u0000b' }, 'q', /q /],
      ['list_clientas', { vip: 'yes' }, 'vip', /one of: true, false/],
      ['list_llamadas', { resultado: 'ok' }, 'resultado', /one of: agendada/],
      ['list_eventos', { cursor: 'abc' }, 'cursor', /not a cursor of this feed/],
      ['list_eventos', { tipo: 'cita.borrada' }, 'tipo', /comma-separated list of/],
      ['get_cita', {}, 'id', /id is required/],
      ['get_cita', { id: 'abc' }, 'id', /must be a UUID/],
      ['get_clinic', { verbose: true }, 'verbose', /get_clinic takes no arguments/],
      ['search', {}, 'query', /query is required/],
      ['search', { query: ' ' }, 'query', /must hold a name/],
      ['fetch', { id: 'cita:abc' }, 'id', /clienta:<uuid>, cita:<uuid> or llamada:<uuid>/],
    ];
    for (const [tool, args, param, why] of cases) {
      const text = await callError(a, tool, args);
      const label = `${tool}(${JSON.stringify(args)}): ${text}`;
      expect(text, label).toMatch(new RegExp(`^(Invalid|Unknown) argument ${param}: `));
      expect(text, label).toMatch(why);
      expect(text, label).toMatch(/call (\w+ )?again\.$/);
    }
  });

  it("tenancy: another clinic's records are not found, and its clients are never in a search", async () => {
    const notFound = async (tool: string, id: string) => (await callError(a, tool, { id })).replace(id, '<id>');
    for (const [tool, theirs] of [
      ['get_cita', '0b000002-0000-4000-8000-000000000001'],
      ['get_clienta', B.maria],
      ['get_llamada', '0b000003-0000-4000-8000-000000000001'],
    ] as const) {
      // the same answer as for an id no clinic has
      expect(await notFound(tool, theirs)).toBe(await notFound(tool, MISSING));
    }
    expect(await callError(a, 'fetch', { id: `clienta:${B.maria}` })).toContain('No clienta with id');
    expect(await callError(a, 'fetch', { id: B.maria })).toContain('No record with id');
    for (const q of ['Fernández', 'fernandez', '5512345678', '+525512345678']) {
      expect((await callOk(a, 'search', { query: q })).structured.results).toEqual([]);
      expect((await callOk(a, 'list_clientas', { q })).structured.total).toBe(0);
    }
    const everything = JSON.stringify(
      await Promise.all([
        callOk(a, 'list_citas', { desde: '2026-01-01', hasta: '2026-12-31', limit: 500 }),
        callOk(a, 'list_clientas', { limit: 500 }),
        callOk(a, 'list_llamadas', { desde: '2026-01-01', limit: 500 }),
        callOk(a, 'list_eventos', { limit: 500 }),
        callOk(a, 'search', { query: 'mar' }),
      ]),
    );
    expect(everything).not.toContain('0b00000');
    expect(everything).not.toContain('Fernández');
    expect(everything).not.toContain(t.clinicB.id);
  });

  it('a revoked key is refused at once on the instance that revoked it, and within 5 seconds on another', async () => {
    const rt2 = anotherInstance(t.rt);
    const app2 = await buildApp(rt2);
    let c1: Client | null = null;
    let c2: Client | null = null;
    try {
      const url2 = await listenApp(app2);
      const k = await t.keys.create({ clinicId: t.clinicA.id, name: 'assistant', expiresAt: null, createdBy: null });
      c1 = await connect(url, k.key);
      c2 = await connect(url2, k.key);
      await callOk(c1, 'get_clinic');
      await callOk(c2, 'get_clinic');
      expect(await t.keys.revoke(t.clinicA.id, k.id)).toBe(true);
      const refused = async (c: Client) => {
        const e = await c.callTool({ name: 'get_clinic', arguments: {} }).then(
          () => null,
          (err: unknown) => err,
        );
        expect(e).toBeInstanceOf(StreamableHTTPError);
        expect((e as StreamableHTTPError).code).toBe(401);
      };
      await refused(c1);
      tick(t, 5_000);
      await refused(c2);
    } finally {
      await c1?.close();
      await c2?.close();
      await app2.close();
      await rt2.close();
    }
  });

  it("counts every /mcp request in the key's usage, a tool error under its code, and records each in the request log with what it disclosed, as REST", async () => {
    // A second instance, so that its usage counts and request log hold this key's requests only.
    const rt2 = anotherInstance(t.rt);
    const app2 = await buildApp(rt2);
    let c: Client | null = null;
    try {
      const url2 = await listenApp(app2);
      const k = await t.keys.create({ clinicId: t.clinicA.id, name: 'counted', expiresAt: null, createdBy: null });
      // A response's entry is collected when its last byte has been sent, which may be just after the
      // client has it: each request waits for its entry, so that the log's order is the requests' order.
      const logged = (n: number) =>
        vi.waitFor(async () => {
          await rt2.requestLog!.flush();
          const all = await logPage(t.database.db, t.clinicA.id, { keyId: k.id }, null, 100, 'asc');
          expect(all).toHaveLength(n);
          return all;
        });
      // initialize, notifications/initialized, and the client's GET for a stream, which the
      // stateless server refuses with 405 (recorded too: a request made with a known key): 3 requests
      c = await connect(url2, k.key);
      await logged(3);
      const calls: [string, Record<string, unknown>, string][] = [
        ['list_clientas', { q: 'mar' }, '/api/v1/clientas?q=mar'],
        ['get_clienta', { id: A.angela }, `/api/v1/clientas/${A.angela}`],
        ['list_citas', { limit: 2 }, '/api/v1/citas?limit=2'],
        ['get_cita', { id: citaA(2) }, `/api/v1/citas/${citaA(2)}`],
        ['list_llamadas', { desde: '2026-01-01' }, '/api/v1/llamadas?desde=2026-01-01'],
        ['list_eventos', { limit: 20 }, '/api/v1/eventos?limit=20'],
      ];
      let n = 3;
      for (const [tool, args] of calls) {
        await callOk(c, tool, args);
        await logged(++n);
      }
      await callError(c, 'list_citas', { limit: 0 });
      await logged(++n);
      await callError(c, 'get_cita', { id: MISSING });
      await logged(++n);
      await rt2.usage.flush();
      const day = localDate(Math.floor(t.clock.now / 1000), 'Europe/Madrid');
      const usage = (await rt2.usage.summary(t.clinicA.id, [day])).get(k.id);
      expect(usage?.total).toBe(2 + calls.length + 2);
      expect(usage?.lastErrors.map((e) => [e.status, e.code]).sort()).toEqual([
        [200, 'invalid_parameter'],
        [200, 'not_found'],
      ]);
      // The same requests over REST, with the same key, on the same instance
      for (const [, , path] of calls) {
        const r = await fetch(new URL(path, url2), { headers: { authorization: `Bearer ${k.key}` } });
        expect(r.status, path).toBe(200);
        await r.arrayBuffer();
        await logged(++n);
      }
      const entries = await logged(3 + calls.length + 2 + calls.length);
      expect(entries.filter((e) => e.method === 'GET' && e.path === '/mcp').map((e) => [e.status, e.error_code])).toEqual([
        [405, 'method_not_allowed'],
      ]);
      const mcp = entries.filter((e) => e.path === '/mcp' && e.method === 'POST');
      expect(mcp.map((e) => [e.method, e.status, e.error_code])).toEqual([
        ['POST', 200, null],
        ['POST', 202, null],
        ...calls.map(() => ['POST', 200, null]),
        ['POST', 200, 'invalid_parameter'],
        ['POST', 200, 'not_found'],
      ]);
      const access = (e: { id: number }) => accessOfEntry(t.database.db, t.clinicA.id, e.id).then((ids) => ids.sort());
      // initialize, its notification and the refused calls disclose nothing
      for (const e of [mcp[0]!, mcp[1]!, ...mcp.slice(-2)]) {
        expect(e.records).toBeNull();
        expect(await access(e)).toEqual([]);
      }
      // each tool call: the records and the clientas of the same REST request
      const restEntries = entries.filter((e) => e.path !== '/mcp');
      expect(restEntries).toHaveLength(calls.length);
      for (const [i, [tool]] of calls.entries()) {
        const m = mcp[2 + i]!;
        const r = restEntries[i]!;
        expect(m.records, tool).toBe(r.records);
        expect(m.records, tool).toBeGreaterThan(0);
        expect(await access(m), tool).toEqual(await access(r));
        expect((await access(m)).length, tool).toBeGreaterThan(0);
      }
    } finally {
      await c?.close();
      await app2.close();
      await rt2.close();
    }
  });
});

describe.each(dialects())('the rate limit over /mcp on %s', (dialect) => {
  let t: TestApp;
  let url: URL;
  beforeAll(async () => {
    // 1 request a second, bursts of 3; the clock stands still unless the test moves it.
    t = await buildTestApp(dialect, { env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '3' } });
    url = await listen(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('over the limit, a tool call is a tool result saying when to retry (which an assistant can act on); anything else is the 429', async () => {
    const c = await connect(url, t.keyA); // initialize, notifications/initialized: 2 of 3
    try {
      await callOk(c, 'get_clinic'); // 3 of 3
      const text = await callError(c, 'list_citas', { limit: 1 });
      expect(text).toBe(
        'Rate limited: this API key may make 1 requests per second (bursts of 3) and is over that now. Nothing was read. ' +
          'Retry this call in 1 second(s).',
      );
      // the HTTP answer of a refused tool call: a 200 with the key's RateLimit headers, counted under its code
      const raw = await post(url, toolCall('list_citas'), { authorization: `Bearer ${t.keyA}` });
      expect(raw.status).toBe(200);
      expect(raw.headers.get('ratelimit')).toMatch(/^"key";r=0;t=\d+$/);
      expect(((await raw.json()) as { result: { isError: boolean } }).result.isError).toBe(true);
      // not a tool call: the API's 429, which the SDK's client throws
      const listed = await c.listTools().then(
        () => null,
        (e: unknown) => e,
      );
      expect(listed).toBeInstanceOf(StreamableHTTPError);
      expect((listed as StreamableHTTPError).code).toBe(429);
      expect((listed as Error).message).toContain('too_many_requests');
      const rawList = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: `Bearer ${t.keyA}` });
      expect(rawList.headers.get('retry-after')).toBe('1');
      await expectApiError(rawList, 429, 'too_many_requests');
      // a batch is refused whole, over the limit too (nothing in it runs; not an error of the API's catalogue)
      const batch = await post(url, [toolCall('get_clinic'), toolCall('list_citas', {}, 2)], { authorization: `Bearer ${t.keyA}` });
      expect(batch.status).toBe(400);
      expect(((await batch.json()) as { error: { code: number } }).error.code).toBe(-32600);
      // after the time it said, the same call works
      tick(t, 1_000);
      expect((await callOk(c, 'list_citas', { limit: 1 })).structured.citas).toHaveLength(1);
      await t.app.usage.flush();
      const keyId = (await t.keys.verify(t.keyA))!.keyId;
      const day = localDate(Math.floor(t.clock.now / 1000), 'Europe/Madrid');
      const usage = (await t.app.usage.summary(t.clinicA.id, [day])).get(keyId);
      // 9 requests: 2 to connect, 1 call, 2 refused calls, 2 refused others, 1 refused batch, 1 call
      expect(usage?.total).toBe(9);
      expect(usage?.lastErrors.map((e) => [e.code, e.count])).toEqual([['too_many_requests', 4]]);
    } finally {
      await c.close();
    }
  });
});
