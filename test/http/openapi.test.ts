// The OpenAPI 3.1 document at /api/v1/openapi.json: what it lists (named schemas, operationIds,
// documented headers, servers, tags, licence), and that real responses of every endpoint (and
// real errors) validate against the response schemas it publishes. Linting and the generated
// client are in test/client/.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/domain/scopes.js';
import { ERROR_CODES } from '../../src/errors.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { call, JSON_UTF8, ME_PATH, PATHS, tick, type ApiPath } from './helpers.js';

const FEED_PATH = '/api/v1/eventos';

// ajv-formats is CommonJS: under NodeNext its default import is module.exports, which carries .default.
const addFormats = addFormatsModule.default;

type Schema = Record<string, any>;
interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  parameters?: { name: string; in: string; required?: boolean; schema: Schema }[];
  responses: Record<
    string,
    {
      description: string;
      headers: Record<string, { required: boolean; description: string; schema: Schema }>;
      content?: Record<string, { schema: Schema }>;
    }
  >;
}
interface OpenApiDoc {
  openapi: string;
  info: { title: string; version: string; description: string; license: { name: string; url: string }; contact: { name: string } };
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, Schema>; schemas: Record<string, Schema> };
  security: Record<string, string[]>[];
}

/** One record of each list, as the document writes its path. */
const RECORD_PATHS = ['/api/v1/citas/{id}', '/api/v1/clientas/{id}', '/api/v1/llamadas/{id}'] as const;
type RecordPath = (typeof RECORD_PATHS)[number];
const ALL_PATHS = [...PATHS, ...RECORD_PATHS, FEED_PATH, ME_PATH] as const;
const WEBHOOK_PATHS = ['/api/v1/webhooks', '/api/v1/webhooks/{id}'] as const;
/** The conditional GETs: an ETag on their 200, and a 304. */
const CONDITIONAL: readonly string[] = [...PATHS, ...RECORD_PATHS, FEED_PATH];
const OPERATION_IDS: Record<(typeof ALL_PATHS)[number], string> = {
  '/api/v1/citas': 'listCitas',
  '/api/v1/clientas': 'listClientas',
  '/api/v1/llamadas': 'listLlamadas',
  '/api/v1/citas/{id}': 'getCita',
  '/api/v1/clientas/{id}': 'getClienta',
  '/api/v1/llamadas/{id}': 'getLlamada',
  '/api/v1/eventos': 'listEventos',
  '/api/v1/me': 'getMe',
};
const BODY: Record<(typeof ALL_PATHS)[number], string> = {
  '/api/v1/citas': 'CitasList',
  '/api/v1/clientas': 'ClientasList',
  '/api/v1/llamadas': 'LlamadasList',
  '/api/v1/citas/{id}': 'Cita',
  '/api/v1/clientas/{id}': 'Clienta',
  '/api/v1/llamadas/{id}': 'Llamada',
  '/api/v1/eventos': 'EventosList',
  '/api/v1/me': 'Me',
};
/** The list each record path belongs to. */
const LIST_OF: Record<RecordPath, ApiPath> = {
  '/api/v1/citas/{id}': '/api/v1/citas',
  '/api/v1/clientas/{id}': '/api/v1/clientas',
  '/api/v1/llamadas/{id}': '/api/v1/llamadas',
};
const COMPONENTS = [
  'Cita',
  'Clienta',
  'Llamada',
  'Rango',
  'CitasList',
  'ClientasList',
  'LlamadasList',
  'Eliminado',
  'Evento',
  'EventosList',
  'Clinica',
  'ApiKey',
  'RateLimitPolicy',
  'Me',
  'WebhookEndpoint',
  'WebhookEndpointCreated',
  'WebhookEndpointsList',
  'ErrorDetail',
  'ErrorResponse',
];

const PARAMS: Record<ApiPath, string[]> = {
  '/api/v1/citas': ['desde', 'hasta', 'estado', 'updated_since', 'limit', 'offset'],
  '/api/v1/clientas': ['q', 'vip', 'updated_since', 'limit', 'offset'],
  '/api/v1/llamadas': ['desde', 'hasta', 'resultado', 'updated_since', 'limit', 'offset'],
};
const COLLECTION: Record<ApiPath, string> = { '/api/v1/citas': 'citas', '/api/v1/clientas': 'clientas', '/api/v1/llamadas': 'llamadas' };

// Real requests whose answers together hold every shape: nulls and non-nulls, both clinics.
const SAMPLES: Record<ApiPath, string[]> = {
  '/api/v1/citas': ['/api/v1/citas', '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31', '/api/v1/citas?estado=pendiente&limit=1&offset=0'],
  '/api/v1/clientas': ['/api/v1/clientas', '/api/v1/clientas?q=maria&vip=true', '/api/v1/clientas?offset=99'],
  '/api/v1/llamadas': ['/api/v1/llamadas', '/api/v1/llamadas?desde=2026-03-01&hasta=2026-03-31', '/api/v1/llamadas?resultado=transferida'],
};
// The same with updated_since: every list answers the same shape (rango and desde may be null).
const CHANGED_SAMPLES: Record<ApiPath, string> = {
  '/api/v1/citas': '/api/v1/citas?updated_since=2026-01-01T00:00:00Z',
  '/api/v1/clientas': '/api/v1/clientas?updated_since=2026-01-01T00:00:00Z',
  '/api/v1/llamadas': '/api/v1/llamadas?updated_since=2026-01-01T00:00:00Z',
};

describe('OpenAPI document with OAuth on', () => {
  let t: TestApp;
  let doc: OpenApiDoc;
  beforeAll(async () => {
    t = await buildTestApp('sqlite', { env: { OAUTH_ISSUER: 'https://api.example.com/' } });
    doc = (await call(t, '/api/v1/openapi.json', { key: null })).json() as OpenApiDoc;
  });
  afterAll(async () => {
    await t.close();
  });

  it('has an oauth2 scheme with the authorization-code flow and every scope; each operation names its scope there', () => {
    const scheme = doc.components.securitySchemes['oauth2'] as Schema;
    expect(scheme['type']).toBe('oauth2');
    expect(Object.keys(scheme['flows'])).toEqual(['authorizationCode']);
    expect(scheme['flows'].authorizationCode).toMatchObject({
      authorizationUrl: 'https://api.example.com/oauth/auth',
      tokenUrl: 'https://api.example.com/oauth/token',
      refreshUrl: 'https://api.example.com/oauth/token',
    });
    expect(Object.keys(scheme['flows'].authorizationCode.scopes).sort()).toEqual([...SCOPES].sort());
    expect(doc.security).toEqual([{ bearerAuth: [] }, { oauth2: [] }]);
    expect(doc.paths['/api/v1/citas']!.get!).toMatchObject({ security: [{ bearerAuth: [] }, { oauth2: ['citas:read'] }] });
    expect(doc.paths['/api/v1/eventos']!.get!).toMatchObject({ security: [{ bearerAuth: [] }, { oauth2: ['eventos:read'] }] });
    expect(doc.paths['/api/v1/me']!.get!).toMatchObject({ security: [{ bearerAuth: [] }, { oauth2: [] }] });
  });
});

describe.each(dialects())('OpenAPI document on %s', (dialect) => {
  let t: TestApp;
  let doc: OpenApiDoc;
  let ajv: Ajv2020;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
    const res = await call(t, '/api/v1/openapi.json', { key: null });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(JSON_UTF8);
    doc = res.json() as OpenApiDoc;
    ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    // each named schema by its name, its references to the others rewritten to match
    for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(localRefs(schema), name);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  const localRefs = (schema: Schema): Schema => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"'));
  const named = (schema: Schema): Schema => {
    const ref = schema['$ref'] as string | undefined;
    if (!ref) return schema;
    expect(ref).toMatch(/^#\/components\/schemas\//);
    return doc.components.schemas[ref.slice('#/components/schemas/'.length)]!;
  };
  /** The response's schema as published: a reference to a named schema. */
  const responseSchema = (path: string, status: string): Schema => {
    const r = doc.paths[path]?.get?.responses[status];
    expect(r, `${path} ${status}`).toBeDefined();
    return localRefs(r!.content!['application/json']!.schema);
  };
  const validate = (schema: Schema, body: unknown) => {
    const v = ajv.compile(schema);
    const valid = v(body);
    return { valid, errors: ajv.errorsText(v.errors) };
  };

  it('is served without a key as OpenAPI 3.1.0 with the eight reading paths, GET only, the webhooks, and bearer auth', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('Clinic Integration API');
    expect(Object.keys(doc.paths).sort()).toEqual([...ALL_PATHS, ...WEBHOOK_PATHS].sort());
    for (const path of ALL_PATHS) expect(Object.keys(doc.paths[path]!), path).toEqual(['get']);
    // The subscriptions (test/webhooks/subscriptions.test.ts checks their documents).
    expect(Object.keys(doc.paths['/api/v1/webhooks']!).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/v1/webhooks/{id}']!).sort()).toEqual(['delete', 'get']);
    expect(doc.components.securitySchemes['bearerAuth']).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it('names the server, the licence and the contact; describes every tag it uses', async () => {
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    // the licence's URL on the origin the document was asked from; its text is served there
    expect(doc.info.license).toEqual({ name: 'Proprietary: all rights reserved', url: 'http://localhost:80/docs/license' });
    const viaProxy = await call(t, '/api/v1/openapi.json', { key: null, headers: { host: 'api.clinic.test:8443' } });
    expect(viaProxy.json().info.license.url).toBe('http://api.clinic.test:8443/docs/license');
    const license = await call(t, '/docs/license', { key: null });
    expect([license.statusCode, license.headers['content-type']]).toEqual([200, 'text/plain; charset=utf-8']);
    expect(license.body).toMatch(/all rights\s+reserved/);
    expect(doc.info.contact.name.length).toBeGreaterThan(5);
    const used = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((op) => op.tags)));
    expect(doc.tags.map((tag) => tag.name).sort()).toEqual([...used].sort());
    for (const tag of doc.tags) expect(tag.description.length, tag.name).toBeGreaterThan(20);
  });

  it('has an operationId per operation and names every schema a client receives', async () => {
    expect(Object.keys(doc.components.schemas)).toEqual(COMPONENTS);
    for (const path of ALL_PATHS) {
      const op = doc.paths[path]!.get!;
      expect(op.operationId).toBe(OPERATION_IDS[path]);
      for (const [status, r] of Object.entries(op.responses)) {
        if (status === '304') continue; // no body
        const expected = status === '200' ? BODY[path] : 'ErrorResponse';
        expect(r.content!['application/json']!.schema, `${path} ${status}`).toEqual({ $ref: `#/components/schemas/${expected}` });
        // a list's 200 also as CSV; nothing else
        const csv = status === '200' && (PATHS as readonly string[]).includes(path);
        expect(Object.keys(r.content!), `${path} ${status}`).toEqual(csv ? ['application/json', 'text/csv'] : ['application/json']);
      }
    }
    // records inside the lists are references too, so generated types are named
    expect(doc.components.schemas['CitasList']!.properties.citas.items).toEqual({ $ref: '#/components/schemas/Cita' });
    expect(doc.components.schemas['Me']!.properties.api_key).toEqual({ $ref: '#/components/schemas/ApiKey' });
    // no $id left over, no anonymous def-N
    expect(JSON.stringify(doc)).not.toMatch(/"\$id"|def-\d/);
  });

  it.each(ALL_PATHS)('%s documents the headers of each response, and which are always sent', async (path) => {
    const responses = doc.paths[path]!.get!.responses;
    const headers = (status: string) => Object.fromEntries(Object.entries(responses[status]!.headers).map(([h, d]) => [h, d.required]));
    const etag = CONDITIONAL.includes(path) ? { ETag: true } : {};
    // a list answers JSON or CSV (Vary), and the CSV's paging headers
    const list = (PATHS as readonly string[]).includes(path) ? { Vary: true, 'X-Total-Count': false, Link: false } : {};
    expect(headers('200')).toEqual({
      'X-Request-Id': true,
      'Cache-Control': true,
      'RateLimit-Policy': true,
      RateLimit: true,
      ...etag,
      ...list,
    });
    if (CONDITIONAL.includes(path)) {
      expect(headers('304')).toEqual({
        'X-Request-Id': true,
        'Cache-Control': true,
        'RateLimit-Policy': true,
        RateLimit: true,
        ETag: true,
      });
      expect(responses['304']!.content, '304 has no body').toBeUndefined();
      expect(responses['304']!.description).toContain('If-None-Match');
    }
    expect(headers('400')).toEqual({ 'X-Request-Id': true, 'Cache-Control': true, 'RateLimit-Policy': true, RateLimit: true });
    expect(headers('401')).toEqual({ 'X-Request-Id': true, 'Cache-Control': true, 'WWW-Authenticate': true });
    expect(headers('429')).toEqual({
      'X-Request-Id': true,
      'Cache-Control': true,
      'Retry-After': true,
      'RateLimit-Policy': false,
      RateLimit: false,
    });
    expect(headers('500')).toEqual({
      'X-Request-Id': true,
      'Cache-Control': true,
      'Retry-After': false,
      'RateLimit-Policy': false,
      RateLimit: false,
    });
    for (const r of Object.values(responses)) {
      for (const [name, h] of Object.entries(r.headers)) {
        expect(h.description.length, name).toBeGreaterThan(20);
        expect(h.schema['x-required'], name).toBeUndefined();
      }
    }
    expect(responses['429']!.headers['Retry-After']!.schema).toMatchObject({ type: 'integer', minimum: 1 });
  });

  it.each(ALL_PATHS)('%s has a description with examples in curl, JavaScript and Python', async (path) => {
    const op = doc.paths[path]!.get!;
    expect(op.summary.length).toBeGreaterThan(10);
    if ((RECORD_PATHS as readonly string[]).includes(path)) {
      // a record's examples first take an id from its list
      expect(op.description).toContain('```sh\nID=$(curl -s -H "Authorization: Bearer $CLINIC_API_KEY"');
      expect(op.description).toContain(`curl -H "Authorization: Bearer $CLINIC_API_KEY" "$CLINIC_API_URL${path.replace('{id}', '$ID')}"`);
      expect(op.description).toContain('```js\nconst get = async (path) => {');
    } else {
      expect(op.description).toContain('```sh\ncurl -H "Authorization: Bearer $CLINIC_API_KEY"');
      expect(op.description).toContain(`"$CLINIC_API_URL${path}`);
      expect(op.description).toContain('```js\nconst res = await fetch(');
    }
    expect(op.description).toContain('```python\nimport json, os, urllib.request');
  });

  it("an unknown path's 404 points at the reference", async () => {
    const res = await call(t, '/api/v1/citass', { key: null });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.message).toContain('its reference is at /docs');
  });

  it('the page at /docs reads the very same document', async () => {
    const copy = await call(t, '/docs/json', { key: null });
    expect(copy.statusCode).toBe(200);
    expect(copy.json()).toEqual(doc);
  });

  it.each(PATHS)('%s lists its query parameters with their bounds and defaults', (path) => {
    const params = doc.paths[path]!.get!.parameters!;
    expect(params.map((p) => p.name)).toEqual(PARAMS[path]);
    for (const p of params) {
      expect(p.in).toBe('query');
      expect(p.required).toBe(false);
    }
    const byName = Object.fromEntries(params.map((p) => [p.name, p.schema]));
    expect(byName['limit']).toMatchObject({ type: 'integer', minimum: 1, maximum: 500, default: path === '/api/v1/clientas' ? 200 : 100 });
    expect(byName['offset']).toMatchObject({ type: 'integer', minimum: 0, default: 0 });
    expect(byName['updated_since']).toMatchObject({ type: 'string', format: 'date-time' });
    if (path === '/api/v1/citas') {
      expect(byName['estado']!.enum).toEqual(['pendiente', 'confirmada', 'completada', 'cancelada', 'no_asistio']);
      expect(byName['desde']).toMatchObject({ type: 'string', format: 'date' });
    } else if (path === '/api/v1/llamadas') {
      expect(byName['resultado']!.enum).toEqual(['agendada', 'cancelada', 'info', 'transferida', 'sin_accion']);
      expect(byName['hasta']).toMatchObject({ type: 'string', format: 'date' });
    } else {
      expect(byName['vip']!.enum).toEqual(['true', 'false']);
      expect(byName['q']).toMatchObject({ type: 'string', minLength: 1, maxLength: 100 });
    }
  });

  it.each(ALL_PATHS)('%s documents its 200 and its error responses with the error codes', (path) => {
    const responses = doc.paths[path]!.get!.responses;
    const conditional = CONDITIONAL.includes(path) ? ['304'] : [];
    const feed = path === FEED_PATH ? ['410'] : [];
    const record = (RECORD_PATHS as readonly string[]).includes(path) ? ['404'] : [];
    expect(Object.keys(responses).sort()).toEqual(['200', ...conditional, '400', '401', '403', ...record, ...feed, '429', '500', '503']);
    for (const status of ['400', '401', '403', ...record, ...feed, '429', '500', '503']) {
      const schema = named(responses[status]!.content!['application/json']!.schema);
      expect(schema.required).toEqual(['error']);
      const err = named(schema.properties.error);
      expect(Object.keys(err.properties).sort()).toEqual(['code', 'message', 'param', 'request_id', 'scope']);
      expect(err.required).toEqual(['code', 'message', 'request_id']);
      expect(err.properties.code.enum).toEqual(Object.keys(ERROR_CODES));
      expect(responses[status]!.description).not.toBe('Default Response');
    }
    expect(responses['400']!.description).toContain('invalid_parameter');
    expect(responses['401']!.description).toContain('missing_api_key');
    expect(responses['403']!.description).toContain('ip_not_allowed');
    expect(responses['429']!.description).toContain('too_many_requests');
    expect(responses['500']!.description).toContain('database_error');
    expect(responses['503']!.description).toContain('service_unavailable');
    if (feed.length) expect(responses['410']!.description).toContain('cursor_expired');
    if (record.length) expect(responses['404']!.description).toContain('not_found');
  });

  it.each(RECORD_PATHS)('%s takes the id in the path (a UUID, required), and no query parameter', (path) => {
    const params = doc.paths[path]!.get!.parameters!;
    expect(params).toEqual([
      { in: 'path', name: 'id', required: true, description: expect.stringContaining('UUID'), schema: { type: 'string', format: 'uuid' } },
    ]);
    // the same tag as its list
    expect(doc.paths[path]!.get!.tags).toEqual(doc.paths[LIST_OF[path]]!.get!.tags);
  });

  it.each(PATHS)('%s documents its CSV: a text/csv 200, X-Total-Count and Link', (path) => {
    const ok = doc.paths[path]!.get!.responses['200']!;
    expect(ok.content!['text/csv']!.schema).toMatchObject({ type: 'string', description: expect.stringContaining('RFC 4180') });
    expect(ok.headers['X-Total-Count']!.schema).toMatchObject({ type: 'integer', minimum: 0 });
    expect(ok.headers['Link']!.description).toContain('rel="next"');
  });

  // Swagger UI's "Try it out" fills each parameter's box with its example (or default), and /docs
  // then sends it: an example of updated_since turned the list into its updated-since mode, one of
  // a record's id asked for a record the clinic does not have. Only defaults may be pre-filled:
  // sent or not, a default changes nothing.
  it.each(ALL_PATHS)('%s: no parameter carries an example that "Try it out" would pre-fill', (path) => {
    for (const p of doc.paths[path]!.get!.parameters ?? []) {
      const fields = p as Schema;
      for (const where of [fields, fields['schema'] as Schema])
        for (const key of ['example', 'examples']) expect(where[key], `${path} ${p.name}.${key}`).toBeUndefined();
      expect(fields['content'], `${path} ${p.name}`).toBeUndefined();
    }
  });

  it(`${FEED_PATH} lists its query parameters`, () => {
    const params = doc.paths[FEED_PATH]!.get!.parameters!;
    expect(params.map((p) => p.name)).toEqual(['cursor', 'limit', 'tipo']);
    const byName = Object.fromEntries(params.map((p) => [p.name, p.schema]));
    expect(byName['limit']).toMatchObject({ type: 'integer', minimum: 1, maximum: 500, default: 100 });
    expect(JSON.stringify(params.find((p) => p.name === 'tipo'))).toContain('cita.eliminada');
  });

  it('/api/v1/me takes no parameters', async () => {
    expect(doc.paths[ME_PATH]!.get!.parameters ?? []).toEqual([]);
  });

  it.each(PATHS)('real 200 responses of %s validate against the published schema', async (path) => {
    const schema = responseSchema(path, '200');
    const listSchema = named(doc.paths[path]!.get!.responses['200']!.content!['application/json']!.schema);
    const itemSchema = named(listSchema.properties[COLLECTION[path]].items);
    let items = 0;
    for (const [url, key] of [...SAMPLES[path].map((u) => [u, t.keyA]), [SAMPLES[path][0], t.keyB], [CHANGED_SAMPLES[path], t.keyA]] as [
      string,
      string,
    ][]) {
      const res = await call(t, url, { key });
      expect(res.statusCode, url).toBe(200);
      const body = res.json();
      const { valid, errors } = validate(schema, body);
      expect(valid, `${url}: ${errors}`).toBe(true);
      // the document names every field sent, and requires every one of them
      expect(Object.keys(body).sort()).toEqual(Object.keys(listSchema.properties).sort());
      for (const item of body[COLLECTION[path]]) {
        expect(Object.keys(item).sort()).toEqual(Object.keys(itemSchema.properties).sort());
        expect([...itemSchema.required].sort()).toEqual(Object.keys(itemSchema.properties).sort());
        items++;
      }
    }
    expect(items).toBeGreaterThan(5);
  });

  it.each(RECORD_PATHS)('real 200 responses of %s validate against the published schema, which requires every field', async (path) => {
    const list = LIST_OF[path];
    const schema = responseSchema(path, '200');
    const item = named(doc.components.schemas[BODY[path]]!);
    for (const key of [t.keyA, t.keyB]) {
      const first = (await call(t, `${list}?limit=1`, { key })).json()[COLLECTION[list]][0];
      const res = await call(t, path.replace('{id}', first.id), { key });
      expect(res.statusCode).toBe(200);
      const { valid, errors } = validate(schema, res.json());
      expect(valid, errors).toBe(true);
      expect(Object.keys(res.json()).sort()).toEqual([...item.required].sort());
    }
    for (const [url, status] of [
      [path.replace('{id}', 'not-a-uuid'), '400'],
      [path.replace('{id}', '0a000009-0000-4000-8000-000000000999'), '404'],
    ] as const) {
      const res = await call(t, url);
      expect(String(res.statusCode)).toBe(status);
      expect(validate(responseSchema(path, status), res.json()).valid).toBe(true);
    }
  });

  it('real /api/v1/me responses of both clinics validate against Me, which requires every field', async () => {
    for (const key of [t.keyA, t.keyB]) {
      const res = await call(t, ME_PATH, { key });
      const { valid, errors } = validate(responseSchema(ME_PATH, '200'), res.json());
      expect(valid, errors).toBe(true);
      for (const part of ['clinica', 'api_key', 'rate_limit']) {
        const schema = named(named(doc.components.schemas['Me']!).properties[part]);
        expect(Object.keys(res.json()[part]).sort()).toEqual([...schema.required].sort());
      }
    }
    const body = (await call(t, ME_PATH)).json();
    for (const mutate of [
      (b: any) => {
        b.api_key.expires_at = 'never';
      },
      (b: any) => {
        delete b.rate_limit.burst;
      },
      (b: any) => {
        b.clinica.moneda = 'euro';
      },
    ]) {
      const copy = structuredClone(body);
      mutate(copy);
      expect(validate(responseSchema(ME_PATH, '200'), copy).valid, String(mutate)).toBe(false);
    }
  });

  it("real pages of the change feed validate against EventosList, each datos against its record's schema", async () => {
    const schema = responseSchema(FEED_PATH, '200');
    const res = await call(t, `${FEED_PATH}?limit=500`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(validate(schema, body).valid, validate(schema, body).errors).toBe(true);
    expect(Object.keys(body).sort()).toEqual(Object.keys(named(doc.components.schemas['EventosList']!).properties).sort());
    expect(body.eventos.length).toBeGreaterThan(20);
    // datos of clienta.*, cita.*, llamada.* events is exactly the list's item, every field required.
    const items: Record<string, Schema> = {
      clienta: named({ $ref: '#/components/schemas/Clienta' }),
      cita: named({ $ref: '#/components/schemas/Cita' }),
      llamada: named({ $ref: '#/components/schemas/Llamada' }),
    };
    for (const e of body.eventos) {
      const item = items[e.tipo.split('.')[0]]!;
      const v = validate(localRefs(item), e.datos);
      expect(v.valid, `${e.tipo} ${v.errors}`).toBe(true);
      expect(Object.keys(e.datos).sort()).toEqual([...item.required].sort());
    }
    const wrong = structuredClone(body);
    wrong.eventos[0].tipo = 'cita.borrada';
    expect(validate(schema, wrong).valid).toBe(false);
    const noCursor = structuredClone(body);
    delete noCursor.next_cursor;
    expect(validate(schema, noCursor).valid).toBe(false);
  });

  it('the schemas are not vacuous: a wrong body fails them', async () => {
    const body = (await call(t, '/api/v1/citas')).json();
    const schema = responseSchema('/api/v1/citas', '200');
    expect(validate(schema, body).valid).toBe(true);
    const mutations: ((b: any) => void)[] = [
      (b) => {
        b.citas[0].precio = '25.50';
      },
      (b) => {
        b.citas[0].fecha_hora = '2026-03-28 09:00';
      },
      (b) => {
        b.citas[0].estado = 'confirmed';
      },
      (b) => {
        b.citas[0].telefono = '600123456';
      },
      (b) => {
        delete b.citas[0].notas;
      },
      (b) => {
        b.citas[0].id = 'not-a-uuid';
      },
      (b) => {
        b.rango.desde = '2026-02-30';
      },
      (b) => {
        delete b.total;
      },
    ];
    for (const mutate of mutations) {
      const copy = structuredClone(body);
      mutate(copy);
      expect(validate(schema, copy).valid, String(mutate)).toBe(false);
    }
  });

  it('declares the scopes with OAuth off: the bearer scheme describes each, lists none, and each 403 says which', () => {
    const scheme = doc.components.securitySchemes!['bearerAuth'] as { type: string; scheme: string; description: string };
    expect(scheme).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const s of SCOPES) expect(scheme.description).toContain(`\`${s}\``);
    const needed: Record<(typeof ALL_PATHS)[number], string[]> = {
      '/api/v1/citas': ['citas:read'],
      '/api/v1/clientas': ['clientas:read'],
      '/api/v1/llamadas': ['llamadas:read'],
      '/api/v1/citas/{id}': ['citas:read'],
      '/api/v1/clientas/{id}': ['clientas:read'],
      '/api/v1/llamadas/{id}': ['llamadas:read'],
      '/api/v1/eventos': ['eventos:read'],
      '/api/v1/me': [],
    };
    for (const path of ALL_PATHS) {
      const op = doc.paths[path]!.get! as { security?: unknown; responses: Record<string, { description: string }> };
      // no oauth2 requirement: no such scheme is defined while OAuth is off
      expect(op.security, path).toEqual([{ bearerAuth: [] }]);
      // the scope itself, named without a scheme (llms.txt reads it)
      expect((op as { 'x-scope'?: unknown })['x-scope'], path).toBe(needed[path][0] ?? null);
      expect(doc.components.securitySchemes['oauth2']).toBeUndefined();
      const forbidden = op.responses['403']!.description;
      expect(forbidden).toContain('ip_not_allowed');
      if (needed[path].length) expect(forbidden, path).toContain(`insufficient_scope: the key lacks ${needed[path][0]}`);
      else expect(forbidden).not.toContain('insufficient_scope');
    }
    expect(doc.paths['/api/v1/eventos']!.get!.responses['403']!.description).toContain('tipo');
  });

  it('each contact field is nullable and says it is null without contacto:read; answers without it validate', async () => {
    const contact: Record<string, string[]> = { Cita: ['telefono', 'notas'], Clienta: ['telefono', 'email'], Llamada: ['telefono_caller'] };
    for (const [record, fields] of Object.entries(contact)) {
      const props = named(doc.components.schemas[record]!).properties as Record<string, { type: string[]; description: string }>;
      for (const f of fields) {
        expect(props[f]!.type, `${record}.${f}`).toContain('null');
        expect(props[f]!.description, `${record}.${f}`).toContain('null when the API key lacks the contacto:read scope');
      }
      // and no other field says so
      for (const [name, prop] of Object.entries(props))
        if (!fields.includes(name)) expect(prop.description ?? '').not.toContain('contacto:read');
    }
    const k = await t.keys.create({
      clinicId: t.clinicA.id,
      name: 'no contact',
      expiresAt: null,
      createdBy: null,
      scopes: ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read'],
    });
    for (const path of PATHS) {
      for (const url of SAMPLES[path]) {
        const res = await call(t, url, { key: k.key });
        const { valid, errors } = validate(responseSchema(path, '200'), res.json());
        expect(valid, `${url}: ${errors}`).toBe(true);
      }
    }
    const scoped = await call(t, '/api/v1/citas', {
      key: (await t.keys.create({ clinicId: t.clinicA.id, name: 'me only', expiresAt: null, createdBy: null, scopes: ['contacto:read'] }))
        .key,
    });
    expect(scoped.statusCode).toBe(403);
    expect(validate(responseSchema('/api/v1/citas', '403'), scoped.json()).valid).toBe(true);
  });

  it('real error responses validate against the published error schemas', async () => {
    const cases: [string, string, { key?: string | null }, string][] = [
      ['/api/v1/citas?limit=0', '400', {}, 'invalid_parameter'],
      ['/api/v1/clientas?foo=1', '400', {}, 'unknown_parameter'],
      ['/api/v1/llamadas', '401', { key: null }, 'missing_api_key'],
      ['/api/v1/citas', '401', { key: 'svc_nonexistent_key_123' }, 'invalid_api_key'],
    ];
    for (const [url, status, opts, code] of cases) {
      const res = await call(t, url, opts);
      expect(String(res.statusCode)).toBe(status);
      const path = url.split('?')[0] as ApiPath;
      const { valid, errors } = validate(responseSchema(path, status), res.json());
      expect(valid, `${url}: ${errors}`).toBe(true);
      expect(res.json().error.code).toBe(code);
    }
    const limited = await buildTestApp(dialect);
    try {
      for (let i = 0; i < 120; i++) await call(limited, '/api/v1/clientas?limit=1');
      const res = await call(limited, '/api/v1/clientas');
      expect(res.statusCode).toBe(429);
      expect(validate(responseSchema('/api/v1/clientas', '429'), res.json()).valid).toBe(true);
      await limited.database.close();
      tick(limited, 5_000);
      const failed = await call(limited, '/api/v1/llamadas');
      expect(failed.statusCode).toBe(500);
      expect(validate(responseSchema('/api/v1/llamadas', '500'), failed.json()).valid).toBe(true);
    } finally {
      await limited.close();
    }
  });
});
