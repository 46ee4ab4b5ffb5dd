// Property-based tests (fast-check) over query strings, headers and dashboard forms, for every
// route, on both databases: whatever arrives, the answer is never a 5xx, an API error always
// carries a catalogue code with its status, and clinic A's key or owner never sees anything of
// clinic B. Runs are bounded (a few seconds a database); on a failure fast-check prints the seed
// and the shrunk counterexample: rerun it with PROPERTY_SEED=<seed> (and PROPERTY_PATH=<path>).
import zlib from 'node:zlib';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../src/errors.js';
import { Client, csrfOf, EMAILS, buildDashboardApp, type DashboardApp } from '../admin/helpers.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 100);
const params = (runs = RUNS): fc.Parameters<unknown> => ({
  numRuns: runs,
  ...(process.env.PROPERTY_SEED ? { seed: Number(process.env.PROPERTY_SEED), path: process.env.PROPERTY_PATH } : {}),
});

const LIMITS = { RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '1000000', AUTH_FAIL_RPS: '100000', AUTH_FAIL_BURST: '1000000' };
const API_PATHS = ['/api/v1/citas', '/api/v1/clientas', '/api/v1/llamadas'] as const;
const OTHER_PATHS = ['/api/v1/openapi.json', '/livez', '/readyz', '/metrics', '/api/v1', '/api/v1/citas/x', '/'];
const PARAM_NAMES = ['desde', 'hasta', 'estado', 'resultado', 'q', 'vip', 'limit', 'offset', 'api_key', 'lang', 'clinic'];

// Values: plausible ones, text with anything in it (control characters, NUL, lone surrogates,
// emoji, very long), and raw percent-encoded bytes (invalid UTF-8 included).
const plausible = fc.constantFrom(
  '2026-03-01',
  '2026-02-30',
  '1899-12-31',
  '2199-12-31',
  '0',
  '1',
  '500',
  '501',
  '-1',
  '1e2',
  '2147483647',
  '2147483648',
  'true',
  'false',
  'pendiente',
  'confirmada',
  'agendada',
  'info',
  'maria',
  'María',
  '600 12',
  '%',
  '_',
  '',
  ' ',
);
const hostile = fc.constantFrom(
  '\u0000',
  'a\u0000b',
  '\u0000\u0000',
  '\u0001',
  '\u007f',
  '\uD800',
  'x\uDFFFy',
  '\u202E',
  '\u0085',
  'ﬀ',
  '\r\n',
  'x'.repeat(2_000),
  "'; drop table citas; --",
);
const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 24 }), fc.string({ unit: 'grapheme', maxLength: 24 }), hostile, hostile);
const rawBytes = fc.uint8Array({ maxLength: 12 }).map((b) => [...b].map((x) => `%${x.toString(16).padStart(2, '0')}`).join(''));

/** Percent-encodes text when it can (a lone surrogate cannot be), else leaves it for inject to encode. */
function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A plausible value with something hostile inside it, where a parameter's own check would not see it. */
const spiked = fc.tuple(plausible, hostile, plausible).map(([a, h, b]) => `${a}${h}${b}`);
const value = fc.oneof(
  { weight: 2, arbitrary: plausible.map(enc) },
  { weight: 4, arbitrary: spiked.map(enc) },
  { weight: 2, arbitrary: anyText.map(enc) },
  { weight: 1, arbitrary: rawBytes },
);
/** Query strings, mostly of `names` (a route's own parameters), with anything as values. */
const queryOf = (names: readonly string[]) =>
  fc
    .array(
      fc.tuple(
        fc.oneof(
          { weight: 5, arbitrary: fc.constantFrom(...names) },
          { weight: 1, arbitrary: fc.constantFrom(...PARAM_NAMES) },
          { weight: 1, arbitrary: anyText.map(enc) },
        ),
        fc.option(value, { nil: undefined, freq: 8 }),
      ),
      { maxLength: 3 },
    )
    .map((pairs) => pairs.map(([n, v]) => (v === undefined ? n : `${n}=${v}`)).join('&'));
const queryString = queryOf(PARAM_NAMES);
const ROUTE_PARAMS: Record<(typeof API_PATHS)[number], string[]> = {
  '/api/v1/citas': ['desde', 'hasta', 'estado', 'limit', 'offset'],
  '/api/v1/clientas': ['q', 'vip', 'limit', 'offset'],
  '/api/v1/llamadas': ['desde', 'hasta', 'resultado', 'limit', 'offset'],
};

const headerValue = fc.oneof(
  fc.string({ unit: fc.constantFrom(...' !"#$%&\'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~\t'.split('')), maxLength: 40 }),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((s) => s.replace(/[\x00-\x08\x0a-\x1f\x7f]/g, '')),
  fc.uint8Array({ maxLength: 20 }).map((b) =>
    Buffer.from(b)
      .toString('latin1')
      .replace(/[\x00-\x08\x0a-\x1f\x7f]/g, ''),
  ),
);

/**
 * The body as JSON, decoded as the response says it is encoded: the header generator can send
 * Accept-Encoding `*` or `gzip`, and a body over the compression threshold then comes compressed.
 */
const DECODE: Record<string, (b: Buffer) => Buffer> = {
  gzip: zlib.gunzipSync,
  br: zlib.brotliDecompressSync,
  deflate: zlib.inflateSync,
  identity: (b) => b,
};
function jsonOf(res: LightMyRequestResponse): unknown {
  const enc = res.headers['content-encoding'] ?? 'identity';
  const decode = typeof enc === 'string' ? DECODE[enc] : undefined;
  if (decode === undefined) throw new Error(`a content-encoding the test cannot decode: ${String(enc)}`);
  return JSON.parse(decode(res.rawPayload).toString('utf8'));
}

function expectCatalogueError(res: LightMyRequestResponse) {
  const body = jsonOf(res) as { error?: { code?: string; message?: string; request_id?: string } };
  const code = body.error?.code as ErrorCode | undefined;
  expect(code !== undefined && code in ERROR_CODES, `not a catalogue code: ${res.body.slice(0, 200)}`).toBe(true);
  expect(ERROR_CODES[code!]).toBe(res.statusCode);
  expect(typeof body.error?.request_id).toBe('string');
}

/** Every id in a JSON body (any depth). */
function idsIn(body: unknown, out: string[] = []): string[] {
  if (Array.isArray(body)) for (const x of body) idsIn(x, out);
  else if (body && typeof body === 'object') {
    for (const [k, v] of Object.entries(body)) {
      if ((k === 'id' || k.endsWith('_id')) && typeof v === 'string') out.push(v);
      else idsIn(v, out);
    }
  }
  return out;
}

describe.each(dialects())('properties of the API on %s', (dialect) => {
  let t: TestApp;
  let idsOfB: Set<string>;
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: { ...LIMITS, METRICS_TOKEN: 'property-tests-metrics-token-0123456789' } });
    const db = t.database.db;
    const b = t.clinicB.id;
    idsOfB = new Set([
      b,
      ...(await db.selectFrom('citas').select('id').where('clinic_id', '=', b).execute()).map((r) => r.id),
      ...(await db.selectFrom('clientas').select('id').where('clinic_id', '=', b).execute()).map((r) => r.id),
      ...(await db.selectFrom('llamadas').select('id').where('clinic_id', '=', b).execute()).map((r) => r.id),
      ...(await db.selectFrom('api_keys').select('id').where('clinic_id', '=', b).execute()).map((r) => r.id),
    ]);
    // Ids shared by both clinics (an import's own ids) would prove nothing either way.
    for (const table of ['citas', 'clientas', 'llamadas'] as const) {
      for (const r of await db.selectFrom(table).select('id').where('clinic_id', '=', t.clinicA.id).execute()) idsOfB.delete(r.id);
    }
    expect(idsOfB.size).toBeGreaterThan(3);
  });
  afterAll(async () => {
    await t.close();
  });

  // Mostly clinic A's key, so that most requests reach the database.
  const authorization = () =>
    fc.oneof(
      { weight: 12, arbitrary: fc.constant(`Bearer ${t.keyA}`) },
      { weight: 1, arbitrary: headerValue },
      { weight: 1, arbitrary: headerValue.map((h) => `Bearer ${h}`) },
      { weight: 1, arbitrary: fc.constant(`Bearer ${t.keyB.slice(0, -1)}x`) },
    );

  it.each(API_PATHS)('%s with any query string and headers: never a 5xx, always a catalogue code, never clinic B', async (path) => {
    await fc.assert(
      fc.asyncProperty(
        queryOf(ROUTE_PARAMS[path]),
        fc.option(authorization(), { nil: undefined, freq: 20 }),
        fc.dictionary(
          fc.constantFrom(
            'x-request-id',
            'accept-encoding',
            'accept-language',
            'cookie',
            'content-type',
            'x-forwarded-for',
            'if-none-match',
          ),
          headerValue,
          { maxKeys: 3 },
        ),
        fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'OPTIONS'),
        async (qs, auth, headers, method) => {
          const res = await t.app.inject({
            method: method as 'GET',
            url: qs ? `${path}?${qs}` : path,
            headers: { ...headers, ...(auth === undefined ? {} : { authorization: auth }) },
          });
          expect(res.statusCode, res.body.slice(0, 300)).toBeLessThan(500);
          if (method === 'HEAD') return;
          if (res.statusCode >= 400) return expectCatalogueError(res);
          if (res.statusCode === 304) {
            // If-None-Match "*" (RFC 9110 13.1.2: any current representation matches) or a tag
            // that matches: only ever for a request that sent one, and with no body.
            expect(headers['if-none-match'], 'a 304 without If-None-Match').toBeDefined();
            expect(res.body).toBe('');
            return;
          }
          expect(res.statusCode).toBe(200);
          const leaked = idsIn(jsonOf(res)).filter((id) => idsOfB.has(id));
          expect(leaked).toEqual([]);
        },
      ),
      // The API answers in a millisecond or two: twice the runs for the same time.
      params(RUNS * 2),
    );
  });

  it('any query string on the other paths (OpenAPI, health, metrics, unknown): never a 5xx, errors in the shape', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...OTHER_PATHS),
        queryString,
        fc.option(authorization(), { nil: undefined }),
        async (path, qs, auth) => {
          const res = await t.app.inject({
            method: 'GET',
            url: qs ? `${path}?${qs}` : path,
            headers: auth === undefined ? {} : { authorization: auth },
          });
          expect(res.statusCode, res.body.slice(0, 300)).toBeLessThan(500);
          if (res.statusCode >= 400) expectCatalogueError(res);
        },
      ),
      params(),
    );
  });
});

describe.each(dialects())('properties of the dashboard on %s', (dialect) => {
  let d: DashboardApp;
  let owner: Client;
  let bIds: string[];
  beforeAll(async () => {
    d = await buildDashboardApp(dialect, {
      admin: { throttle: { ipBurst: 1_000_000, accountIpBurst: 1_000_000, accountBurst: 1_000_000 } },
    });
    const keyB = await d.keys.create({ clinicId: d.clinicB.id, name: 'Clave de B', expiresAt: null, createdBy: null });
    bIds = [d.clinicB.id, keyB.id];
    owner = new Client(d.app);
    await owner.signIn(EMAILS.ownerA);
  });
  afterAll(async () => {
    await d.close();
  });

  const fieldValue = fc.oneof(plausible, anyText, fc.constantFrom('never', '30', '365', 'es', 'en', '/dashboard/settings/api'));
  const form = fc.dictionary(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('email', 'password', 'name', 'expires', 'clinic', 'lang', 'next', '_csrf') },
      { weight: 1, arbitrary: anyText },
    ),
    fieldValue,
    { maxKeys: 5 },
  );

  /** A form body as a browser would send it (lone surrogates sent as inject gets them). */
  const body = (f: Record<string, string>) =>
    Object.entries(f)
      .map(([k, v]) => `${enc(k)}=${enc(v)}`)
      .join('&');

  /** Never a 5xx; nothing of clinic B (an id the request itself names may be echoed, e.g. in a link back to it). */
  function expectPage(res: LightMyRequestResponse, url: string) {
    expect(res.statusCode, res.body.slice(0, 300)).toBeLessThan(500);
    for (const s of [d.clinicB.name, 'Clave de B', ...bIds.filter((id) => !url.includes(id))]) expect(res.body).not.toContain(s);
  }

  it('any form posted by the signed-in owner of clinic A, with a valid CSRF token or not: never a 5xx, nothing of clinic B', async () => {
    const page = await owner.get('/dashboard/settings/api');
    const csrf = csrfOf(page.body);
    const cookie = [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          '/dashboard/settings/api/keys',
          '/dashboard/language',
          '/dashboard/settings/api/keys/x/revoke',
          `/dashboard/settings/api/keys/${bIds[1]}/revoke`,
          `/dashboard/settings/api/keys/${bIds[1]}/edit`,
          `/dashboard/settings/api/keys/${bIds[1]}/roll`,
          '/dashboard/settings/api/keys/x/roll',
        ),
        form,
        fc.boolean(),
        queryString,
        async (url, f, withCsrf, qs) => {
          const res = await d.app.inject({
            method: 'POST',
            url: qs ? `${url}?${qs}` : url,
            remoteAddress: owner.ip,
            headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: 'http://localhost' },
            payload: body(withCsrf ? { ...f, _csrf: csrf } : f),
          });
          expectPage(res, url);
        },
      ),
      params(),
    );
  });

  it('any query string on every dashboard page, signed in or not: never a 5xx, nothing of clinic B', async () => {
    const cookie = [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          '/dashboard',
          '/dashboard/sign-in',
          '/dashboard/settings/api',
          '/dashboard/settings/api/keys/x/revoke',
          `/dashboard/settings/api/keys/${bIds[1]}/revoke`,
          `/dashboard/settings/api/keys/${bIds[1]}/edit`,
          `/dashboard/settings/api/keys/${bIds[1]}/roll`,
          '/dashboard/nope',
        ),
        queryString,
        fc.boolean(),
        fc.option(headerValue, { nil: undefined }),
        async (path, qs, signedIn, language) => {
          const res = await d.app.inject({
            method: 'GET',
            url: qs ? `${path}?${qs}` : path,
            headers: { ...(signedIn ? { cookie } : {}), ...(language === undefined ? {} : { 'accept-language': language }) },
          });
          expectPage(res, path);
        },
      ),
      params(),
    );
  });

  it('any sign-in form: never a 5xx', async () => {
    const visitor = new Client(d.app, '198.51.100.77');
    const csrf = csrfOf((await visitor.get('/dashboard/sign-in')).body);
    const cookie = [...visitor.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    await fc.assert(
      fc.asyncProperty(form, fc.boolean(), async (f, withCsrf) => {
        const res = await d.app.inject({
          method: 'POST',
          url: '/dashboard/sign-in',
          remoteAddress: visitor.ip,
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: 'http://localhost' },
          payload: body(withCsrf ? { ...f, _csrf: csrf } : f),
        });
        expectPage(res, '/dashboard/sign-in');
      }),
      params(Math.min(RUNS, 25)), // each valid attempt pays for one scrypt
    );
  });
});
