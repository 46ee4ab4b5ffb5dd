// The OpenAPI 3.1 document at /api/v1/openapi.json: what it lists, and that real responses of
// every endpoint (and real errors) validate against the response schemas it publishes.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { call, JSON_UTF8, PATHS, tick, type ApiPath } from './helpers.js';

// ajv-formats is CommonJS: under NodeNext its default import is module.exports, which carries .default.
const addFormats = addFormatsModule.default;

type Schema = Record<string, any>;
interface OpenApiDoc {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, { parameters: { name: string; in: string; required?: boolean; schema: Schema }[]; responses: Record<string, { description: string; content: Record<string, { schema: Schema }> }> }>>;
  components: { securitySchemes: Record<string, Schema> };
  security: Record<string, string[]>[];
}

const PARAMS: Record<ApiPath, string[]> = {
  '/api/v1/citas': ['desde', 'hasta', 'estado', 'limit', 'offset'],
  '/api/v1/clientas': ['q', 'vip', 'limit', 'offset'],
  '/api/v1/llamadas': ['desde', 'hasta', 'resultado', 'limit', 'offset'],
};
const COLLECTION: Record<ApiPath, string> = { '/api/v1/citas': 'citas', '/api/v1/clientas': 'clientas', '/api/v1/llamadas': 'llamadas' };

// Real requests whose answers together hold every shape: nulls and non-nulls, both clinics.
const SAMPLES: Record<ApiPath, string[]> = {
  '/api/v1/citas': ['/api/v1/citas', '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31', '/api/v1/citas?estado=pendiente&limit=1&offset=0'],
  '/api/v1/clientas': ['/api/v1/clientas', '/api/v1/clientas?q=maria&vip=true', '/api/v1/clientas?offset=99'],
  '/api/v1/llamadas': ['/api/v1/llamadas', '/api/v1/llamadas?desde=2026-03-01&hasta=2026-03-31', '/api/v1/llamadas?resultado=transferida'],
};

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
  });
  afterAll(async () => { await t.close(); });
  beforeEach(() => tick(t));

  const responseSchema = (path: ApiPath, status: string): Schema => {
    const r = doc.paths[path]?.get?.responses[status];
    expect(r, `${path} ${status}`).toBeDefined();
    return r!.content['application/json']!.schema;
  };
  const validate = (schema: Schema, body: unknown) => {
    const v = ajv.compile(schema);
    const valid = v(body);
    return { valid, errors: ajv.errorsText(v.errors) };
  };

  it('is served without a key as OpenAPI 3.1.0 with the three paths, GET only, and bearer auth', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('Clinic Integration API');
    expect(Object.keys(doc.paths).sort()).toEqual([...PATHS].sort());
    for (const path of PATHS) expect(Object.keys(doc.paths[path]!), path).toEqual(['get']);
    expect(doc.components.securitySchemes['bearerAuth']).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it.each(PATHS)('%s lists its query parameters with their bounds and defaults', (path) => {
    const params = doc.paths[path]!.get!.parameters;
    expect(params.map((p) => p.name)).toEqual(PARAMS[path]);
    for (const p of params) {
      expect(p.in).toBe('query');
      expect(p.required).toBe(false);
    }
    const byName = Object.fromEntries(params.map((p) => [p.name, p.schema]));
    expect(byName['limit']).toMatchObject({ type: 'integer', minimum: 1, maximum: 500, default: path === '/api/v1/clientas' ? 200 : 100 });
    expect(byName['offset']).toMatchObject({ type: 'integer', minimum: 0, default: 0 });
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

  it.each(PATHS)('%s documents its 200 and its error responses with the error codes', (path) => {
    const responses = doc.paths[path]!.get!.responses;
    expect(Object.keys(responses).sort()).toEqual(['200', '400', '401', '429', '500', '503']);
    for (const status of ['400', '401', '429', '500', '503']) {
      const schema = responseSchema(path, status);
      expect(schema.required).toEqual(['error']);
      const err = schema.properties.error;
      expect(Object.keys(err.properties).sort()).toEqual(['code', 'message', 'param', 'request_id']);
      expect(err.required).toEqual(['code', 'message', 'request_id']);
      expect(err.properties.code.enum).toEqual(Object.keys(ERROR_CODES));
      expect(responses[status]!.description).not.toBe('Default Response');
    }
    expect(responses['400']!.description).toContain('invalid_parameter');
    expect(responses['401']!.description).toContain('missing_api_key');
    expect(responses['429']!.description).toContain('too_many_requests');
    expect(responses['500']!.description).toContain('database_error');
    expect(responses['503']!.description).toContain('service_unavailable');
  });

  it.each(PATHS)('real 200 responses of %s validate against the published schema', async (path) => {
    const schema = responseSchema(path, '200');
    const itemSchema = schema.properties[COLLECTION[path]].items;
    let items = 0;
    for (const [url, key] of [...SAMPLES[path].map((u) => [u, t.keyA]), [SAMPLES[path][0], t.keyB]] as [string, string][]) {
      const res = await call(t, url, { key });
      expect(res.statusCode, url).toBe(200);
      const body = res.json();
      const { valid, errors } = validate(schema, body);
      expect(valid, `${url}: ${errors}`).toBe(true);
      // the document names every field sent, and requires every one of them
      expect(Object.keys(body).sort()).toEqual(Object.keys(schema.properties).sort());
      for (const item of body[COLLECTION[path]]) {
        expect(Object.keys(item).sort()).toEqual(Object.keys(itemSchema.properties).sort());
        expect([...itemSchema.required].sort()).toEqual(Object.keys(itemSchema.properties).sort());
        items++;
      }
    }
    expect(items).toBeGreaterThan(5);
  });

  it('the schemas are not vacuous: a wrong body fails them', async () => {
    const body = (await call(t, '/api/v1/citas')).json();
    const schema = responseSchema('/api/v1/citas', '200');
    expect(validate(schema, body).valid).toBe(true);
    const mutations: ((b: any) => void)[] = [
      (b) => { b.citas[0].precio = '25.50'; },
      (b) => { b.citas[0].fecha_hora = '2026-03-28 09:00'; },
      (b) => { b.citas[0].estado = 'confirmed'; },
      (b) => { b.citas[0].telefono = '600123456'; },
      (b) => { delete b.citas[0].notas; },
      (b) => { b.citas[0].id = 'not-a-uuid'; },
      (b) => { b.rango.desde = '2026-02-30'; },
      (b) => { delete b.total; },
    ];
    for (const mutate of mutations) {
      const copy = structuredClone(body);
      mutate(copy);
      expect(validate(schema, copy).valid, String(mutate)).toBe(false);
    }
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
