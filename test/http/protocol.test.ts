// HTTP protocol: 404 and 405 in the error shape, HEAD, content type, caching,
// request ids, compression, and database failures answered as 500 database_error.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { exchange, parseResponse, connect, within } from '../helpers/raw-http.js';
import { ALL_PATHS, call, expectError, JSON_UTF8, tick, UUID_RE } from './helpers.js';

const OTHER_METHODS = ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'QUERY'] as const;

describe.each(dialects())('HTTP protocol on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  // (`/` itself redirects to the dashboard: test/admin/root.test.ts.)
  it.each(['/api/v1/nope', '/api/v2/citas', '/api', '/index.html', '/api/v1/citas/extra/more', '/api/v1/me/extra', '/api/v1/Citas'])(
    '%s is 404 not_found in the error shape',
    async (path) => {
      for (const key of [t.keyA, null]) {
        const err = expectError(await call(t, path, { key }), 404, 'not_found');
        expect(err.message).toContain(path);
      }
    },
  );

  describe.each(ALL_PATHS)('%s', (path) => {
    it.each(OTHER_METHODS)('%s is 405 method_not_allowed with Allow: GET, HEAD', async (method) => {
      // a QUERY request must carry a Content-Type (RFC 10008; without one Fastify answers 400)
      const headers: Record<string, string> = method === 'QUERY' ? { 'content-type': 'text/plain' } : {};
      for (const key of [t.keyA, null]) {
        const res = await call(t, path, { method, key, headers });
        const err = expectError(res, 405, 'method_not_allowed');
        expect(res.headers['allow']).toBe('GET, HEAD');
        expect(err.message).toContain(method);
      }
    });

    it('HEAD answers 200 with no body and the headers of GET', async () => {
      const get = await call(t, path);
      const head = await call(t, path, { method: 'HEAD' });
      expect(head.statusCode).toBe(200);
      expect(head.body).toBe('');
      for (const h of ['content-type', 'cache-control', 'content-length', 'ratelimit-policy']) {
        expect(head.headers[h], h).toBe(get.headers[h]);
      }
      expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength(get.body));
      expect(head.headers['ratelimit']).toMatch(/^"key";r=\d+;t=\d+$/);
      expect(head.headers['x-request-id']).toMatch(UUID_RE);
    });

    it('HEAD without a key is 401 with no body', async () => {
      const head = await call(t, path, { method: 'HEAD', key: null });
      expect(head.statusCode).toBe(401);
      expect(head.body).toBe('');
      expect(head.headers['www-authenticate']).toBe('Bearer realm="api"');
    });

    it('answers JSON in UTF-8, never cached', async () => {
      const res = await call(t, path);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe(JSON_UTF8);
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('compresses with gzip or br when asked, to the same JSON', async () => {
      // big enough to be worth compressing (> 1 KiB): every record of clinic A
      const url = path.endsWith('clientas') || path.endsWith('eventos') ? `${path}?limit=500` : `${path}?limit=500&desde=2026-01-01`;
      const plain = await call(t, url);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.rawPayload.length).toBeGreaterThan(1024);
      const gz = await call(t, url, { headers: { 'accept-encoding': 'gzip' } });
      expect(gz.statusCode).toBe(200);
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gz.headers['content-type']).toBe(JSON_UTF8);
      expect(String(gz.headers['vary']).toLowerCase()).toContain('accept-encoding');
      expect(gz.rawPayload.length).toBeLessThan(plain.rawPayload.length);
      expect(JSON.parse(gunzipSync(gz.rawPayload).toString('utf8'))).toEqual(plain.json());
      const br = await call(t, url, { headers: { 'accept-encoding': 'br' } });
      expect(br.headers['content-encoding']).toBe('br');
      expect(JSON.parse(brotliDecompressSync(br.rawPayload).toString('utf8'))).toEqual(plain.json());
    });
  });

  it('the OpenAPI document is GET-only too', async () => {
    const res = await call(t, '/api/v1/openapi.json', { method: 'DELETE', key: null });
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers['allow']).toBe('GET, HEAD');
    const doc = await call(t, '/api/v1/openapi.json', { key: null });
    expect([doc.statusCode, doc.headers['content-type'], doc.headers['cache-control']]).toEqual([200, JSON_UTF8, 'no-store']);
  });

  it('sends Content-Type, Cache-Control and X-Request-Id on errors too', async () => {
    const responses = [
      await call(t, '/api/v1/citas?limit=0'),
      await call(t, '/api/v1/citas', { key: null }),
      await call(t, '/nope'),
      await call(t, '/api/v1/citas', { method: 'POST' }),
    ];
    expect(responses.map((r) => r.statusCode)).toEqual([400, 401, 404, 405]);
    for (const r of responses) {
      expect(r.headers['content-type']).toBe(JSON_UTF8);
      expect(r.headers['cache-control']).toBe('no-store');
      expect(r.headers['x-request-id']).toMatch(UUID_RE);
      expect(r.json().error.request_id).toBe(r.headers['x-request-id']);
    }
  });

  it('decides 405 on the method alone: before the body is parsed, and for methods Fastify does not route', async () => {
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/api/v1/citas',
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    expectError(malformed, 405, 'method_not_allowed');
    const xml = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/llamadas',
      headers: { 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    expectError(xml, 405, 'method_not_allowed');
    for (const method of ['PROPFIND', 'SEARCH', 'MKCOL']) {
      const res = await t.app.inject({ method: method as 'GET', url: '/api/v1/clientas' });
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('GET, HEAD');
    }
  });

  it('answers a URL Fastify cannot decode in the error shape, with the usual headers', async () => {
    const res = await call(t, '/api/v1/citas%zz');
    expectError(res, 400, 'invalid_parameter');
    expect(res.headers['x-request-id']).toMatch(UUID_RE);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('tells browsers not to sniff content types, on success and on errors', async () => {
    for (const url of ['/api/v1/citas', '/api/v1/citas?limit=0', '/nope']) {
      expect((await call(t, url)).headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  it('makes request ids that sort by time (UUID version 7), so the request log indexes them in order', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await call(t, '/api/v1/citas')).headers['x-request-id'] as string);
      // The next id in a later millisecond: its time prefix is larger.
      const at = Date.now();
      while (Date.now() === at);
    }
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    // The first 48 bits are the time of the request, in milliseconds.
    const ms = Number.parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16);
    expect(Math.abs(ms - Date.now())).toBeLessThan(60_000);
  });

  it('echoes a sane X-Request-Id and replaces one that is not', async () => {
    const echoed = await call(t, '/api/v1/citas', { headers: { 'x-request-id': 'abc-123' } });
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const echoedError = await call(t, '/api/v1/citas?foo=1', { headers: { 'x-request-id': 'req.42:retry_1' } });
    expect(echoedError.headers['x-request-id']).toBe('req.42:retry_1');
    expect(echoedError.json().error.request_id).toBe('req.42:retry_1');

    for (const bad of ['x'.repeat(300), 'has spaces in it', 'semi;colon', '%C3%B1and%C3%BA', '<script>']) {
      const res = await call(t, '/api/v1/citas?limit=0', { headers: { 'x-request-id': bad } });
      const id = res.headers['x-request-id'];
      expect(id, bad).toMatch(UUID_RE);
      expect(res.json().error.request_id).toBe(id);
    }
    const generated = new Set<string>();
    for (let i = 0; i < 5; i++) generated.add(String((await call(t, '/api/v1/clientas?limit=1')).headers['x-request-id']));
    expect(generated.size).toBe(5);
  });
});

// Node's own check answers a request without Host with a bare 400 and no body, before the app
// sees it: what a real socket gets is what counts, so these go over one.
describe.each(dialects())('HTTP/1.1 without a Host header, over a real socket, on %s', (dialect) => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['GET /api/v1/citas HTTP/1.1', true],
    ['GET /api/v1/citas HTTP/1.1', false],
    ['POST /api/v1/citas HTTP/1.1', true],
    ['GET /api/v1/nope HTTP/1.1', false],
    ['GET /livez HTTP/1.1', false],
  ])('%s (with a key: %s) is 400 malformed_request in the error shape, and the connection closes', async (line, withKey) => {
    const key = withKey ? `Authorization: Bearer ${t.keyA}\r\n` : '';
    const { response } = await exchange(port, `${line}\r\n${key}\r\n`);
    expect(response, 'no HTTP response').not.toBeNull();
    expect([response!.status, response!.headers['content-type'], response!.headers['connection']]).toEqual([400, JSON_UTF8, 'close']);
    const body = JSON.parse(response!.body) as { error: { code: string; message: string; request_id: string } };
    expect(body.error.code).toBe('malformed_request');
    expect(body.error.message).toContain('Host');
    expect(body.error.request_id).toMatch(UUID_RE);
    expect(response!.headers['x-request-id']).toBe(body.error.request_id);
    expect(response!.headers['cache-control']).toBe('no-store');
  });

  it('HTTP/1.0 needs no Host; HTTP/1.1 with one is served on the same kind of socket', async () => {
    const old = await exchange(port, `GET /api/v1/citas HTTP/1.0\r\nAuthorization: Bearer ${t.keyA}\r\n\r\n`);
    expect(old.response?.status).toBe(200);
    const c = await connect(port);
    await c.write(`GET /api/v1/citas HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.keyA}\r\nConnection: close\r\n\r\n`);
    expect(await within(c.closed, 5_000)).toBe(true);
    expect(parseResponse(c.received())?.status).toBe(200);
  });
});

describe.each(dialects())('database failure on %s', (dialect) => {
  const INTERNALS = /sqlite|postgres|kysely|destroy|select|from "|stack|at .*\.ts|driver|pool/i;

  it.each([
    ['the key has been verified before', true],
    ['the key is not yet verified', false],
  ])('answers 500 database_error with Retry-After and no internals when %s', async (_label, warm) => {
    const t = await buildTestApp(dialect);
    try {
      if (warm) expect((await call(t, '/api/v1/citas')).statusCode).toBe(200);
      await t.database.close();
      for (const path of ALL_PATHS) {
        const res = await call(t, path);
        const err = expectError(res, 500, 'database_error');
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(res.headers['retry-after']).toMatch(/^\d+$/);
        expect(err.message).not.toMatch(INTERNALS);
        expect(res.body).not.toMatch(INTERNALS);
      }
    } finally {
      await t.close();
    }
  });
});
