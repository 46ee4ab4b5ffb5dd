// The lists' JSON is written by JSON.stringify (http/cached-page.ts), which writes an object's
// own keys in the order they were set: services/shape.ts and services/listings.ts must build every
// page with exactly its schema's fields, in the schema's order. Here each list's body, as sent,
// is held byte for byte to what Fastify's serializer of the list's schema (fast-json-stringify,
// as for any response schema) writes of the same page: a field added, missing, reordered or of another type
// changes the bytes. Every mode of each list (default window, filters, updated_since with its null
// ends, an empty page, offset), for a key with contact details and one without (contacto:read),
// with and without the page cache.
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_COMPONENTS } from '../../src/domain/api-schemas.js';
import { CitasList } from '../../src/collections/citas.js';
import { ClientasList } from '../../src/collections/clientas.js';
import { LlamadasList } from '../../src/collections/llamadas.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { call } from './helpers.js';

/** A Fastify app whose routes answer a given page through each list's 200 schema. */
async function schemaSerializers() {
  const app = Fastify();
  for (const schema of Object.values(API_COMPONENTS)) app.addSchema(schema);
  let page: unknown = null;
  for (const [list, schema] of [
    ['citas', CitasList],
    ['clientas', ClientasList],
    ['llamadas', LlamadasList],
  ] as const)
    app.get(`/${list}`, { schema: { response: { 200: { $ref: `${schema.$id!}#` } } } }, async () => page);
  await app.ready();
  return {
    close: () => app.close(),
    async write(list: string, value: unknown): Promise<string> {
      page = value;
      const res = await app.inject(`/${list}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.body;
    },
  };
}

const URLS: ['citas' | 'clientas' | 'llamadas', string][] = [
  ['citas', '/api/v1/citas'],
  ['citas', '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31&limit=500'],
  ['citas', '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31&estado=cancelada'],
  ['citas', '/api/v1/citas?updated_since=2020-01-01T00:00:00Z'],
  ['citas', '/api/v1/citas?desde=1990-01-01&hasta=1990-01-02'],
  ['clientas', '/api/v1/clientas'],
  ['clientas', '/api/v1/clientas?q=mar&limit=2&offset=1'],
  ['clientas', '/api/v1/clientas?updated_since=2020-01-01T00:00:00Z&vip=true'],
  ['llamadas', '/api/v1/llamadas'],
  ['llamadas', '/api/v1/llamadas?desde=2026-01-01'],
  ['llamadas', '/api/v1/llamadas?updated_since=2020-01-01T00:00:00Z'],
];

let serializers: Awaited<ReturnType<typeof schemaSerializers>>;
beforeAll(async () => {
  serializers = await schemaSerializers();
});
afterAll(async () => {
  await serializers.close();
});

describe.each(dialects())('the lists JSON on %s', (dialect) => {
  for (const pageCacheMb of ['0', '32']) {
    describe(`PAGE_CACHE_MB=${pageCacheMb}`, () => {
      let t: TestApp;
      let noContact: string;
      beforeAll(async () => {
        t = await buildTestApp(dialect, { env: { PAGE_CACHE_MB: pageCacheMb } });
        const scopes = ['citas:read', 'clientas:read', 'llamadas:read'] as const;
        noContact = (
          await t.keys.create({ clinicId: t.clinicA.id, name: 'no contact', expiresAt: null, createdBy: null, scopes: [...scopes] })
        ).key;
      });
      afterAll(async () => {
        await t.close();
      });

      it.each(URLS)('%s %s: the bytes of the schema serializer', async (list, url) => {
        // Twice for each view: built, then (with the cache) sent as kept.
        for (const key of [undefined, noContact])
          for (let i = 0; i < 2; i++) {
            const res = await call(t, url, { key });
            expect(res.statusCode, res.body).toBe(200);
            const page = JSON.parse(res.body) as Record<string, unknown>;
            expect(res.body).toBe(await serializers.write(list, page));
          }
      });

      it('the pages checked hold records with every field set, and nulls', async () => {
        const body = (await call(t, '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31&limit=500')).body;
        const citas = (JSON.parse(body) as { citas: Record<string, unknown>[] }).citas;
        expect(citas.length).toBeGreaterThan(1);
        expect(citas.some((c) => c['notas'] === null)).toBe(true);
        expect(citas.some((c) => typeof c['notas'] === 'string')).toBe(true);
        const blanked = (
          JSON.parse((await call(t, '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31', { key: noContact })).body) as {
            citas: Record<string, unknown>[];
          }
        ).citas;
        expect(blanked.length).toBeGreaterThan(1);
        expect(blanked.every((c) => c['telefono'] === null && c['notas'] === null)).toBe(true);
      });
    });
  }
});
