// GET /api/v1/llamadas: default window (today - 7 = 2026-03-21, from local midnight), newest
// first, resultado and hasta filters, paging, current client names, isolation.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, seedRecords, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A, clientaRecord, llamadaRecord, uid } from '../helpers/fixtures.js';
import { call, expectError, ids, llamadaA, ok, tick } from './helpers.js';

interface Llamada {
  id: string;
  fecha_hora: string;
  cliente_nombre: string | null;
  resultado: string;
}
interface LlamadasBody {
  llamadas: Llamada[];
  total: number;
  desde: string;
  hasta: string | null;
  limit: number;
  offset: number;
}

const call1 = {
  id: llamadaA(1),
  fecha_hora: '2026-03-28T12:30:00+01:00',
  // linked to María: her current name, not the 'Old Name' stored with the call
  cliente_nombre: 'María José Núñez',
  telefono_caller: '+34600123456',
  duracion_segundos: 95,
  resultado: 'agendada',
  idioma: 'es',
  created_at: '2026-03-28T12:30:00+01:00',
  updated_at: '2026-03-28T13:00:00+01:00',
};
const call2 = {
  id: llamadaA(2),
  fecha_hora: '2026-03-27T18:00:00+01:00',
  cliente_nombre: null,
  telefono_caller: '+441632960000',
  duracion_segundos: 95,
  resultado: 'sin_accion',
  idioma: 'en',
  created_at: '2026-03-27T18:00:00+01:00',
  updated_at: '2026-03-28T13:00:00+01:00',
};
const call5 = {
  id: llamadaA(5),
  fecha_hora: '2026-03-25T10:00:00+01:00',
  cliente_nombre: 'Ángela Ibáñez',
  telefono_caller: '+34699887766',
  duracion_segundos: 95,
  resultado: 'info',
  idioma: 'es',
  created_at: '2026-03-25T10:00:00+01:00',
  updated_at: '2026-03-28T13:00:00+01:00',
};
const call3 = {
  id: llamadaA(3),
  fecha_hora: '2026-03-21T00:00:00+01:00',
  cliente_nombre: 'Mario Pérez',
  telefono_caller: '+34611222333',
  duracion_segundos: 95,
  resultado: 'cancelada',
  idioma: 'es',
  created_at: '2026-03-21T00:00:00+01:00',
  updated_at: '2026-03-28T13:00:00+01:00',
};
const call4 = {
  id: llamadaA(4),
  fecha_hora: '2026-03-20T23:59:59+01:00',
  cliente_nombre: 'Mario Pérez',
  telefono_caller: '+34611222333',
  duracion_segundos: 95,
  resultado: 'transferida',
  idioma: 'es',
  created_at: '2026-03-20T23:59:59+01:00',
  updated_at: '2026-03-28T13:00:00+01:00',
};

describe.each(dialects())('GET /api/v1/llamadas on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  const llamadas = (qs = '', key?: string) => ok<LlamadasBody>(t, `/api/v1/llamadas${qs ? `?${qs}` : ''}`, { key });

  it('defaults to desde = today - 7 from local midnight, no upper bound, newest first, with exact fields', async () => {
    const body = await llamadas();
    expect(Object.keys(body).sort()).toEqual(['desde', 'hasta', 'limit', 'llamadas', 'offset', 'total']);
    expect(body.desde).toBe('2026-03-21');
    expect(body.hasta).toBeNull();
    expect(body.limit).toBe(100);
    expect(body.offset).toBe(0);
    expect(body.total).toBe(4);
    // 2026-03-21T00:00:00+01:00 is in; 2026-03-20T23:59:59+01:00 is out
    expect(body.llamadas).toStrictEqual([call1, call2, call5, call3]);
  });

  it('an explicit desde is inclusive from that local midnight', async () => {
    const body = await llamadas('desde=2026-03-20');
    expect(body.desde).toBe('2026-03-20');
    expect(body.llamadas).toStrictEqual([call1, call2, call5, call3, call4]);
    expect(body.total).toBe(5);
    const late = await llamadas('desde=2026-03-28');
    expect(ids(late.llamadas)).toEqual([llamadaA(1)]);
  });

  it('hasta bounds the range, inclusive of its whole local day', async () => {
    const body = await llamadas('hasta=2026-03-27');
    expect([body.desde, body.hasta]).toEqual(['2026-03-21', '2026-03-27']);
    expect(ids(body.llamadas)).toEqual([2, 5, 3].map(llamadaA));
    expect(body.total).toBe(3);
    expect(ids((await llamadas('hasta=2026-03-21')).llamadas)).toEqual([llamadaA(3)]);
    const gap = await llamadas('desde=2026-03-22&hasta=2026-03-24');
    expect([gap.llamadas, gap.total]).toEqual([[], 0]);
  });

  it('filters by resultado, with total counting the filtered matches', async () => {
    const expected: [string, string, number[]][] = [
      ['agendada', '', [1]],
      ['sin_accion', '', [2]],
      ['cancelada', '', [3]],
      ['info', '', [5]],
      ['transferida', '', []],
      ['transferida', '&desde=2026-03-01', [4]],
    ];
    for (const [resultado, extra, ns] of expected) {
      const body = await llamadas(`resultado=${resultado}${extra}`);
      expect(ids(body.llamadas), resultado + extra).toEqual(ns.map(llamadaA));
      expect(body.total, resultado + extra).toBe(ns.length);
    }
  });

  it('total ignores limit/offset, and limit=2 pages without repeats or gaps', async () => {
    const seen: string[] = [];
    for (const offset of [0, 2, 4]) {
      const page = await llamadas(`desde=2026-03-01&limit=2&offset=${offset}`);
      expect([page.total, page.limit, page.offset]).toEqual([5, 2, offset]);
      expect(page.llamadas.length).toBe(offset === 4 ? 1 : 2);
      seen.push(...ids(page.llamadas));
    }
    expect(seen).toEqual([1, 2, 5, 3, 4].map(llamadaA));
    const beyond = await llamadas('offset=4');
    expect([beyond.llamadas, beyond.total]).toEqual([[], 4]);
  });

  it('desde after hasta is 400 invalid_parameter', async () => {
    expectError(await call(t, '/api/v1/llamadas?desde=2026-03-25&hasta=2026-03-24'), 400, 'invalid_parameter', 'desde');
    // hasta alone before the default desde (2026-03-21)
    expectError(await call(t, '/api/v1/llamadas?hasta=2026-03-20'), 400, 'invalid_parameter', 'hasta');
  });

  it("clinic B's key sees B's call only, in B's zone", async () => {
    const body = await llamadas('', t.keyB);
    expect(body.desde).toBe('2026-03-21');
    expect(body.llamadas).toStrictEqual([
      {
        id: uid('b', 3, 1),
        fecha_hora: '2026-03-27T10:00:00-06:00',
        cliente_nombre: 'María Fernández',
        telefono_caller: '+525512345678',
        duracion_segundos: 95,
        resultado: 'info',
        idioma: 'es',
        created_at: '2026-03-27T10:00:00-06:00',
        updated_at: '2026-03-28T06:00:00-06:00',
      },
    ]);
    expect(body.total).toBe(1);
    const a = await llamadas('desde=2020-01-01');
    expect(a.llamadas.filter((l) => !l.id.startsWith('0a'))).toEqual([]);
  });
});

describe.each(dialects())('GET /api/v1/llamadas, own data, on %s', (dialect) => {
  it('breaks ties by id descending, has no default upper bound, and follows renames', async () => {
    const t = await buildTestApp(dialect);
    try {
      const [lo, hi, future] = [uid('a', 3, 901), uid('a', 3, 902), uid('a', 3, 903)];
      await seedRecords(t.database, t.clinicA, [
        llamadaRecord(lo, A.mariaLopez, '2026-03-26T10:00:00+01:00'),
        llamadaRecord(hi, null, '2026-03-26T10:00:00+01:00', { resultado: 'agendada' }),
        llamadaRecord(future, A.mario, '2026-04-10T09:15:00+02:00'),
      ]);
      const body = await ok<LlamadasBody>(t, '/api/v1/llamadas');
      expect(ids(body.llamadas)).toEqual([future, llamadaA(1), llamadaA(2), hi, lo, llamadaA(5), llamadaA(3)]);
      expect(body.total).toBe(7);
      expect(body.llamadas[0]!.fecha_hora).toBe('2026-04-10T09:15:00+02:00');
      expect(body.llamadas[4]!.cliente_nombre).toBe('maria lopez');
      expect(body.llamadas[3]!.cliente_nombre).toBeNull();

      const page = await ok<LlamadasBody>(t, '/api/v1/llamadas?limit=1&offset=3');
      expect(ids(page.llamadas)).toEqual([hi]);

      await seedRecords(t.database, t.clinicA, [clientaRecord(A.mario, 'Mario Pérez Sanz', '+34611222333', { idioma: 'en' })]);
      const renamed = await ok<LlamadasBody>(t, '/api/v1/llamadas?resultado=cancelada');
      expect(renamed.llamadas.map((l) => l.cliente_nombre)).toEqual(['Mario Pérez Sanz']);
    } finally {
      await t.close();
    }
  });
});
