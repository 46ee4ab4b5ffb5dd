// /llms.txt: plain text for AI tools, written from the OpenAPI document, the error catalogue and
// the configuration, so everything the API offers is in it (and nothing it does not).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { call, expectError } from './helpers.js';

type Json = Record<string, any>;

describe('/llms.txt', () => {
  let t: TestApp;
  let text: string;
  let doc: Json;
  beforeAll(async () => {
    // configured values, to see that the text follows the configuration
    t = await buildTestApp('sqlite', {
      seed: false,
      env: { RATE_LIMIT_RPS: '7', RATE_LIMIT_BURST: '9', AUTH_FAIL_RPS: '3', AUTH_FAIL_BURST: '4', API_KEY_PREFIX: 'acme' },
    });
    const res = await call(t, '/llms.txt', { key: null });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    text = res.body;
    doc = (await call(t, '/api/v1/openapi.json', { key: null })).json();
  });
  afterAll(async () => {
    await t.close();
  });

  it('starts as llms.txt does: a title, then a one-paragraph summary', () => {
    const lines = text.split('\n');
    expect(lines[0]).toBe('# Clinic Integration API');
    expect(lines[1]).toBe('');
    expect(lines[2]).toMatch(/^> Read-only access to a clinic's appointments \(citas\), clients \(clientas\)/);
    for (const section of [
      '## Authentication',
      '## Endpoints',
      '## Records',
      '## Errors',
      '## Limits',
      '## Response headers',
      '## Links',
    ]) {
      expect(lines, section).toContain(section);
    }
  });

  it('lists every operation of the document, with its parameters, its response and an example', () => {
    const ops = Object.entries<Json>(doc['paths']).flatMap(([path, item]) =>
      Object.entries<Json>(item).map(([method, op]) => ({ path, method, op })),
    );
    expect(ops.map((o) => o.op['operationId'])).toEqual([
      'listCitas',
      'getCita',
      'listClientas',
      'getClienta',
      'listLlamadas',
      'getLlamada',
      'listEventos',
      'getMe',
      'createWebhook',
      'listWebhooks',
      'getWebhook',
      'deleteWebhook',
    ]);
    for (const { path, method, op } of ops) {
      const start = text.indexOf(`### ${method.toUpperCase()} ${path}\n`);
      expect(start, path).toBeGreaterThan(0);
      const section = text.slice(start, text.indexOf('\n### ', start + 1));
      expect(section).toContain(`operationId ${op['operationId']}`);
      expect(section).toContain(op['summary']);
      for (const p of (op['parameters'] ?? []) as Json[]) {
        expect(section, `${path} ${p['name']}`).toContain(`- ${p['name']} (`);
        for (const value of p['schema']['enum'] ?? []) expect(section).toContain(value);
        if (p['schema']['default'] !== undefined) expect(section).toContain(`default ${p['schema']['default']}`);
      }
      const ok = op['responses']['200'] ?? op['responses']['201'];
      if (ok) {
        const body = ok['content']['application/json']['schema']['$ref'].split('/').pop();
        expect(section).toContain(`${op['responses']['200'] ? 200 : 201}: ${body}`);
      } else expect(section).toContain('204: ');
      if (path.startsWith('/api/v1/webhooks')) {
        // sends a body or deletes: an example of its own, never run
        expect(section).toMatch(/\n {4}curl (-X (POST|DELETE) )?-H "Authorization: Bearer \$CLINIC_API_KEY"/);
        continue;
      }
      // a record's example takes an id from its list first (two lines, each indented as code)
      expect(section).toContain(`    curl -H "Authorization: Bearer $CLINIC_API_KEY" "$CLINIC_API_URL${path.replace('{id}', '$ID')}`);
      if (path.endsWith('{id}')) {
        expect(section).toContain('    ID=$(curl -s -H "Authorization: Bearer $CLINIC_API_KEY"');
        expect(section).toContain('Path parameters:\n- id (string (uuid); required): ');
      }
      // a list's CSV
      if (op['responses']['200']['content']['text/csv']) expect(section).toContain('200 as text/csv: ');
      // the examples are in the document for the page; the text keeps the description only
      expect(section).not.toContain('```');
    }
    expect(text).toContain('Query parameters: none (any parameter is a 400 unknown_parameter).');
  });

  it('describes every record with all of its fields', () => {
    for (const [name, schema] of Object.entries<Json>(doc['components']['schemas'])) {
      if (name.startsWith('Error')) continue;
      const start = text.indexOf(`### ${name}\n`);
      expect(start, name).toBeGreaterThan(0);
      const section = text.slice(start, text.indexOf('\n#', start + 1));
      for (const field of Object.keys(schema['properties'])) expect(section, `${name}.${field}`).toContain(`- ${field}: `);
    }
    expect(text).toContain('- citas: Cita[]');
    expect(text).toContain('- expires_at: string (date-time), or null.');
  });

  it('lists every error code with its status, and the configured limits and key prefix', () => {
    for (const [code, status] of Object.entries(ERROR_CODES)) expect(text).toContain(`- ${status} ${code}: `);
    expect(text).toContain('Per key: 7 requests per second sustained, bursts of up to 9.');
    expect(text).toContain('Failed authentications per client address: 3 per second, bursts of 4.');
    expect(text).toContain('Keys look like `acme_`');
    for (const h of [
      'X-Request-Id',
      'RateLimit-Policy',
      'RateLimit',
      'Retry-After',
      'WWW-Authenticate',
      'Cache-Control',
      'X-Total-Count',
      'Link',
    ])
      expect(text).toContain(`- ${h}: `);
  });

  it('links to the reference, the OpenAPI document and the licence, which are served', async () => {
    for (const link of ['/docs', '/api/v1/openapi.json', '/docs/license']) {
      expect(text).toContain(`](${link})`);
      expect((await call(t, link, { key: null })).statusCode, link).toBe(200);
    }
  });

  it('holds no rendering accidents', () => {
    expect(text).not.toMatch(/undefined|\[object Object\]|NaN|\bnull\)/);
    expect(text.endsWith('\n')).toBe(true);
  });

  it('is GET-only, like the rest', async () => {
    const res = await call(t, '/llms.txt', { method: 'POST', key: null });
    expectError(res, 405, 'method_not_allowed');
  });

  it('says what each scope grants, which one each endpoint needs, and how a key without it is answered', () => {
    expect(text).toContain('## Scopes');
    for (const s of ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read'])
      expect(text).toMatch(new RegExp(`^- ${s}: `, 'm'));
    expect(text).toMatch(/### GET \/api\/v1\/citas\n\n.*\nNeeds the scope citas:read\./);
    expect(text).toMatch(/### GET \/api\/v1\/me\n\n.*\nNeeds no scope\./);
    expect(text).toContain('403 insufficient_scope');
    expect(text).toContain('ip_not_allowed');
    expect(text).toContain('"scope" (insufficient_scope only)');
  });
});
