// Every answer the API gives a known key carries RateLimit-Policy and RateLimit (the IETF
// httpapi draft) describing that key's limit and what is left of it: successes (JSON, CSV, HEAD,
// 304), refusals of the request (400, 404 for a record and for an unknown path, 405 on the API
// and on /mcp, 406, 415, a body too large), the 429 (with Retry-After) and the MCP server's answers. The
// answers decided before authentication (404 for an unknown path, 405) describe the key's state
// without spending from it. Each answer is listed, so a new kind of answer without them fails here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { citaA } from './helpers.js';

const POLICY = '"key";q=120;w=2';
const STATE_RE = /^"key";r=(\d+);t=(\d+)$/;
const MISSING = '0a000009-0000-4000-8000-000000000099';
const MCP_ACCEPT = 'application/json, text/event-stream';
const toolCall = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_clinic', arguments: {} } });

type Req = { method?: 'GET' | 'HEAD' | 'POST' | 'DELETE' | 'PUT'; url: string; headers?: Record<string, string>; payload?: string };

describe.each(dialects())('RateLimit headers on every answer to a key (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
  });
  afterAll(() => t?.close());

  const send = (r: Req, key = t.keyA) =>
    t.app.inject({ method: r.method ?? 'GET', url: r.url, headers: { ...bearer(key), ...r.headers }, payload: r.payload });

  it('carries them on each kind of answer, with what is left of the key', async () => {
    const etag = String((await send({ url: '/api/v1/clientas' })).headers.etag);
    const answers: [string, Req, number][] = [
      ['a list as JSON', { url: '/api/v1/citas' }, 200],
      ['a list as CSV', { url: '/api/v1/clientas', headers: { accept: 'text/csv' } }, 200],
      ['HEAD', { method: 'HEAD', url: '/api/v1/llamadas' }, 200],
      ['one record', { url: `/api/v1/citas/${citaA(1)}` }, 200],
      ['not modified', { url: '/api/v1/clientas', headers: { 'if-none-match': etag } }, 304],
      ['a bad query', { url: '/api/v1/citas?limit=0' }, 400],
      ['no such record', { url: `/api/v1/citas/${MISSING}` }, 404],
      ['an unknown path under /api/v1/', { url: '/api/v1/citaz' }, 404],
      ['a method the API does not take', { method: 'DELETE', url: '/api/v1/citas' }, 405],
      ['GET on /mcp', { url: '/mcp' }, 405],
      [
        'an MCP call',
        { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json', accept: MCP_ACCEPT }, payload: toolCall },
        200,
      ],
      [
        'an MCP call without SSE in Accept',
        { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json', accept: 'application/json' }, payload: toolCall },
        406,
      ],
      [
        'an MCP call that is not JSON',
        { method: 'POST', url: '/mcp', headers: { 'content-type': 'text/plain', accept: MCP_ACCEPT }, payload: toolCall },
        415,
      ],
      [
        'an MCP call too large',
        {
          method: 'POST',
          url: '/mcp',
          headers: { 'content-type': 'application/json', accept: MCP_ACCEPT },
          payload: `{"x":"${'a'.repeat(2 << 20)}"}`,
        },
        // The API's answer to a body over the limit: 400 (what would be a 413).
        400,
      ],
    ];
    let left = Infinity;
    for (const [what, req, status] of answers) {
      const res = await send(req);
      expect(res.statusCode, what).toBe(status);
      expect(res.headers['ratelimit-policy'], what).toBe(POLICY);
      const m = STATE_RE.exec(String(res.headers['ratelimit']));
      expect(m, `${what}: ${String(res.headers['ratelimit'])}`).not.toBeNull();
      // What is left never grows at one instant (the clock stands still).
      expect(Number(m![1]), what).toBeLessThanOrEqual(left);
      left = Number(m![1]);
    }
  });

  it('carries them on the 429, with Retry-After, and on the unrouted answers of a key over its limit', async () => {
    for (let i = 0; i < 120; i++) await send({ url: '/api/v1/me' }, t.keyB);
    for (const req of [
      { url: '/api/v1/citas' },
      { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json', accept: MCP_ACCEPT }, payload: toolCall },
    ] as Req[]) {
      const res = await send(req, t.keyB);
      expect(res.headers['ratelimit-policy']).toBe(POLICY);
      expect(res.headers['ratelimit']).toMatch(/^"key";r=0;t=\d+$/);
      if (res.statusCode === 429) expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    }
    const unrouted = await send({ method: 'PUT', url: '/api/v1/clientas' }, t.keyB);
    expect(unrouted.statusCode).toBe(405);
    expect(unrouted.headers['ratelimit']).toMatch(/^"key";r=0;t=\d+$/);
  });

  it('carries none without a known key: there is no key whose limit to describe', async () => {
    for (const req of [{ url: '/api/v1/citas' }, { url: '/api/v1/citaz' }, { method: 'DELETE', url: '/api/v1/citas' }] as Req[]) {
      const res = await send(req, 'svc_not-a-key-of-anyone-000000000000000000000000');
      expect(res.headers['ratelimit']).toBeUndefined();
      expect(res.headers['ratelimit-policy']).toBeUndefined();
    }
  });
});
