// A client generated from the OpenAPI document (openapi-typescript types, the one committed copy
// the SDK is built on: packages/sdk/src/generated/openapi.ts; calls by openapi-fetch) against a
// real server on 127.0.0.1: the three lists (JSON and CSV), a single record and /me, their fields
// typed as the document says. `npm run typecheck` checks this file, so the type assertions below
// (expectTypeOf, @ts-expect-error) fail the build when the document and the client disagree.
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import type { components, paths } from '../../packages/sdk/src/generated/openapi.js';

type Schemas = components['schemas'];

describe('the generated client against a real server', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildTestApp('sqlite');
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t.close();
  });

  // The lists' 200 is JSON or CSV (by Accept): a client for JSON answers names the media type it reads.
  const clientFor = (key: string) =>
    createClient<paths, 'application/json'>({ baseUrl: base, headers: { Authorization: `Bearer ${key}` } });

  it('lists citas with typed parameters and typed records', async () => {
    const api = clientFor(t.keyA);
    const { data, error, response } = await api.GET('/api/v1/citas', {
      params: { query: { desde: '2026-03-01', hasta: '2026-03-31', estado: 'confirmada', limit: 50 } },
    });
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    expectTypeOf(data!).toEqualTypeOf<Schemas['CitasList']>();
    expectTypeOf(data!.citas[0]!).toEqualTypeOf<Schemas['Cita']>();
    expectTypeOf(data!.citas[0]!.estado).toEqualTypeOf<'pendiente' | 'confirmada' | 'completada' | 'cancelada' | 'no_asistio'>();
    expectTypeOf(data!.citas[0]!.notas).toEqualTypeOf<string | null>();
    expect(data!.rango).toEqual({ desde: '2026-03-01', hasta: '2026-03-31' });
    expect(data!.citas.length).toBeGreaterThan(0);
    for (const c of data!.citas) {
      expect(c.estado).toBe('confirmada');
      expect(c.fecha_hora).toMatch(/^2026-03-\d\dT\d\d:\d\d:\d\d\+0[12]:00$/);
      expect(typeof c.precio).toBe('number');
      expect(c.moneda).toBe('EUR');
    }
    // the document's enum reaches the client: a misspelt status does not compile
    // @ts-expect-error 'confirmed' is not an estado
    void api.GET('/api/v1/citas', { params: { query: { estado: 'confirmed' } } });
  });

  it('searches clientas', async () => {
    const { data } = await clientFor(t.keyA).GET('/api/v1/clientas', { params: { query: { q: 'maria', vip: 'true' } } });
    expectTypeOf(data!.clientas[0]!).toEqualTypeOf<Schemas['Clienta']>();
    expectTypeOf(data!.clientas[0]!.ultima_cita).toEqualTypeOf<string | null>();
    expectTypeOf(data!.clientas[0]!.vip).toEqualTypeOf<boolean>();
    expect(data!.total).toBeGreaterThan(0);
    for (const c of data!.clientas) {
      expect(c.vip).toBe(true);
      expect(c.nombre.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()).toContain('maria');
      expect(Number.isInteger(c.total_citas)).toBe(true);
    }
  });

  it('lists llamadas', async () => {
    const { data } = await clientFor(t.keyA).GET('/api/v1/llamadas', { params: { query: { desde: '2026-03-01', hasta: '2026-03-31' } } });
    expectTypeOf(data!).toEqualTypeOf<Schemas['LlamadasList']>();
    expectTypeOf(data!.llamadas[0]!.cliente_nombre).toEqualTypeOf<string | null>();
    expectTypeOf(data!.hasta).toEqualTypeOf<string | null>();
    expect(data!.llamadas.length).toBeGreaterThan(0);
    expect([data!.desde, data!.hasta]).toEqual(['2026-03-01', '2026-03-31']);
    const times = data!.llamadas.map((l) => Date.parse(l.fecha_hora));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it("reads one record by its id, typed as the list's record", async () => {
    const api = clientFor(t.keyA);
    const list = await api.GET('/api/v1/clientas', { params: { query: { limit: 1 } } });
    const id = list.data!.clientas[0]!.id;
    const { data, response } = await api.GET('/api/v1/clientas/{id}', { params: { path: { id } } });
    expect(response.status).toBe(200);
    expectTypeOf(data!).toEqualTypeOf<Schemas['Clienta']>();
    expect(data).toEqual(list.data!.clientas[0]);
    // the path parameter is required
    // @ts-expect-error no id
    void api.GET('/api/v1/clientas/{id}', { params: { path: {} } });
    const missing = await api.GET('/api/v1/citas/{id}', { params: { path: { id: '0a000009-0000-4000-8000-000000000999' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error!.error.code).toBe('not_found');
  });

  it('reads a list as CSV with a client for text/csv', async () => {
    const csv = createClient<paths, 'text/csv'>({ baseUrl: base, headers: { Authorization: `Bearer ${t.keyA}`, Accept: 'text/csv' } });
    const { data, response } = await csv.GET('/api/v1/llamadas', { params: { query: { desde: '2026-03-01', limit: 2 } }, parseAs: 'text' });
    expectTypeOf(data!).toEqualTypeOf<string>();
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(data!.split('\r\n')[0]).toBe(
      'id,fecha_hora,cliente_nombre,telefono_caller,duracion_segundos,resultado,idioma,created_at,updated_at',
    );
    expect(Number(response.headers.get('x-total-count'))).toBeGreaterThan(2);
  });

  it("answers /me with each key's own clinic", async () => {
    const a = await clientFor(t.keyA).GET('/api/v1/me');
    const b = await clientFor(t.keyB).GET('/api/v1/me');
    expectTypeOf(a.data!).toEqualTypeOf<Schemas['Me']>();
    expectTypeOf(a.data!.api_key.expires_at).toEqualTypeOf<string | null>();
    expect(a.data!.clinica).toEqual({ id: t.clinicA.id, nombre: 'Clínica Uno', zona_horaria: 'Europe/Madrid', moneda: 'EUR' });
    expect(b.data!.clinica).toEqual({ id: t.clinicB.id, nombre: 'Clínica Dos', zona_horaria: 'America/Mexico_City', moneda: 'MXN' });
    expect(a.data!.rate_limit).toEqual({ rps: 60, burst: 120 });
    expect(a.response.headers.get('ratelimit-policy')).toBe('"key";q=120;w=2');
    // /me takes no parameters, and the client knows it
    // @ts-expect-error no query parameters on /me
    void clientFor(t.keyA).GET('/api/v1/me', { params: { query: { limit: 1 } } });
  });

  it('types the error body of a refused request', async () => {
    const { data, error, response } = await clientFor('svc_not_a_real_key_0000000000').GET('/api/v1/me');
    expect(data).toBeUndefined();
    expect(response.status).toBe(401);
    expectTypeOf(error!).toEqualTypeOf<Schemas['ErrorResponse']>();
    expect(error!.error.code).toBe('invalid_api_key');
    expect(error!.error.request_id).toBe(response.headers.get('x-request-id'));
  });
});
