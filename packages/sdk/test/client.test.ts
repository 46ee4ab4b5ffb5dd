// The SDK against the real service on 127.0.0.1, on both databases: a method per endpoint (the
// three lists, one record of each, /me), their answers typed from the OpenAPI document, the API's
// errors as ClinicApiError (code, param, status, requestId), an OAuth token getter, and the
// If-None-Match cache. `npm run typecheck` checks this file's type assertions too.
import {
  ClinicApi,
  ClinicApiError,
  type Cita,
  type CitasList,
  type Clienta,
  type Llamada,
  type Me,
  type ResponseInfo,
} from '@clinic-api/sdk';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { seedRecords } from '../../../test/helpers/app.js';
import { dialects } from '../../../test/helpers/db.js';
import { A, citaRecord, uid } from '../../../test/helpers/fixtures.js';
import { listeningApp, pathOf, recordingFetch, type ListeningApp } from './helpers.js';

describe.each(dialects())('ClinicApi against the service on %s', (dialect) => {
  let t: ListeningApp;
  let api: ClinicApi;
  beforeAll(async () => {
    t = await listeningApp(dialect, { env: { RATE_LIMIT_RPS: '10000', RATE_LIMIT_BURST: '10000' } });
    api = new ClinicApi({ baseUrl: t.baseUrl, apiKey: t.keyA });
  });
  afterAll(async () => {
    await t.close();
  });

  it("me(): the key's clinic, key and rate limit", async () => {
    const me = await api.me();
    expectTypeOf(me).toEqualTypeOf<Me>();
    expect(me.clinica).toMatchObject({ id: t.clinicA.id, nombre: 'Clínica Uno', zona_horaria: 'Europe/Madrid', moneda: 'EUR' });
    expect(me.api_key.nombre).toBe('A');
    expect(me.rate_limit).toEqual({ rps: 10000, burst: 10000 });
  });

  it('lists each collection with typed filters, and reads one record of each by its id', async () => {
    const page = await api.citas.list({ desde: '2026-03-28', hasta: '2026-03-29', estado: 'confirmada', limit: 50 });
    expectTypeOf(page).toEqualTypeOf<CitasList>();
    expectTypeOf(page.citas[0]!.estado).toEqualTypeOf<'pendiente' | 'confirmada' | 'completada' | 'cancelada' | 'no_asistio'>();
    expect(page.rango).toEqual({ desde: '2026-03-28', hasta: '2026-03-29' });
    expect(page.citas.length).toBeGreaterThan(0);
    for (const c of page.citas) expect(c.estado).toBe('confirmada');
    // @ts-expect-error 'confirmed' is not an estado: the document's enum reaches the SDK
    await expect(api.citas.list({ estado: 'confirmed' })).rejects.toMatchObject({ code: 'invalid_parameter', param: 'estado' });

    // vip as a boolean, sent as the API's "true"
    const vip = await api.clientas.list({ q: 'maria', vip: true });
    expect(vip.clientas.map((c) => c.nombre).sort()).toEqual(['María José Núñez', 'maria lopez']);
    const calls = await api.llamadas.list({ desde: '2026-03-20', resultado: 'transferida' });
    expect(calls.llamadas).toHaveLength(1);

    const cita = await api.citas.get(page.citas[0]!.id);
    expectTypeOf(cita).toEqualTypeOf<Cita>();
    expect(cita).toEqual(page.citas[0]);
    const clienta = await api.clientas.get(A.maria);
    expectTypeOf(clienta).toEqualTypeOf<Clienta>();
    expect(clienta.nombre).toBe('María José Núñez');
    const llamada = await api.llamadas.get(calls.llamadas[0]!.id);
    expectTypeOf(llamada).toEqualTypeOf<Llamada>();
    expect(llamada.resultado).toBe('transferida');
  });

  it('updated_since may be a Date', async () => {
    const all = await api.clientas.list({ updated_since: new Date(0), limit: 500 });
    const recent = await api.clientas.list({ updated_since: '2100-01-01T00:00:00Z' });
    expect(all.total).toBe(5);
    expect(recent.total).toBe(0);
  });

  it("the API's errors are ClinicApiError with code, param, status and the request's id; not retried", async () => {
    const rec = recordingFetch();
    const counted = new ClinicApi({ baseUrl: t.baseUrl, apiKey: t.keyA, fetch: rec.fetch });
    const err = await counted.citas.list({ limit: 501 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClinicApiError);
    const e = err as ClinicApiError;
    expect([e.status, e.code, e.param]).toEqual([400, 'invalid_parameter', 'limit']);
    expect(e.message).toMatch(/^400 invalid_parameter: limit must be/);
    expect(e.requestId).toMatch(/\S{8,}/);
    expect(e.retryAfter).toBeUndefined();

    // Another clinic's record is not found, like one nobody has.
    const theirs = (await new ClinicApi({ baseUrl: t.baseUrl, apiKey: t.keyB }).clientas.list()).clientas[0]!.id;
    await expect(counted.clientas.get(theirs)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(counted.citas.get(uid('a', 2, 999))).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(counted.citas.get('not-a-uuid')).rejects.toMatchObject({ status: 400, code: 'invalid_parameter', param: 'id' });
    // An unknown parameter, past the types
    await expect(counted.clientas.list({ nombre: 'x' } as never)).rejects.toMatchObject({ code: 'unknown_parameter', param: 'nombre' });

    const bad = new ClinicApi({ baseUrl: t.baseUrl, apiKey: 'svc_nope', fetch: rec.fetch });
    await expect(bad.me()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    // one request each: a 4xx other than 429 is the caller's to fix, never retried
    expect(rec.requests.map((r) => r.status)).toEqual([400, 404, 404, 400, 400, 401]);
  });

  it('an OAuth access token from a function, asked before every request', async () => {
    let asked = 0;
    const withToken = new ClinicApi({
      baseUrl: `${t.baseUrl}/`,
      accessToken: async () => {
        asked++;
        return t.keyA; // the service takes a token where it takes a key: same header, same rules
      },
    });
    expect(withToken.baseUrl).toBe(t.baseUrl);
    expect((await withToken.me()).clinica.id).toBe(t.clinicA.id);
    await withToken.clientas.list();
    expect(asked).toBe(2);
  });

  it('cache: asks with If-None-Match and answers a 304 with the page it kept, until the data changes', async () => {
    const rec = recordingFetch();
    const seen: ResponseInfo[] = [];
    const cached = new ClinicApi({ baseUrl: t.baseUrl, apiKey: t.keyA, fetch: rec.fetch, cache: true, onResponse: (i) => seen.push(i) });
    const query = { desde: '2026-03-01', hasta: '2026-03-31' };
    const first = await cached.citas.list(query);
    const second = await cached.citas.list(query);
    expect(second).toEqual(first);
    // a kept page is the caller's own copy
    second.citas.length = 0;
    expect((await cached.citas.list(query)).citas.length).toBe(first.citas.length);
    expect(rec.requests.map((r) => [r.status, r.headers['if-none-match'] !== undefined])).toEqual([
      [200, false],
      [304, true],
      [304, true],
    ]);
    expect(seen.map((s) => [s.status, s.fromCache])).toEqual([
      [200, false],
      [304, true],
      [304, true],
    ]);

    t.clock.now += 1_000;
    await seedRecords(t.database, t.clinicA, [citaRecord(uid('a', 2, 500), A.mario, '2026-03-15T10:00:00+01:00')], t.clock.now);
    const third = await cached.citas.list(query);
    expect(third.total).toBe(first.total + 1);
    expect(rec.requests.at(-1)!.status).toBe(200);
    // Without the option: never If-None-Match.
    const plain = recordingFetch();
    await new ClinicApi({ baseUrl: t.baseUrl, apiKey: t.keyA, fetch: plain.fetch }).citas.list(query);
    await new ClinicApi({ baseUrl: t.baseUrl, apiKey: t.keyA, fetch: plain.fetch }).citas.list(query);
    expect(plain.requests.map((r) => [pathOf(r.url), r.status, r.headers['if-none-match']])).toEqual([
      ['/api/v1/citas?desde=2026-03-01&hasta=2026-03-31', 200, undefined],
      ['/api/v1/citas?desde=2026-03-01&hasta=2026-03-31', 200, undefined],
    ]);
  });
});

describe('new ClinicApi(options): bad options are refused at once, naming the fix', () => {
  it.each([
    [{}, /baseUrl is required/],
    [{ baseUrl: 'clinic.example.com', apiKey: 'k' }, /baseUrl is not an absolute URL.*https:\/\/clinic\.example\.com/],
    [{ baseUrl: 'ftp://clinic.example.com', apiKey: 'k' }, /must be http:\/\/ or https:\/\//],
    [{ baseUrl: 'https://clinic.example.com?x=1', apiKey: 'k' }, /no query or fragment/],
    [{ baseUrl: 'https://clinic.example.com' }, /exactly one of apiKey .* and accessToken/],
    [{ baseUrl: 'https://clinic.example.com', apiKey: 'k', accessToken: 't' }, /exactly one of apiKey/],
    [{ baseUrl: 'https://clinic.example.com', apiKey: ' ' }, /apiKey is empty/],
    [
      { baseUrl: 'https://clinic.example.com', apiKey: 'k', retry: { maxAttempts: 0 } },
      /retry\.maxAttempts must be a number of at least 1/,
    ],
    [{ baseUrl: 'https://clinic.example.com', apiKey: 'k', timeoutMs: 0 }, /timeoutMs must be a positive number/],
    [{ baseUrl: 'https://clinic.example.com', apiKey: 'k', cache: { maxEntries: 0 } }, /cache\.maxEntries must be at least 1/],
  ])('%j', (opts, message) => {
    expect(() => new ClinicApi(opts as never)).toThrow(message);
  });
});
