// GET /api/v1/citas: fields, whole local days (DST included), defaults, ordering, paging, filters.
// Clinic A (Europe/Madrid, EUR): today is 2026-03-28, today + 30 is 2026-04-27.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, seedRecords, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A, citaRecord, clientaRecord, uid } from '../helpers/fixtures.js';
import { call, citaA, expectError, ids, ok, tick } from './helpers.js';

interface Cita {
  id: string;
  fecha_hora: string;
  cliente_nombre: string;
  telefono: string;
  precio: number;
  moneda: string;
  estado: string;
  notas: string | null;
}
interface CitasBody {
  citas: Cita[];
  total: number;
  rango: { desde: string; hasta: string };
  limit: number;
  offset: number;
}

const WHOLE_YEAR = 'desde=2026-01-01&hasta=2026-12-31';
// All 13 citas of clinic A in (fecha_hora, id) order: the past one (13), then 1..12.
const ALL_IN_ORDER = [13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map(citaA);

describe.each(dialects())('GET /api/v1/citas on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => tick(t));

  const citas = (qs = '', key?: string) => ok<CitasBody>(t, `/api/v1/citas${qs ? `?${qs}` : ''}`, { key });

  it('defaults to today .. today + 30 days in the clinic zone, with total, rango, limit and offset', async () => {
    const body = await citas();
    expect(Object.keys(body).sort()).toEqual(['citas', 'limit', 'offset', 'rango', 'total']);
    expect(body.rango).toEqual({ desde: '2026-03-28', hasta: '2026-04-27' });
    expect(body.limit).toBe(100);
    expect(body.offset).toBe(0);
    expect(body.total).toBe(7);
    // yesterday's 23:59:59 (1) and 2026-04-28 (9) are outside; 2026-04-27T20:00 (8) is the last day.
    expect(ids(body.citas)).toEqual([2, 3, 4, 5, 6, 7, 8].map(citaA));
  });

  it('returns every field with its exact name, type and value', async () => {
    const body = await citas('desde=2026-03-28&hasta=2026-03-28');
    expect(body.citas).toStrictEqual([
      {
        id: citaA(2),
        fecha_hora: '2026-03-28T09:00:00+01:00',
        cliente_nombre: 'María José Núñez',
        telefono: '+34600123456',
        servicio: 'Limpieza facial',
        duracion_min: 60,
        precio: 25.5,
        moneda: 'EUR',
        estado: 'confirmada',
        profesional_nombre: 'Laura Martín',
        sede_nombre: 'Sede Centro',
        notas: 'Alergia al látex',
        created_at: '2026-03-01T09:00:00+01:00',
        updated_at: '2026-03-28T13:00:00+01:00',
      },
      {
        id: citaA(3),
        fecha_hora: '2026-03-28T09:00:00+01:00',
        cliente_nombre: 'Mario Pérez',
        telefono: '+34611222333',
        servicio: 'Limpieza facial',
        duracion_min: 60,
        precio: 55.5,
        moneda: 'EUR',
        estado: 'pendiente',
        profesional_nombre: 'Laura Martín',
        sede_nombre: 'Sede Centro',
        notas: null,
        created_at: '2026-03-01T09:00:00+01:00',
        updated_at: '2026-03-28T13:00:00+01:00',
      },
    ]);
    expect(body.total).toBe(2);
  });

  it('keeps the cents of precio (19.99) and shows a past appointment in its winter offset', async () => {
    const body = await citas('desde=2026-02-10&hasta=2026-02-10');
    expect(body.citas).toHaveLength(1);
    expect(body.citas[0]).toMatchObject({
      id: citaA(13),
      fecha_hora: '2026-02-10T11:00:00+01:00',
      cliente_nombre: 'Ángela Ibáñez',
      telefono: '+34699887766',
      precio: 19.99,
      moneda: 'EUR',
      estado: 'completada',
      notas: null,
    });
  });

  it('DST start 2026-03-29 is a 23-hour day: exactly its three citas, +01:00 before the jump and +02:00 after', async () => {
    const body = await citas('desde=2026-03-29&hasta=2026-03-29');
    expect(body.rango).toEqual({ desde: '2026-03-29', hasta: '2026-03-29' });
    expect(body.citas.map((c) => [c.id, c.fecha_hora, c.estado])).toEqual([
      [citaA(4), '2026-03-29T00:30:00+01:00', 'cancelada'],
      [citaA(5), '2026-03-29T03:00:00+02:00', 'completada'],
      [citaA(6), '2026-03-29T23:30:00+02:00', 'no_asistio'],
    ]);
    expect(body.total).toBe(3);
  });

  it('local midnight starts the new day: 2026-03-30T00:00+02:00 is on the 30th only', async () => {
    const day30 = await citas('desde=2026-03-30&hasta=2026-03-30');
    expect(day30.citas.map((c) => c.fecha_hora)).toEqual(['2026-03-30T00:00:00+02:00']);
    expect(ids(day30.citas)).toEqual([citaA(7)]);
    expect(day30.total).toBe(1);
  });

  it('2026-03-27T23:59:59 belongs to the 27th, not to the 28th', async () => {
    const day27 = await citas('desde=2026-03-27&hasta=2026-03-27');
    expect(day27.citas.map((c) => [c.id, c.fecha_hora])).toEqual([[citaA(1), '2026-03-27T23:59:59+01:00']]);
    const day28 = await citas('desde=2026-03-28&hasta=2026-03-28');
    expect(ids(day28.citas)).toEqual([citaA(2), citaA(3)]);
  });

  it('DST end 2026-10-25 is a 25-hour day: both 02:30 citas (+02:00 then +01:00) and the 23:30 one', async () => {
    const body = await citas('desde=2026-10-25&hasta=2026-10-25');
    expect(body.citas.map((c) => [c.id, c.fecha_hora])).toEqual([
      [citaA(10), '2026-10-25T02:30:00+02:00'],
      [citaA(11), '2026-10-25T02:30:00+01:00'],
      [citaA(12), '2026-10-25T23:30:00+01:00'],
    ]);
    expect(body.total).toBe(3);
    for (const day of ['2026-10-24', '2026-10-26']) {
      const other = await citas(`desde=${day}&hasta=${day}`);
      expect(other.citas).toEqual([]);
      expect(other.total).toBe(0);
    }
  });

  it('explicit ranges are inclusive at both ends, in whole local days', async () => {
    const a = await citas('desde=2026-03-27&hasta=2026-03-30');
    expect(ids(a.citas)).toEqual([1, 2, 3, 4, 5, 6, 7].map(citaA));
    expect(a.total).toBe(7);
    const b = await citas('desde=2026-04-27&hasta=2026-04-28');
    expect(b.citas.map((c) => c.fecha_hora)).toEqual(['2026-04-27T20:00:00+02:00', '2026-04-28T09:00:00+02:00']);
    expect(b.rango).toEqual({ desde: '2026-04-27', hasta: '2026-04-28' });
  });

  it('with only desde, hasta defaults to today + 30; with only hasta, desde defaults to today', async () => {
    const fromOnly = await citas('desde=2026-03-29');
    expect(fromOnly.rango).toEqual({ desde: '2026-03-29', hasta: '2026-04-27' });
    expect(ids(fromOnly.citas)).toEqual([4, 5, 6, 7, 8].map(citaA));
    const toOnly = await citas('hasta=2026-03-29');
    expect(toOnly.rango).toEqual({ desde: '2026-03-28', hasta: '2026-03-29' });
    expect(ids(toOnly.citas)).toEqual([2, 3, 4, 5, 6].map(citaA));
    expect(toOnly.total).toBe(5);
  });

  it('orders by fecha_hora, then id: the two 09:00 twins come lower id first', async () => {
    const body = await citas(WHOLE_YEAR);
    expect(ids(body.citas)).toEqual(ALL_IN_ORDER);
    expect(body.total).toBe(13);
    const nine = body.citas.filter((c) => c.fecha_hora === '2026-03-28T09:00:00+01:00');
    expect(ids(nine)).toEqual([citaA(2), citaA(3)]);
  });

  it('total counts every match, ignoring limit and offset', async () => {
    const first = await citas(`${WHOLE_YEAR}&limit=2`);
    expect(ids(first.citas)).toEqual(ALL_IN_ORDER.slice(0, 2));
    expect([first.total, first.limit, first.offset]).toEqual([13, 2, 0]);
    const last = await citas(`${WHOLE_YEAR}&limit=2&offset=12`);
    expect(ids(last.citas)).toEqual([citaA(12)]);
    expect([last.total, last.limit, last.offset]).toEqual([13, 2, 12]);
    const beyond = await citas(`${WHOLE_YEAR}&offset=13`);
    expect(beyond.citas).toEqual([]);
    expect(beyond.total).toBe(13);
  });

  it('pages through with limit=2 without repeats or gaps', async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < 13; offset += 2) {
      const page = await citas(`${WHOLE_YEAR}&limit=2&offset=${offset}`);
      expect(page.total).toBe(13);
      expect(page.citas.length).toBe(offset === 12 ? 1 : 2);
      seen.push(...ids(page.citas));
    }
    expect(seen).toEqual(ALL_IN_ORDER);
    expect(new Set(seen).size).toBe(13);
  });

  it('filters by estado, and total counts the filtered matches only', async () => {
    const confirmadas = await citas('estado=confirmada');
    expect(ids(confirmadas.citas)).toEqual([2, 7, 8].map(citaA));
    expect(confirmadas.total).toBe(3);
    expect(confirmadas.citas.every((c) => c.estado === 'confirmada')).toBe(true);

    const paged = await citas('estado=confirmada&limit=1&offset=1');
    expect(ids(paged.citas)).toEqual([citaA(7)]);
    expect(paged.total).toBe(3);

    const expected: Record<string, number[]> = { pendiente: [3], completada: [13, 5], cancelada: [4], no_asistio: [6] };
    for (const [estado, ns] of Object.entries(expected)) {
      const body = await citas(`${WHOLE_YEAR}&estado=${estado}`);
      expect(ids(body.citas), estado).toEqual(ns.map(citaA));
      expect(body.total, estado).toBe(ns.length);
    }
  });

  it('desde after hasta is 400 invalid_parameter naming desde', async () => {
    const res = await call(t, '/api/v1/citas?desde=2026-04-02&hasta=2026-04-01');
    const err = expectError(res, 400, 'invalid_parameter', 'desde');
    expect(err.message).toContain('2026-04-02');
    expect(err.message).toContain('2026-04-01');
    // desde alone past the default hasta (today + 30 = 2026-04-27): the message explains the default.
    const alone = expectError(await call(t, '/api/v1/citas?desde=2026-05-01'), 400, 'invalid_parameter', 'desde');
    expect(alone.message).toContain('2026-04-27');
    // hasta alone before the default desde (today).
    expectError(await call(t, '/api/v1/citas?hasta=2026-03-27'), 400, 'invalid_parameter', 'hasta');
  });

  it("clinic B's key sees B's citas only, in B's zone and currency", async () => {
    const a = await citas(WHOLE_YEAR);
    expect(a.citas.filter((c) => !c.id.startsWith('0a'))).toEqual([]);
    const b = await citas(WHOLE_YEAR, t.keyB);
    expect(b.citas).toStrictEqual([
      {
        id: uid('b', 2, 1),
        fecha_hora: '2026-03-28T10:00:00-06:00',
        cliente_nombre: 'María Fernández',
        telefono: '+525512345678',
        servicio: 'Limpieza facial',
        duracion_min: 60,
        precio: 55.5,
        moneda: 'MXN',
        estado: 'pendiente',
        profesional_nombre: 'Laura Martín',
        sede_nombre: 'Sede Centro',
        notas: null,
        created_at: '2026-03-01T02:00:00-06:00',
        updated_at: '2026-03-28T06:00:00-06:00',
      },
      {
        id: uid('b', 2, 2),
        fecha_hora: '2026-03-29T10:00:00-06:00',
        cliente_nombre: 'María Fernández',
        telefono: '+525512345678',
        servicio: 'Limpieza facial',
        duracion_min: 60,
        precio: 55.5,
        moneda: 'MXN',
        estado: 'confirmada',
        profesional_nombre: 'Laura Martín',
        sede_nombre: 'Sede Centro',
        notas: null,
        created_at: '2026-03-01T02:00:00-06:00',
        updated_at: '2026-03-28T06:00:00-06:00',
      },
    ]);
    expect(b.total).toBe(2);
    const bDefault = await citas('', t.keyB);
    expect(bDefault.rango).toEqual({ desde: '2026-03-28', hasta: '2026-04-27' });
  });
});

describe.each(dialects())('GET /api/v1/citas, own data and clock, on %s', (dialect) => {
  it("'today' is the clinic's own calendar date, not the UTC one", async () => {
    // 2026-03-27T23:30Z: already the 28th in Madrid (00:30), still the 27th in Mexico City (17:30).
    const t = await buildTestApp(dialect, { nowMs: Date.UTC(2026, 2, 27, 23, 30) });
    try {
      const a = await ok<CitasBody>(t, '/api/v1/citas');
      expect(a.rango).toEqual({ desde: '2026-03-28', hasta: '2026-04-27' });
      expect(ids(a.citas)[0]).toBe(citaA(2)); // 2026-03-27T23:59:59+01:00 is yesterday for Madrid
      const b = await ok<CitasBody>(t, '/api/v1/citas', { key: t.keyB });
      expect(b.rango).toEqual({ desde: '2026-03-27', hasta: '2026-04-26' });
      expect(b.total).toBe(2);
    } finally {
      await t.close();
    }
  });

  it("cliente_nombre and telefono are the clienta's current values", async () => {
    const t = await buildTestApp(dialect);
    try {
      const before = await ok<CitasBody>(t, '/api/v1/citas?desde=2026-03-28&hasta=2026-03-28');
      expect(before.citas[0]).toMatchObject({ cliente_nombre: 'María José Núñez', telefono: '+34600123456' });
      await seedRecords(t.database, t.clinicA, [
        clientaRecord(A.maria, 'María José Núñez Gil', '+34600999888', { vip: true, email: 'mj@example.com' }),
      ]);
      const after = await ok<CitasBody>(t, '/api/v1/citas?desde=2026-03-28&hasta=2026-03-28');
      expect(after.citas[0]).toMatchObject({ id: citaA(2), cliente_nombre: 'María José Núñez Gil', telefono: '+34600999888' });
      expect(after.citas[1]).toMatchObject({ id: citaA(3), cliente_nombre: 'Mario Pérez', telefono: '+34611222333' });
    } finally {
      await t.close();
    }
  });

  it('ties at one instant are broken by id whatever the insertion order', async () => {
    const t = await buildTestApp(dialect);
    try {
      const hi = uid('a', 2, 902);
      const lo = uid('a', 2, 901);
      await seedRecords(t.database, t.clinicA, [
        citaRecord(hi, A.angela, '2026-04-01T10:00:00+02:00'),
        citaRecord(lo, A.mario, '2026-04-01T10:00:00+02:00'),
      ]);
      const body = await ok<CitasBody>(t, '/api/v1/citas?desde=2026-04-01&hasta=2026-04-01');
      expect(ids(body.citas)).toEqual([lo, hi]);
      const page2 = await ok<CitasBody>(t, '/api/v1/citas?desde=2026-04-01&hasta=2026-04-01&limit=1&offset=1');
      expect(ids(page2.citas)).toEqual([hi]);
      expect(page2.total).toBe(2);
      // The new ones are counted in the default range too (7 fixtures + 2).
      expect((await ok<CitasBody>(t, '/api/v1/citas')).total).toBe(9);
      // and clinic B still has only its own.
      expect((await ok<CitasBody>(t, '/api/v1/citas', { key: t.keyB })).total).toBe(2);
    } finally {
      await t.close();
    }
  });
});
