// Strict query validation: every malformed, out-of-range, impossible, repeated
// or unknown parameter is a 400 naming it; nothing is clamped or ignored.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { call, expectError, ok, PATHS, tick, type ApiPath } from './helpers.js';

type Case = [query: string, param: string, code?: 'invalid_parameter' | 'unknown_parameter'];

const commonCases: Case[] = [
  ['limit=abc', 'limit'],
  ['limit=1.5', 'limit'],
  ['limit=1e2', 'limit'],
  ['limit=-1', 'limit'],
  ['limit=', 'limit'],
  ['limit', 'limit'],
  ['limit=0', 'limit'],
  ['limit=501', 'limit'],
  ['limit=01', 'limit'],
  ['limit=%2B5', 'limit'],
  ['limit=%205', 'limit'],
  ['limit=0x10', 'limit'],
  ['offset=-1', 'offset'],
  ['offset=abc', 'offset'],
  ['offset=1.5', 'offset'],
  ['offset=', 'offset'],
  ['offset=2147483648', 'offset'],
  ['limit=1&limit=2', 'limit'],
  ['offset=0&offset=0', 'offset'],
  ['limit=10&offset=5&limit=10', 'limit'],
  ['foo=1', 'foo', 'unknown_parameter'],
  ['page=2', 'page', 'unknown_parameter'],
  ['LIMIT=10', 'LIMIT', 'unknown_parameter'],
  ['limit=10&sort=fecha_hora', 'sort', 'unknown_parameter'],
];

const badDates = [
  '2026-02-30',
  '2026-13-01',
  '2026-00-10',
  '2026-02-29',
  '26-03-01',
  '2026-3-1',
  '2026-03-01T00:00:00',
  '20260301',
  'today',
  '',
];
const dateCases = (param: string): Case[] => [
  ...badDates.map((d): Case => [`${param}=${encodeURIComponent(d)}`, param]),
  [`${param}=2026-03-01&${param}=2026-03-02`, param],
];

const perPath: Record<ApiPath, Case[]> = {
  '/api/v1/citas': [
    ...dateCases('desde'),
    ...dateCases('hasta'),
    ['estado=CONFIRMADA', 'estado'],
    ['estado=confirmed', 'estado'],
    ['estado=', 'estado'],
    ['estado=confirmada,pendiente', 'estado'],
    ['estado=pendiente&estado=confirmada', 'estado'],
    ['q=maria', 'q', 'unknown_parameter'],
    ['resultado=info', 'resultado', 'unknown_parameter'],
    ['vip=true', 'vip', 'unknown_parameter'],
  ],
  '/api/v1/clientas': [
    ['q=', 'q'],
    ['q=%20%20%20', 'q'],
    [`q=${'a'.repeat(101)}`, 'q'],
    ['q=ana&q=maria', 'q'],
    ['vip=yes', 'vip'],
    ['vip=TRUE', 'vip'],
    ['vip=1', 'vip'],
    ['vip=', 'vip'],
    ['vip=true&vip=false', 'vip'],
    ['desde=2026-03-01', 'desde', 'unknown_parameter'],
    ['estado=pendiente', 'estado', 'unknown_parameter'],
    ['nombre=maria', 'nombre', 'unknown_parameter'],
  ],
  '/api/v1/llamadas': [
    ...dateCases('desde'),
    ...dateCases('hasta'),
    ['resultado=Info', 'resultado'],
    ['resultado=x', 'resultado'],
    ['resultado=', 'resultado'],
    ['resultado=info&resultado=info', 'resultado'],
    ['estado=pendiente', 'estado', 'unknown_parameter'],
    ['q=maria', 'q', 'unknown_parameter'],
  ],
};

const allowed: Record<ApiPath, string[]> = {
  '/api/v1/citas': ['desde', 'hasta', 'estado', 'limit', 'offset'],
  '/api/v1/clientas': ['q', 'vip', 'limit', 'offset'],
  '/api/v1/llamadas': ['desde', 'hasta', 'resultado', 'limit', 'offset'],
};

describe.each(dialects())('query validation on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  describe.each(PATHS)('%s', (path) => {
    it.each([...commonCases, ...perPath[path]])('?%s is a 400 naming %s', async (query, param, code = 'invalid_parameter') => {
      const res = await call(t, `${path}?${query}`);
      const err = expectError(res, 400, code, param);
      // a helpful message: it names the parameter
      expect(err.message).toContain(param);
      if (code === 'unknown_parameter') for (const name of allowed[path]) expect(err.message).toContain(name);
    });

    it('rejects an API key sent as a query parameter (never accepted there)', async () => {
      const err = expectError(await call(t, `${path}?api_key=${t.keyA}`), 400, 'unknown_parameter', 'api_key');
      expect(err.message).not.toContain(t.keyA);
    });

    it('says what a malformed limit should be', async () => {
      const err = expectError(await call(t, `${path}?limit=abc`), 400, 'invalid_parameter', 'limit');
      expect(err.message).toBe('limit must be an integer from 1 to 500');
    });

    it('accepts the boundary values and applies them', async () => {
      const one = await ok(t, `${path}?limit=1&offset=0`);
      expect([one.limit, one.offset]).toEqual([1, 0]);
      const max = await ok(t, `${path}?limit=500`);
      expect(max.limit).toBe(500);
      const far = await ok(t, `${path}?offset=2147483647`);
      expect(far.offset).toBe(2147483647);
      expect(far[path.slice('/api/v1/'.length)]).toEqual([]);
    });
  });

  it('accepts real dates at the edges of the calendar', async () => {
    const leap = await ok(t, '/api/v1/citas?desde=2028-02-29&hasta=2028-02-29');
    expect(leap.rango).toEqual({ desde: '2028-02-29', hasta: '2028-02-29' });
    const calls = await ok(t, '/api/v1/llamadas?desde=2026-12-31');
    expect([calls.desde, calls.total]).toEqual(['2026-12-31', 0]);
  });

  it('accepts q of exactly 100 characters, and the five estados and resultados', async () => {
    const q100 = await ok(t, `/api/v1/clientas?q=${'a'.repeat(100)}`);
    expect([q100.clientas, q100.total]).toEqual([[], 0]);
    for (const estado of ['pendiente', 'confirmada', 'completada', 'cancelada', 'no_asistio']) {
      expect((await call(t, `/api/v1/citas?estado=${estado}`)).statusCode, estado).toBe(200);
    }
    for (const resultado of ['agendada', 'cancelada', 'info', 'transferida', 'sin_accion']) {
      expect((await call(t, `/api/v1/llamadas?resultado=${resultado}`)).statusCode, resultado).toBe(200);
    }
  });

  // Text the databases cannot hold was a 500 database_error (NUL on PostgreSQL and SQLite alike).
  describe.each([
    ['/api/v1/clientas', 'q', 'mar'],
    ['/api/v1/citas', 'estado', 'pendiente'],
    ['/api/v1/citas', 'desde', '2026-03-01'],
    ['/api/v1/llamadas', 'limit', '5'],
    ['/api/v1/llamadas', 'resultado', 'info'],
  ] as const)('%s?%s= with characters no database holds', (path, param, good) => {
    it.each([
      ['NUL', '%00'],
      ['NUL alone', '%00', true],
      ['a control character', '%01'],
      ['DEL', '%7F'],
      ['a C1 control (U+0085)', '%C2%85'],
      ['a line feed', '%0A'],
    ])('%s is a 400 invalid_parameter naming it, on both databases', async (_label, bad, alone = false) => {
      const value = alone ? bad : `${good.slice(0, 2)}${bad}${good.slice(2)}`;
      const err = expectError(await call(t, `${path}?${param}=${value}`), 400, 'invalid_parameter', param);
      expect(err.message).toContain(param);
    });

    it.each(['%ED%A0%80', '%FF', '%C0%80'])('%s (not UTF-8: a surrogate, a lone byte, an overlong NUL) is never a 5xx', async (bad) => {
      // Fastify leaves bytes that are not UTF-8 percent-encoded: the parameter sees plain ASCII.
      const res = await call(t, `${path}?${param}=${good}${bad}`);
      expect(res.statusCode, res.body).toBeLessThan(500);
    });
  });

  it('says how to fix a NUL in q', async () => {
    const err = expectError(await call(t, '/api/v1/clientas?q=a%00b'), 400, 'invalid_parameter', 'q');
    expect(err.message).toBe('q must not contain control characters (such as NUL, %00); remove them');
  });

  it('reports a parameter error for clinic B exactly as for A', async () => {
    const res = await call(t, '/api/v1/citas?limit=0', { key: t.keyB });
    expectError(res, 400, 'invalid_parameter', 'limit');
  });
});
