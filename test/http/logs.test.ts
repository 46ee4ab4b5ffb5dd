// No key in any log line, wherever it was pasted (docs/operations.md, "Logs"): the app's real log
// output, at trace level, is captured while keys are sent in the path, in every parameter's name
// and value (plain, percent-encoded, double-encoded), in headers, in requests the HTTP parser
// refuses and in dashboard forms; no part of any secret may appear in it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MASK, redactUrl, secretMasker } from '../../src/http/log.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { exchange } from '../helpers/raw-http.js';
import { call } from './helpers.js';

const secret = () => randomBytes(32).toString('base64url');

describe('log lines never hold a key', () => {
  let t: TestApp;
  const lines: string[] = [];
  // A key under the configured prefix, one of the default shape (another prefix), a real key of
  // the app, a truncated one, and a long opaque token.
  const CONFIGURED = `clin_${secret()}`;
  const OTHER_PREFIX = `svc_${secret()}`;
  const TRUNCATED = `clin_${secret().slice(0, 20)}`;
  const OPAQUE = secret() + secret();
  // A webhook signing secret (whsec_ and standard base64): its + and / cut it into pieces that
  // are each shorter than a long opaque token.
  const b64 = randomBytes(24).toString('base64');
  const WEBHOOK = `whsec_${b64.slice(0, 11)}+${b64.slice(12, 22)}/${b64.slice(23)}`;
  let real: string;

  beforeAll(async () => {
    t = await buildTestApp('sqlite', {
      env: { API_KEY_PREFIX: 'clin', LOG_LEVEL: 'trace' },
      logTo: {
        write: (line: string) => {
          lines.push(line);
        },
      },
    });
    real = t.keyA;
  });
  afterAll(async () => {
    await t.close();
  });

  /** Every 12-character piece of every secret: none may be in the log. */
  function expectNoSecretIn(text: string) {
    for (const key of [CONFIGURED, OTHER_PREFIX, TRUNCATED, OPAQUE, WEBHOOK, real]) {
      const s = key.slice(key.indexOf('_') + 1);
      for (let i = 0; i + 12 <= s.length; i += 6) expect(text, `a piece of ${key.slice(0, 8)}...`).not.toContain(s.slice(i, i + 12));
    }
  }

  it('in the path, every parameter and every header, in any encoding', async () => {
    const keys = [CONFIGURED, OTHER_PREFIX, TRUNCATED, OPAQUE, WEBHOOK, () => real];
    for (const k of keys) {
      const key = typeof k === 'function' ? k() : k;
      const enc = encodeURIComponent(key).replace(/_/g, '%5F');
      const urls = [
        `/api/v1/citas/${key}`,
        `/api/v1/${key}`,
        `/${key}`,
        `/api/v1/citas/${enc}`,
        `/dashboard/${key}`,
        `/api/v1/citas?limit=${key}`,
        `/api/v1/citas?desde=${key}`,
        `/api/v1/citas?${key}`,
        `/api/v1/citas?${key}=1`,
        `/api/v1/clientas?q=${key}`,
        `/api/v1/citas?api_key=${key}`,
        `/api/v1/citas?estado=${enc}`,
        `/api/v1/citas?hasta=${encodeURIComponent(enc)}`,
        `/api/v1/citas?limit=5&offset=${key}&limit=6`,
        `/api/v1/citas%zz?limit=${key}`,
        `/api/v1/citas?vip=%zz${key}`,
        `/dashboard/sign-in?lang=${key}`,
      ];
      for (const url of urls) {
        await call(t, url, { headers: { 'x-request-id': key, 'x-api-key': key, referer: `https://x.example/?k=${key}` } });
        await call(t, url, { key });
      }
      // A dashboard form with the key in every field (and the CSRF check failing).
      await t.app.inject({
        method: 'POST',
        url: `/dashboard/sign-in?next=${key}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ email: key, password: key, _csrf: key, [key]: key }).toString(),
      });
    }
    const text = lines.join('');
    expect(text).toContain('"msg":"request"');
    expectNoSecretIn(text);
  });

  it('keeps what operators need: the path, safe parameter values, UUIDs', async () => {
    lines.length = 0;
    const id = '24858e88-d2f1-40a6-9fc9-91500bc9b3cd';
    await call(t, `/api/v1/citas?limit=5&estado=pendiente`);
    await call(t, `/api/v1/citas/${id}`);
    const urls = lines
      .map((l) => JSON.parse(l) as { req?: { url: string } })
      .filter((l) => l.req)
      .map((l) => l.req!.url);
    expect(urls).toContain('/api/v1/citas?limit=5&estado=pendiente');
    expect(urls).toContain(`/api/v1/citas/${id}`);
  });

  it('in requests the HTTP parser refuses', async () => {
    lines.length = 0;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as { port: number }).port;
    for (const bad of [
      `GET /api/v1/citas HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${CONFIGURED}\r\nX-Bad: \x01\r\n\r\n`,
      `get /api/v1/${OTHER_PREFIX} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /api/v1/citas?k=${OPAQUE} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    ]) {
      expect((await exchange(port, Buffer.from(bad, 'latin1'))).response?.status).toBeGreaterThanOrEqual(400);
    }
    const text = lines.join('');
    expect(text).toContain('request refused by the HTTP parser');
    expect(text).not.toContain('rawPacket');
    expectNoSecretIn(text);
  });
});

describe('redactUrl', () => {
  const mask = secretMasker('clin');
  it.each([
    ['/api/v1/citas?limit=5&offset=10', '/api/v1/citas?limit=5&offset=10'],
    ['/api/v1/clientas?q=maria', `/api/v1/clientas?q=${MASK}`],
    ['/api/v1/citas?foo=bar', `/api/v1/citas?foo=${MASK}`],
    ['/api/v1/citas?limit=clin_abc', `/api/v1/citas?limit=${MASK}`],
    ['/api/v1/citas/clin_abc', `/api/v1/citas/${MASK}`],
    // a test key (test mode), whole
    [`/api/v1/citas/clin_test_${'t'.repeat(43)}`, `/api/v1/citas/${MASK}`],
    ['/api/v1/citas?clin%5Fabc', `/api/v1/citas?${MASK}`],
    [`/x/${'A'.repeat(40)}`, `/x/${MASK}`],
    ['/api/v1/citas/24858e88-d2f1-40a6-9fc9-91500bc9b3cd', '/api/v1/citas/24858e88-d2f1-40a6-9fc9-91500bc9b3cd'],
    ['/api/v1/citas?desde=2026-03-01&hasta=2026-03-31', '/api/v1/citas?desde=2026-03-01&hasta=2026-03-31'],
    ['/api/v1/llamadas?updated_since=2026-03-01T10:30:00Z', '/api/v1/llamadas?updated_since=2026-03-01T10%3A30%3A00Z'],
    [
      '/api/v1/llamadas?updated_since=2026-03-01T10%3A30%3A00%2B01%3A00',
      '/api/v1/llamadas?updated_since=2026-03-01T10%3A30%3A00%2B01%3A00',
    ],
    ['/api/v1/eventos?tipo=cita.actualizada', '/api/v1/eventos?tipo=cita.actualizada'],
    ['/api/v1/citas?desde=whsec_ab%252Bcd%2Bef+gh', `/api/v1/citas?desde=${MASK}`],
    ['/api/v1/eventos?tipo=clin_abc', `/api/v1/eventos?tipo=${MASK}`],
    [`/api/v1/eventos?cursor=${'c'.repeat(40)}`, `/api/v1/eventos?cursor=${MASK}`],
  ])('%s -> %s', (url, logged) => {
    expect(redactUrl(url, mask)).toBe(logged);
  });
});
