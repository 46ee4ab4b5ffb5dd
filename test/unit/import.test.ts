// JSON Lines import (docs/import.md): all or nothing, upsert by id within the clinic, every problem
// of every bad line reported with its line number, field and reason, other clinics never touched.
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connect.js';
import type { Clinic } from '../../src/repos/clinics.js';
import { createClinic } from '../../src/services/accounts.js';
import { DomainError } from '../../src/errors.js';
import { ClientasSearch } from '../../src/services/clientas-search/search.js';
import { importJsonLines, MAX_REPORTED, type ImportResult } from '../../src/services/import.js';
import { citasPage, clientasPage, llamadasPage, type ClinicContext } from '../../src/services/listings.js';
import { dialects, freshDatabase } from '../helpers/db.js';

const NOW = Date.UTC(2026, 2, 28, 12, 0, 0); // Saturday 2026-03-28 13:00 in Madrid

const id = (kind: 1 | 2 | 3, n: number) => `0c00000${kind}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const C1 = id(1, 1);
const C2 = id(1, 2);
const C3 = id(1, 3);

type Line = Record<string, unknown>;

const clienta = (cid: string, extra: Line = {}): Line => ({
  type: 'clienta',
  id: cid,
  nombre: 'María José Núñez',
  telefono: '+34600123456',
  email: 'mj@example.com',
  idioma: 'es',
  vip: true,
  cliente_desde: '2024-05-10',
  created_at: '2024-05-10T10:00:00+02:00',
  ...extra,
});
const cita = (cid: string, clientaId: string, extra: Line = {}): Line => ({
  type: 'cita',
  id: cid,
  clienta_id: clientaId,
  fecha_hora: '2026-03-29T03:00:00+02:00',
  servicio: 'Limpieza facial',
  duracion_min: 60,
  precio: 55.5,
  estado: 'completada',
  profesional_nombre: 'Laura Martín',
  sede_nombre: 'Sede Centro',
  created_at: '2026-03-01T09:00:00+01:00',
  ...extra,
});
const llamada = (lid: string, clientaId: string | null, extra: Line = {}): Line => ({
  type: 'llamada',
  id: lid,
  ...(clientaId === null ? {} : { clienta_id: clientaId }),
  fecha_hora: '2026-03-27T18:00:00+01:00',
  telefono_caller: '+34600123456',
  duracion_segundos: 95,
  resultado: 'agendada',
  idioma: 'es',
  created_at: '2026-03-27T18:02:00+01:00',
  ...extra,
});

/** What an import did to one type: created, updated, unchanged, deleted. */
const did = (created = 0, updated = 0, unchanged = 0, deleted = 0) => ({ created, updated, unchanged, deleted });
const NOTHING = { clientas: did(), citas: did(), llamadas: did() };

const jsonl = (lines: (Line | string)[]) => lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n');

/** A valid file: three clientas (one after the cita that uses it), two citas, two calls, a blank line. */
function validFile(): string {
  return jsonl([
    clienta(C1),
    clienta(C2, { nombre: 'Mario Pérez', telefono: '+34611222333', email: null, idioma: null, vip: false }),
    cita(id(2, 1), C1),
    cita(id(2, 2), C3, { fecha_hora: '2026-04-01T10:00:00+02:00', precio: 19.99, estado: 'pendiente', notas: 'Alergia al látex' }),
    llamada(id(3, 1), C1),
    llamada(id(3, 2), null, { telefono_caller: '+441632960000', resultado: 'sin_accion', idioma: 'en' }),
    '',
    clienta(C3, { nombre: 'Ángela Ibáñez', telefono: '+34699887766', email: null, vip: false, cliente_desde: '2025-01-02' }),
  ]);
}

describe.each(dialects())('import on %s', (dialect) => {
  let database: Database;
  let clinicA: Clinic;
  let clinicB: Clinic;
  const ctx = (c: Clinic): ClinicContext => ({ clinicId: c.id, timezone: c.timezone, currency: c.currency });

  const importInto = (c: Clinic, text: string): Promise<ImportResult> => importJsonLines(database, c.id, Readable.from([text]));

  /** Every row the clinic owns, in a stable order. */
  async function snapshot(c: Clinic) {
    const db = database.db;
    return {
      clientas: await db.selectFrom('clientas').selectAll().where('clinic_id', '=', c.id).orderBy('id').execute(),
      citas: await db.selectFrom('citas').selectAll().where('clinic_id', '=', c.id).orderBy('id').execute(),
      llamadas: await db.selectFrom('llamadas').selectAll().where('clinic_id', '=', c.id).orderBy('id').execute(),
      citasPorDia: await db
        .selectFrom('citas_por_dia')
        .selectAll()
        .where('clinic_id', '=', c.id)
        .orderBy('dia')
        .orderBy('estado')
        .execute(),
      llamadasPorDia: await db
        .selectFrom('llamadas_por_dia')
        .selectAll()
        .where('clinic_id', '=', c.id)
        .orderBy('dia')
        .orderBy('resultado')
        .execute(),
      clientasPorVip: await db.selectFrom('clientas_por_vip').selectAll().where('clinic_id', '=', c.id).orderBy('vip').execute(),
    };
  }

  async function apiTotals(c: Clinic) {
    const range = { desde: '2026-01-01', hasta: '2026-12-31' };
    return {
      clientas: (await clientasPage(database.db, ctx(c), {}, NOW, new ClientasSearch())).total,
      citas: (await citasPage(database.db, ctx(c), range, NOW)).total,
      llamadas: (await llamadasPage(database.db, ctx(c), range, NOW)).total,
    };
  }

  async function expectEmpty(c: Clinic) {
    const s = await snapshot(c);
    for (const [table, rows] of Object.entries(s)) expect(rows, table).toEqual([]);
  }

  beforeEach(async () => {
    database = await freshDatabase(dialect);
    clinicA = await createClinic(database.db, { name: 'Clínica A', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' }, NOW);
    clinicB = await createClinic(
      database.db,
      { name: 'Clínica B', timezone: 'America/Mexico_City', currency: 'MXN', plan: 'premium' },
      NOW,
    );
  });
  afterEach(async () => {
    await database.close();
  });

  describe('a valid file', () => {
    it('imports clientas, citas and llamadas with their counts', async () => {
      const res = await importInto(clinicA, validFile());
      expect(res).toEqual({
        ok: true,
        lines: 8,
        counts: { clientas: did(3), citas: did(2), llamadas: did(2) },
        changed: true,
        errors: [],
        errorCount: 0,
        badLines: 0,
      });
      expect(await apiTotals(clinicA)).toEqual({ clientas: 3, citas: 2, llamadas: 2 });

      const s = await snapshot(clinicA);
      const first = s.citas.find((c) => c.id === id(2, 1))!;
      expect(first).toMatchObject({
        clienta_id: C1,
        fecha_hora: Date.parse('2026-03-29T01:00:00Z') / 1000,
        dia: '2026-03-29',
        precio_cents: 5550,
        notas: null,
      });
      expect(s.citas.find((c) => c.id === id(2, 2))).toMatchObject({
        clienta_id: C3,
        precio_cents: 1999,
        notas: 'Alergia al látex',
        dia: '2026-04-01',
      });
      expect(s.llamadas.find((l) => l.id === id(3, 2))).toMatchObject({ clienta_id: null, cliente_nombre: null, resultado: 'sin_accion' });
      expect(s.clientas.find((c) => c.id === C1)).toMatchObject({
        nombre: 'María José Núñez',
        vip: 1,
        email: 'mj@example.com',
        cliente_desde: '2024-05-10',
      });
      expect(s.citasPorDia.map((r) => [r.dia, r.estado, Number(r.n)])).toEqual([
        ['2026-03-29', 'completada', 1],
        ['2026-04-01', 'pendiente', 1],
      ]);

      // As the API shows it: derived fields computed by the service, timestamps in the clinic's zone.
      const citas = await citasPage(database.db, ctx(clinicA), { desde: '2026-03-29', hasta: '2026-04-01' }, NOW);
      expect(citas.citas.map((c) => [c.fecha_hora, c.cliente_nombre, c.precio, c.moneda])).toEqual([
        ['2026-03-29T03:00:00+02:00', 'María José Núñez', 55.5, 'EUR'],
        ['2026-04-01T10:00:00+02:00', 'Ángela Ibáñez', 19.99, 'EUR'],
      ]);
      const maria = (await clientasPage(database.db, ctx(clinicA), { q: 'maria' }, NOW, new ClientasSearch())).clientas;
      expect(maria).toHaveLength(1);
      expect(maria[0]).toMatchObject({ id: C1, total_citas: 1, total_llamadas: 1, ultima_llamada: '2026-03-27T18:00:00+01:00' });
    });

    it('re-importing the same file changes nothing (upsert by id)', async () => {
      await importInto(clinicA, validFile());
      const before = await snapshot(clinicA);
      const totals = await apiTotals(clinicA);
      const again = await importInto(clinicA, validFile());
      expect(again).toMatchObject({
        ok: true,
        changed: false,
        counts: { clientas: did(0, 0, 3), citas: did(0, 0, 2), llamadas: did(0, 0, 2) },
      });
      expect(await snapshot(clinicA)).toEqual(before);
      expect(await apiTotals(clinicA)).toEqual(totals);
    });

    it('a changed record replaces the stored one, keeping its id', async () => {
      await importInto(clinicA, validFile());
      const res = await importInto(
        clinicA,
        jsonl([clienta(C1, { nombre: 'María José Núñez Ruiz', vip: false }), cita(id(2, 1), C1, { estado: 'cancelada', precio: 60 })]),
      );
      expect(res.ok).toBe(true);
      const s = await snapshot(clinicA);
      expect(s.clientas).toHaveLength(3);
      expect(s.clientas.find((c) => c.id === C1)).toMatchObject({ nombre: 'María José Núñez Ruiz', vip: 0 });
      expect(s.citas.find((c) => c.id === id(2, 1))).toMatchObject({ estado: 'cancelada', precio_cents: 6000 });
      expect(s.citasPorDia.map((r) => [r.dia, r.estado, Number(r.n)])).toEqual([
        ['2026-03-29', 'cancelada', 1],
        ['2026-04-01', 'pendiente', 1],
      ]);
      expect(s.clientasPorVip.map((r) => [r.vip, Number(r.n)])).toEqual([[0, 3]]);
    });

    it('a cita may refer to a clienta that appears later in the file, or that is already stored', async () => {
      const later = await importInto(clinicA, jsonl([cita(id(2, 9), C2), llamada(id(3, 9), C2), clienta(C2)]));
      expect(later).toMatchObject({ ok: true, counts: { clientas: did(1), citas: did(1), llamadas: did(1) } });
      const stored = await importInto(clinicA, jsonl([cita(id(2, 10), C2, { estado: 'no_asistio' })]));
      expect(stored).toMatchObject({ ok: true, counts: { clientas: did(), citas: did(1), llamadas: did() } });
      expect((await snapshot(clinicA)).citas.map((c) => c.id)).toEqual([id(2, 9), id(2, 10)]);
    });

    it('accepts CRLF line endings, any offset, and upper-case UUIDs (stored lower-case)', async () => {
      const upper = C1.toUpperCase();
      const text =
        [JSON.stringify(clienta(upper)), JSON.stringify(cita(id(2, 1), C1, { fecha_hora: '2026-03-28T18:00:00-06:00' }))].join('\r\n') +
        '\r\n';
      const res = await importInto(clinicA, text);
      expect(res).toMatchObject({ ok: true, lines: 2, counts: { clientas: did(1), citas: did(1) } });
      const s = await snapshot(clinicA);
      expect(s.clientas.map((c) => c.id)).toEqual([C1]);
      expect(s.citas[0]).toMatchObject({ fecha_hora: Date.parse('2026-03-29T00:00:00Z') / 1000, dia: '2026-03-29' });
    });

    it('an empty file is a successful no-op', async () => {
      expect(await importInto(clinicA, '')).toEqual({
        ok: true,
        lines: 0,
        counts: NOTHING,
        changed: false,
        errors: [],
        errorCount: 0,
        badLines: 0,
      });
      await expectEmpty(clinicA);
    });
  });

  describe('a file with bad lines', () => {
    it('one bad line: nothing is applied', async () => {
      const text = jsonl([clienta(C1), cita(id(2, 1), C1), clienta(C2, { telefono: '600123456' }), llamada(id(3, 1), C1)]);
      const res = await importInto(clinicA, text);
      expect(res.ok).toBe(false);
      expect(res.errorCount).toBe(1);
      expect(res.errors).toEqual([
        { line: 3, field: 'telefono', reason: expect.stringMatching(/telefono must be an E\.164 phone number/) },
      ]);
      expect(res.counts).toEqual(NOTHING);
      await expectEmpty(clinicA);
    });

    it('a bad line leaves earlier data untouched (the whole file is one transaction)', async () => {
      await importInto(clinicA, validFile());
      const before = await snapshot(clinicA);
      const res = await importInto(clinicA, jsonl([clienta(C1, { nombre: 'Changed' }), cita(id(2, 50), C1), '{"type":"cita"']));
      expect(res.ok).toBe(false);
      expect(await snapshot(clinicA)).toEqual(before);
    });

    it('reports every bad line with its number and reason', async () => {
      const cases: [Line | string, RegExp][] = [
        ['{"type": "clienta", "id": ', /not valid JSON/],
        ['[1, 2, 3]', /must be a JSON object/],
        [{ ...clienta(id(1, 20)), type: 'paciente' }, /type must be one of: clienta, cita, llamada/],
        [
          (() => {
            const l = clienta(id(1, 21));
            delete l.nombre;
            return l;
          })(),
          /missing required field "nombre"/,
        ],
        [{ ...clienta(id(1, 22)), apodo: 'Mari' }, /unknown field "apodo" for type clienta/],
        [{ ...clienta(id(1, 23)), total_citas: 3 }, /total_citas is derived by the service and cannot be imported/],
        [{ ...clienta(id(1, 24)), ultima_cita: '2026-03-01' }, /ultima_cita is derived/],
        [clienta('not-a-uuid'), /id must be a UUID/],
        [clienta(id(1, 25), { telefono: '+34 600 123 456' }), /telefono must be an E\.164 phone number/],
        [clienta(id(1, 26), { cliente_desde: '2026-02-30' }), /cliente_desde must be a real date YYYY-MM-DD/],
        [clienta(id(1, 27), { created_at: '2026-03-01T10:00:00' }), /created_at must be an RFC 3339 timestamp with an offset/],
        [clienta(id(1, 28), { vip: 'yes' }), /vip must be true or false/],
        [clienta(id(1, 29), { email: 'not-an-email' }), /email must be an e-mail address/],
        [cita(id(2, 20), C1, { precio: 10.125 }), /precio must have at most 2 decimals/],
        [cita(id(2, 21), C1, { precio: -1 }), /precio must be a number from 0/],
        [
          cita(id(2, 22), C1, { estado: 'reprogramada' }),
          /estado must be one of: pendiente, confirmada, completada, cancelada, no_asistio/,
        ],
        [cita(id(2, 23), C1, { fecha_hora: '2026-02-30T10:00:00+01:00' }), /fecha_hora must be an RFC 3339 timestamp/],
        [cita(id(2, 24), C1, { duracion_min: 45.5 }), /duracion_min must be an integer from 1 to 1440/],
        [cita(id(2, 25), C1, { servicio: '' }), /servicio must be a non-empty string/],
        [
          llamada(id(3, 20), null, { resultado: 'colgada' }),
          /resultado must be one of: agendada, cancelada, info, transferida, sin_accion/,
        ],
        [llamada(id(3, 21), null, { telefono_caller: 'anonymous' }), /telefono_caller must be an E\.164/],
        [llamada(id(3, 22), null, { idioma: 'Spanish' }), /idioma must be a language code/],
        // Text keeps tab, LF and CR only: ESC (a terminal's colours), NUL, DEL and C1 controls are refused, named.
        [clienta(id(1, 30), { nombre: 'Ana \u001b[31mRuiz' }), /nombre holds a control character \(U\+001B\); text may hold tab/],
        [cita(id(2, 26), C1, { notas: 'a\u0000b' }), /notas holds a control character \(U\+0000\)/],
        [cita(id(2, 27), C1, { servicio: 'Peeling\u007f' }), /servicio holds a control character \(U\+007F\)/],
        [llamada(id(3, 23), null, { cliente_nombre: 'Eva\u0085' }), /cliente_nombre holds a control character \(U\+0085\)/],
        [cita(id(2, 28), C1, { sede_nombre: 'Sede \ud800' }), /sede_nombre is not valid Unicode/],
      ];
      const text = jsonl([clienta(C1), ...cases.map(([l]) => l), cita(id(2, 1), C1)]);
      const res = await importInto(clinicA, text);
      expect(res.ok).toBe(false);
      expect(res.lines).toBe(cases.length + 2);
      expect(res.errorCount).toBe(cases.length);
      expect(res.badLines).toBe(cases.length);
      expect(res.errors.map((e) => e.line)).toEqual(cases.map((_, i) => i + 2));
      res.errors.forEach((e, i) => expect(e.reason, `line ${e.line}`).toMatch(cases[i]![1]));
      await expectEmpty(clinicA);
    });

    it('a reference to a clienta that is neither stored nor in the file is reported on every line that uses it', async () => {
      const ghost = id(1, 99);
      const res = await importInto(
        clinicA,
        jsonl([clienta(C1), cita(id(2, 1), ghost), cita(id(2, 2), C1), llamada(id(3, 1), ghost), cita(id(2, 3), id(1, 98))]),
      );
      expect(res.ok).toBe(false);
      expect(res.errorCount).toBe(3);
      expect(res.errors).toEqual([
        { line: 2, field: 'clienta_id', reason: `clienta_id ${ghost} is not a clienta of this clinic nor in the file` },
        { line: 4, field: 'clienta_id', reason: `clienta_id ${ghost} is not a clienta of this clinic nor in the file` },
        { line: 5, field: 'clienta_id', reason: `clienta_id ${id(1, 98)} is not a clienta of this clinic nor in the file` },
      ]);
      await expectEmpty(clinicA);
    });

    it("a reference to another clinic's clienta is refused", async () => {
      expect((await importInto(clinicB, jsonl([clienta(C1, { telefono: '+525512345678' })]))).ok).toBe(true);
      const res = await importInto(clinicA, jsonl([cita(id(2, 1), C1), llamada(id(3, 1), C1)]));
      expect(res.ok).toBe(false);
      expect(res.errors).toEqual([
        { line: 1, field: 'clienta_id', reason: expect.stringContaining(`clienta_id ${C1} is not a clienta of this clinic`) },
        { line: 2, field: 'clienta_id', reason: expect.stringContaining(`clienta_id ${C1} is not a clienta of this clinic`) },
      ]);
      await expectEmpty(clinicA);
    });

    it('reference errors and line errors are reported together, in line order', async () => {
      const res = await importInto(clinicA, jsonl([cita(id(2, 1), id(1, 97)), 'nope', clienta(C1, { vip: 1 })]));
      expect(res.errors.map((e) => [e.line, e.reason.split(' ')[0]])).toEqual([
        [1, 'clienta_id'],
        [2, 'not'],
        [3, 'vip'],
      ]);
    });

    it('reports every problem of a line at once, one entry per problem, in the format’s field order', async () => {
      const five = cita(id(2, 30), C1, { fecha_hora: '2026-03-29 10:00', precio: -5, estado: 'hecha', sede: 'Centro' });
      delete five.servicio;
      const res = await importInto(clinicA, jsonl([clienta(C1), five, cita(id(2, 31), C1)]));
      expect(res).toMatchObject({ ok: false, lines: 3, errorCount: 5, badLines: 1 });
      expect(res.errors).toEqual([
        { line: 2, field: 'fecha_hora', reason: 'fecha_hora must be an RFC 3339 timestamp with an offset, e.g. 2026-03-01T10:30:00+01:00' },
        { line: 2, field: 'servicio', reason: 'missing required field "servicio"' },
        { line: 2, field: 'precio', reason: 'precio must be a number from 0 to 10000000' },
        { line: 2, field: 'estado', reason: 'estado must be one of: pendiente, confirmada, completada, cancelada, no_asistio' },
        { line: 2, field: 'sede', reason: expect.stringMatching(/^unknown field "sede" for type cita; allowed: type, id, clienta_id, /) },
      ]);
      await expectEmpty(clinicA);
    });

    it('checks every field of every type, and unknown and derived fields after the known ones, in the line’s order', async () => {
      const badClienta = {
        type: 'clienta',
        ultima_cita: '2026-01-01',
        id: 'x',
        telefono: '600',
        email: 'no',
        idioma: 'Spanish',
        vip: 'yes',
        cliente_desde: '2026-02-30',
        created_at: 'ayer',
        apodo: 'Mari',
      };
      const badLlamada = {
        type: 'llamada',
        id: id(3, 40),
        clienta_id: 'nope',
        fecha_hora: 1,
        cliente_nombre: '',
        telefono_caller: 'anon',
        duracion_segundos: -1,
        resultado: 'colgada',
        created_at: '2026-03-27T18:02:00+01:00',
      };
      const res = await importInto(clinicA, jsonl([badClienta, badLlamada]));
      expect(res).toMatchObject({ errorCount: 17, badLines: 2 });
      expect(res.errors.map((e) => `${e.line} ${e.field}`)).toEqual([
        '1 id',
        '1 nombre',
        '1 telefono',
        '1 email',
        '1 idioma',
        '1 vip',
        '1 cliente_desde',
        '1 created_at',
        '1 ultima_cita',
        '1 apodo',
        '2 clienta_id',
        '2 fecha_hora',
        '2 cliente_nombre',
        '2 telefono_caller',
        '2 duracion_segundos',
        '2 resultado',
        '2 idioma',
      ]);
      expect(res.errors.find((e) => e.field === 'ultima_cita')!.reason).toMatch(/is derived by the service/);
      expect(res.errors.find((e) => e.line === 1 && e.field === 'nombre')!.reason).toBe('missing required field "nombre"');
      expect(res.errors.find((e) => e.line === 2 && e.field === 'idioma')!.reason).toBe('missing required field "idioma"');
    });

    it('a line’s missing clienta is one more of its problems, in clienta_id’s place, and the line counts once', async () => {
      const ghost = id(1, 90);
      const res = await importInto(
        clinicA,
        jsonl([
          cita(id(2, 40), ghost, { id: 'not-a-uuid', servicio: '' }), // three problems: id, the missing clienta, servicio
          cita(id(2, 41), ghost), // only the missing clienta
          llamada(id(3, 41), ghost, { resultado: 'x' }),
        ]),
      );
      expect(res).toMatchObject({ errorCount: 6, badLines: 3 });
      expect(res.errors.map((e) => [e.line, e.field])).toEqual([
        [1, 'id'],
        [1, 'clienta_id'],
        [1, 'servicio'],
        [2, 'clienta_id'],
        [3, 'clienta_id'],
        [3, 'resultado'],
      ]);
      expect(res.errors[1]!.reason).toBe(`clienta_id ${ghost} is not a clienta of this clinic nor in the file`);
    });

    it(`the limit counts problems: the first ${MAX_REPORTED} by line and field, then a count of all`, async () => {
      // 30 lines with 4 problems each: 120 problems; the list ends inside line 25, the count has all.
      const lines = Array.from({ length: 30 }, (_, i) =>
        cita(id(2, 300 + i), C1, { precio: -1, estado: 'x', duracion_min: 0, servicio: '' }),
      );
      const res = await importInto(clinicA, jsonl([clienta(C1), ...lines]));
      expect(res).toMatchObject({ errorCount: 120, badLines: 30 });
      expect(res.errors).toHaveLength(MAX_REPORTED);
      expect(res.errors.slice(0, 4).map((e) => e.field)).toEqual(['servicio', 'duracion_min', 'precio', 'estado']);
      expect(res.errors.at(-1)).toMatchObject({ line: 26, field: 'estado' });
    });

    it(`more than ${MAX_REPORTED} bad lines: the first ${MAX_REPORTED} are listed, all are counted`, async () => {
      const lines: (Line | string)[] = [clienta(C1)];
      for (let i = 0; i < 250; i++) lines.push(i % 2 === 0 ? `{bad ${i}` : cita(id(2, 100 + i), C1, { estado: 'x' }));
      const res = await importInto(clinicA, jsonl(lines));
      expect(res.ok).toBe(false);
      expect(res.errorCount).toBe(250);
      expect(res.errors).toHaveLength(MAX_REPORTED);
      expect(res.errors.map((e) => e.line)).toEqual(Array.from({ length: MAX_REPORTED }, (_, i) => i + 2));
      await expectEmpty(clinicA);
    });

    it('the first 100 by line number, even when dangling references (found at the end) come first', async () => {
      const lines: (Line | string)[] = [];
      for (let i = 0; i < 10; i++) lines.push(cita(id(2, 200 + i), id(1, 500 + i)));
      for (let i = 0; i < 120; i++) lines.push('not json');
      const res = await importInto(clinicA, jsonl(lines));
      expect(res.errorCount).toBe(130);
      expect(res.errors).toHaveLength(MAX_REPORTED);
      expect(res.errors.map((e) => e.line)).toEqual(Array.from({ length: MAX_REPORTED }, (_, i) => i + 1));
      expect(res.errors[0]!.reason).toMatch(/is not a clienta of this clinic/);
      expect(res.errors[10]!.reason).toBe('not valid JSON');
    });
  });

  describe('tenancy', () => {
    it("importing an id that exists in another clinic never touches that clinic's row", async () => {
      expect(
        (
          await importInto(
            clinicB,
            jsonl([
              clienta(C1, { nombre: 'María Fernández', telefono: '+525512345678' }),
              cita(id(2, 1), C1, { fecha_hora: '2026-03-28T10:00:00-06:00', estado: 'pendiente', precio: 450 }),
              llamada(id(3, 1), C1, { telefono_caller: '+525512345678' }),
            ]),
          )
        ).ok,
      ).toBe(true);
      const b = await snapshot(clinicB);
      const bTotals = await apiTotals(clinicB);

      const res = await importInto(clinicA, validFile()); // same ids C1, id(2,1), id(3,1)
      expect(res.ok).toBe(true);
      expect(await snapshot(clinicB)).toEqual(b);
      expect(await apiTotals(clinicB)).toEqual(bTotals);
      expect(b.clientas[0]).toMatchObject({ nombre: 'María Fernández' });
      expect((await snapshot(clinicA)).clientas.find((c) => c.id === C1)).toMatchObject({ nombre: 'María José Núñez' });

      // ...and a failed import into A changes nothing in B either.
      expect((await importInto(clinicA, jsonl([clienta(C1, { nombre: 'X' }), 'bad']))).ok).toBe(false);
      expect(await snapshot(clinicB)).toEqual(b);
    });

    it('refuses an unknown clinic before reading anything', async () => {
      await expect(importJsonLines(database, '00000000-0000-4000-8000-000000000000', Readable.from([validFile()]))).rejects.toMatchObject({
        reason: 'not_found',
        details: { field: 'clinic' },
      });
      await expect(importJsonLines(database, '00000000-0000-4000-8000-000000000000', Readable.from([validFile()]))).rejects.toBeInstanceOf(
        DomainError,
      );
    });
  });
});
