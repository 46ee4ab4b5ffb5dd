// The event log written by imports (docs/import.md, "Changes and events"): one event per record
// created, changed (its own fields or what it shows of its clienta) or deleted, in the import's
// transaction, numbered without gaps; nothing for what did not change; deletions in file order
// with a clienta's cascade; every count, total and derived field follows at once.
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connect.js';
import { dataVersions, type Clinic } from '../../src/repos/clinics.js';
import { eventsAfter, type FeedRow } from '../../src/repos/events.js';
import { refreshCounts } from '../../src/repos/writes.js';
import { createClinic } from '../../src/services/accounts.js';
import { ClientasSearch } from '../../src/services/clientas-search/search.js';
import { createDemoClinic } from '../../src/services/demo.js';
import { importJsonLines, type ImportResult } from '../../src/services/import.js';
import { citasPage, clientasPage, llamadasPage, type ClinicContext } from '../../src/services/listings.js';
import { formatTimestamp } from '../../src/time.js';
import pg from 'pg';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { dialects, freshDatabase, newPgDatabaseUrl } from '../helpers/db.js';

const T0 = Date.UTC(2026, 2, 28, 12, 0, 0); // Saturday 13:00 in Madrid
const id = (kind: 1 | 2 | 3, n: number) => `0e00000${kind}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const WIDE = { desde: '2020-01-01', hasta: '2030-12-31' };

type Line = Record<string, unknown>;
const clienta = (n: number, extra: Line = {}): Line => ({
  type: 'clienta',
  id: id(1, n),
  nombre: `Clienta ${n}`,
  telefono: `+3460000${String(n).padStart(4, '0')}`,
  vip: n % 2 === 0,
  cliente_desde: '2024-05-10',
  created_at: '2024-05-10T10:00:00+02:00',
  ...extra,
});
const cita = (n: number, clientaN: number, extra: Line = {}): Line => ({
  type: 'cita',
  id: id(2, n),
  clienta_id: id(1, clientaN),
  fecha_hora: `2026-03-${String(10 + (n % 18)).padStart(2, '0')}T10:00:00+01:00`,
  servicio: 'Manicura',
  duracion_min: 45,
  precio: 20,
  estado: 'confirmada',
  profesional_nombre: 'Laura',
  sede_nombre: 'Centro',
  created_at: '2026-03-01T09:00:00+01:00',
  ...extra,
});
const llamada = (n: number, clientaN: number | null, extra: Line = {}): Line => ({
  type: 'llamada',
  id: id(3, n),
  ...(clientaN === null ? {} : { clienta_id: id(1, clientaN) }),
  fecha_hora: '2026-03-27T18:00:00+01:00',
  cliente_nombre: 'Recorded',
  telefono_caller: '+34600123456',
  duracion_segundos: 60,
  resultado: 'info',
  idioma: 'es',
  created_at: '2026-03-27T18:01:00+01:00',
  ...extra,
});
const gone = (type: 'clienta' | 'cita' | 'llamada', n: number): Line => ({
  type,
  id: id(type === 'clienta' ? 1 : type === 'cita' ? 2 : 3, n),
  deleted: true,
});
const jsonl = (lines: (Line | string)[]) => lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n');

describe.each(dialects())('the event log on %s', (dialect) => {
  let database: Database;
  let clinic: Clinic;
  let ctx: ClinicContext;
  let now: number;

  const run = (lines: (Line | string)[]): Promise<ImportResult> =>
    importJsonLines(database, clinic.id, Readable.from([jsonl(lines)]), { now: () => now });

  /** Every event of the clinic after `after`, as tipo + record id. */
  async function events(after = 0): Promise<FeedRow[]> {
    return eventsAfter(database.db, clinic.id, after, Number.MAX_SAFE_INTEGER, null, 100_000);
  }
  const short = (rows: FeedRow[]) => rows.map((e) => `${e.tipo} ${JSON.parse(e.datos).id}`);
  const head = async () => (await dataVersions(database.db, clinic.id)).eventsSeq;

  /** What the API lists now, by id (at the test's clock). */
  async function api() {
    const [c, cl, ll] = await Promise.all([
      citasPage(database.db, ctx, { ...WIDE, limit: 500 }, now),
      clientasPage(database.db, ctx, { limit: 500 }, now, new ClientasSearch()),
      llamadasPage(database.db, ctx, { ...WIDE, limit: 500 }, now),
    ]);
    const byId = <T extends { id: string }>(rows: T[]) => new Map(rows.map((r) => [r.id, r]));
    return { citas: byId(c.citas), clientas: byId(cl.clientas), llamadas: byId(ll.llamadas), totals: [cl.total, c.total, ll.total] };
  }

  async function countTables() {
    const db = database.db;
    const n = (rows: Record<string, unknown>[]) => rows.map((r) => ({ ...r, n: Number(r.n) }));
    return {
      citas: n(
        await db.selectFrom('citas_por_dia').selectAll().where('clinic_id', '=', clinic.id).orderBy('dia').orderBy('estado').execute(),
      ),
      llamadas: n(
        await db
          .selectFrom('llamadas_por_dia')
          .selectAll()
          .where('clinic_id', '=', clinic.id)
          .orderBy('dia')
          .orderBy('resultado')
          .execute(),
      ),
      vip: n(await db.selectFrom('clientas_por_vip').selectAll().where('clinic_id', '=', clinic.id).orderBy('vip').execute()),
    };
  }

  /** The count tables equal a recount from the rows (made in a transaction rolled back). */
  async function expectExactCounts() {
    const kept = await countTables();
    let recounted: unknown;
    await database.db
      .transaction()
      .execute(async (trx) => {
        await refreshCounts(trx, clinic.id);
        const saved = database;
        database = { ...saved, db: trx };
        try {
          recounted = await countTables();
        } finally {
          database = saved;
        }
        throw new Error('rollback');
      })
      .catch((err: unknown) => {
        if ((err as Error).message !== 'rollback') throw err;
      });
    expect(kept).toEqual(recounted);
  }

  beforeEach(async () => {
    now = T0;
    database = await freshDatabase(dialect);
    clinic = await createClinic(database.db, { name: 'Eventos', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' }, T0);
    ctx = { clinicId: clinic.id, timezone: clinic.timezone, currency: clinic.currency };
  });
  afterEach(async () => {
    await database.close();
  });

  const BASE = [clienta(1), clienta(2), cita(1, 1), cita(2, 1), cita(3, 2), llamada(1, 1), llamada(2, null), llamada(3, 2)];

  it('a first import: one creada event per record, numbered 1..n in an order a mirror can apply, datos as the API shows it', async () => {
    const res = await run(BASE);
    expect(res).toMatchObject({ ok: true, changed: true });
    const log = await events();
    expect(log.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(log.map((e) => e.tipo)).toEqual([
      'clienta.creada',
      'clienta.creada',
      'cita.creada',
      'cita.creada',
      'cita.creada',
      'llamada.creada',
      'llamada.creada',
      'llamada.creada',
    ]);
    expect(new Set(log.map((e) => e.id)).size).toBe(8);
    const shown = await api();
    for (const e of log) {
      const datos = JSON.parse(e.datos) as { id: string; updated_at: string };
      const listed = shown.citas.get(datos.id) ?? shown.clientas.get(datos.id) ?? shown.llamadas.get(datos.id);
      // The same record, field for field, as the list answers it at the same instant.
      expect(datos, e.tipo).toEqual(listed);
      expect(datos.updated_at).toBe(formatTimestamp(e.ocurrido_at, clinic.timezone));
      expect(e.ocurrido_at).toBe(T0 / 1000);
    }
    expect(await head()).toBe(8);
  });

  it('datos equal the API for every kind of change: fields, notes, a renamed clienta in the same file, calls linked or not, a clienta listed later', async () => {
    await run([...BASE, llamada(4, null, { cliente_nombre: null })]);
    now = T0 + 60_000;
    await run([
      clienta(1, { nombre: 'Renombrada' }),
      cita(1, 1, { estado: 'cancelada', notas: 'Llega tarde' }),
      cita(3, 2, { precio: 35.5, duracion_min: 60 }),
      cita(4, 3, { notas: 'Primera visita' }),
      llamada(1, 1, { resultado: 'agendada' }),
      llamada(2, null, { cliente_nombre: 'Otra' }),
      llamada(4, null, { duracion_segundos: 5 }),
      llamada(5, 3),
      llamada(6, 2, { cliente_nombre: null }),
      clienta(3),
      cita(5, 2),
    ]);
    const log = await events(9);
    const latest = new Map(log.map((e) => [JSON.parse(e.datos).id as string, JSON.parse(e.datos) as unknown]));
    // Every record changed, directly or by its clienta's new name (cita 2, the cascade), has an event...
    expect([...latest.keys()].sort()).toEqual(
      [id(1, 1), id(1, 3), id(2, 1), id(2, 2), id(2, 3), id(2, 4), id(2, 5), id(3, 1), id(3, 2), id(3, 4), id(3, 5), id(3, 6)].sort(),
    );
    // ...and its last event shows it exactly as the lists answer it now.
    const shown = await api();
    for (const [recordId, datos] of latest) {
      expect(datos, recordId).toEqual(shown.citas.get(recordId) ?? shown.clientas.get(recordId) ?? shown.llamadas.get(recordId));
    }
  });

  it('an unchanged re-import writes no event and moves no updated_at, data version or search version', async () => {
    await run(BASE);
    const before = { versions: await dataVersions(database.db, clinic.id), api: await api() };
    now = T0 + 3_600_000;
    const res = await run(BASE);
    expect(res).toMatchObject({
      ok: true,
      changed: false,
      counts: { clientas: { unchanged: 2 }, citas: { unchanged: 3 }, llamadas: { unchanged: 3 } },
    });
    expect(await events(8)).toEqual([]);
    expect(await dataVersions(database.db, clinic.id)).toEqual(before.versions);
    expect(await api()).toEqual(before.api);
  });

  it('a changed record is one actualizada event; only its updated_at moves; derived counters cause none', async () => {
    await run(BASE);
    const v1 = await dataVersions(database.db, clinic.id);
    now = T0 + 60_000;
    const res = await run([...BASE.slice(0, 2), cita(1, 1, { estado: 'cancelada' }), ...BASE.slice(3)]);
    expect(res.counts.citas).toEqual({ created: 0, updated: 1, unchanged: 2, deleted: 0 });
    const log = await events(8);
    expect(short(log)).toEqual([`cita.actualizada ${id(2, 1)}`]);
    const shown = await api();
    expect(shown.citas.get(id(2, 1))).toMatchObject({ estado: 'cancelada', updated_at: '2026-03-28T13:01:00+01:00' });
    expect(shown.citas.get(id(2, 2))!.updated_at).toBe('2026-03-28T13:00:00+01:00');
    const v2 = await dataVersions(database.db, clinic.id);
    expect([v2.data, v2.clientas, v2.eventsSeq]).toEqual([v1.data + 1, v1.clientas, 9]);
    // A new cita of clienta 2 changes her total_citas, but she gets no event.
    await run([cita(9, 2)]);
    expect(short(await events(9))).toEqual([`cita.creada ${id(2, 9)}`]);
    expect((await api()).clientas.get(id(1, 2))).toMatchObject({ total_citas: 2, updated_at: '2026-03-28T13:00:00+01:00' });
  });

  it("a clienta's new name changes her citas and calls (each an actualizada event); a new phone her citas only", async () => {
    await run(BASE);
    now = T0 + 60_000;
    const renamed = await run([clienta(1, { nombre: 'Nuevo Nombre' })]);
    expect(renamed.counts).toMatchObject({ clientas: { updated: 1 }, citas: { updated: 2 }, llamadas: { updated: 1 } });
    const log = await events(8);
    expect(short(log)).toEqual([
      `clienta.actualizada ${id(1, 1)}`,
      `cita.actualizada ${id(2, 1)}`,
      `cita.actualizada ${id(2, 2)}`,
      `llamada.actualizada ${id(3, 1)}`,
    ]);
    for (const e of log.slice(1)) expect(JSON.parse(e.datos).cliente_nombre).toBe('Nuevo Nombre');
    const shown = await api();
    expect(shown.llamadas.get(id(3, 1))).toMatchObject({ cliente_nombre: 'Nuevo Nombre', updated_at: '2026-03-28T13:01:00+01:00' });
    expect(shown.llamadas.get(id(3, 3))!.updated_at).toBe('2026-03-28T13:00:00+01:00');

    now = T0 + 120_000;
    await run([clienta(1, { nombre: 'Nuevo Nombre', telefono: '+34699999999' })]);
    expect(short(await events(12))).toEqual([
      `clienta.actualizada ${id(1, 1)}`,
      `cita.actualizada ${id(2, 1)}`,
      `cita.actualizada ${id(2, 2)}`,
    ]);
    expect(JSON.parse((await events(13))[0]!.datos).telefono).toBe('+34699999999');
  });

  it('deleting a cita or a call: an eliminada event with its id only; counts, totals and derived fields follow at once', async () => {
    await run(BASE);
    const before = await api();
    expect(before.clientas.get(id(1, 1))).toMatchObject({ total_citas: 2, total_llamadas: 1 });
    const res = await run([gone('cita', 1), gone('llamada', 1)]);
    expect(res).toMatchObject({ ok: true, counts: { citas: { deleted: 1 }, llamadas: { deleted: 1 } } });
    const log = await events(8);
    expect(log.map((e) => [e.tipo, e.datos])).toEqual([
      ['cita.eliminada', `{"id":"${id(2, 1)}"}`],
      ['llamada.eliminada', `{"id":"${id(3, 1)}"}`],
    ]);
    const after = await api();
    expect(after.citas.has(id(2, 1))).toBe(false);
    expect(after.llamadas.has(id(3, 1))).toBe(false);
    expect(after.totals).toEqual([2, 2, 2]);
    expect(after.clientas.get(id(1, 1))).toMatchObject({ total_citas: 1, total_llamadas: 0, ultima_llamada: null });
    await expectExactCounts();
  });

  it('deleting a clienta deletes her citas and unlinks her calls: cita.eliminada, llamada.actualizada, clienta.eliminada, in that order', async () => {
    await run(BASE);
    const search = new ClientasSearch();
    expect((await clientasPage(database.db, ctx, { q: 'clienta' }, now, search)).total).toBe(2);
    now = T0 + 60_000;
    const res = await run([gone('clienta', 1)]);
    expect(res.counts).toEqual({
      clientas: { created: 0, updated: 0, unchanged: 0, deleted: 1 },
      citas: { created: 0, updated: 0, unchanged: 0, deleted: 2 },
      llamadas: { created: 0, updated: 1, unchanged: 0, deleted: 0 },
    });
    const log = await events(8);
    expect(log.map((e) => e.tipo)).toEqual(['cita.eliminada', 'cita.eliminada', 'llamada.actualizada', 'clienta.eliminada']);
    expect(JSON.parse(log[2]!.datos)).toMatchObject({ id: id(3, 1), cliente_nombre: null, updated_at: '2026-03-28T13:01:00+01:00' });
    expect(JSON.parse(log[3]!.datos)).toEqual({ id: id(1, 1) });
    const shown = await api();
    expect([...shown.clientas.keys()]).toEqual([id(1, 2)]);
    expect([...shown.citas.keys()]).toEqual([id(2, 3)]);
    expect(shown.llamadas.get(id(3, 1))).toMatchObject({ cliente_nombre: null });
    const stored = await database.db
      .selectFrom('llamadas')
      .select(['clienta_id', 'cliente_nombre'])
      .where('id', '=', id(3, 1))
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ clienta_id: null, cliente_nombre: null });
    // The kept total of a search follows at once (the clientas version moved).
    expect((await clientasPage(database.db, ctx, { q: 'clienta' }, now, search)).total).toBe(1);
    await expectExactCounts();
    if (dialect === 'sqlite') {
      const fts = await sql<{ n: number }>`select count(*) as n from clientas_search where clinic_id = ${clinic.id}`.execute(database.db);
      expect(fts.rows[0]!.n).toBe(1);
    }
  });

  it('deletions apply in file order with the records around them', async () => {
    await run(BASE);
    // Create, delete and create again; delete what the file created; a reference made before
    // its clienta goes stays valid (the cita goes with her).
    const res = await run([
      cita(20, 1),
      gone('cita', 20),
      cita(20, 2),
      clienta(5),
      cita(21, 5),
      gone('clienta', 5),
      llamada(20, null),
      gone('llamada', 20),
    ]);
    expect(res.ok, JSON.stringify(res.errors)).toBe(true);
    // Between deletions, upserts are one batch: clientas first, then citas.
    expect(short(await events(8))).toEqual([
      `cita.creada ${id(2, 20)}`,
      `cita.eliminada ${id(2, 20)}`,
      `clienta.creada ${id(1, 5)}`,
      `cita.creada ${id(2, 20)}`,
      `cita.creada ${id(2, 21)}`,
      `cita.eliminada ${id(2, 21)}`,
      `clienta.eliminada ${id(1, 5)}`,
      `llamada.creada ${id(3, 20)}`,
      `llamada.eliminada ${id(3, 20)}`,
    ]);
    const shown = await api();
    expect(shown.citas.get(id(2, 20))).toMatchObject({ cliente_nombre: 'Clienta 2' });
    expect(shown.citas.has(id(2, 21))).toBe(false);
    expect(shown.clientas.has(id(1, 5))).toBe(false);
    await expectExactCounts();
  });

  it('deleting what does not exist is an error of that line, and then nothing changes and no event is written', async () => {
    await run(BASE);
    const before = await api();
    const res = await run([
      cita(30, 1),
      gone('cita', 99),
      gone('llamada', 2),
      gone('llamada', 2),
      gone('clienta', 9),
      { ...gone('cita', 3), deleted: false },
      { ...gone('cita', 3), nota: 'x' },
    ]);
    expect(res.ok).toBe(false);
    expect(res.errors).toEqual([
      { line: 2, field: 'id', reason: `cita ${id(2, 99)} does not exist in this clinic, so it cannot be deleted` },
      { line: 4, field: 'id', reason: `llamada ${id(3, 2)} was already deleted earlier in the file` },
      { line: 5, field: 'id', reason: `clienta ${id(1, 9)} does not exist in this clinic, so it cannot be deleted` },
      { line: 6, field: 'deleted', reason: 'deleted must be true (a deletion line); leave it out to import the record' },
      { line: 7, field: 'nota', reason: 'a deletion line holds only type, id and "deleted": true; remove "nota"' },
    ]);
    expect(await events(8)).toEqual([]);
    expect(await head()).toBe(8);
    expect(await api()).toEqual(before);
  });

  it('a deletion finds its record as the file applied in order would: after a cascade, a re-creation or a move to another clienta', async () => {
    await run(BASE);
    const head0 = await head();
    const file = [
      clienta(40),
      cita(40, 40),
      cita(41, 40),
      llamada(40, 40),
      gone('clienta', 40), // her citas go with her, her call stays, unlinked
      gone('cita', 40), // gone with her
      cita(41, 1), // back, now another clienta's
      gone('cita', 41),
      gone('cita', 41), // twice in one run
      gone('llamada', 40),
      clienta(41),
      cita(42, 41),
      cita(42, 1), // moved to clienta 1 before clienta 41 goes
      gone('clienta', 41),
      gone('cita', 42),
    ];
    const refused = await run(file);
    expect(refused.ok).toBe(false);
    expect(refused.errors).toEqual([
      { line: 6, field: 'id', reason: `cita ${id(2, 40)} does not exist in this clinic, so it cannot be deleted` },
      { line: 9, field: 'id', reason: `cita ${id(2, 41)} was already deleted earlier in the file` },
    ]);
    expect(await head()).toBe(head0);
    // Without those two lines every deletion finds its record.
    const res = await run(file.filter((_, i) => i !== 5 && i !== 8));
    expect(res).toMatchObject({ ok: true, errorCount: 0 });
    await expectExactCounts();
  });

  it('a reference to a clienta deleted earlier in the file is dangling', async () => {
    await run(BASE);
    const res = await run([gone('clienta', 2), cita(40, 2)]);
    expect(res.errors).toEqual([
      { line: 2, field: 'clienta_id', reason: expect.stringContaining(`clienta_id ${id(1, 2)} is not a clienta of this clinic`) },
    ]);
  });

  it('a cita or call listed before its clienta gets its event after hers, showing her name, across batches', async () => {
    // 5,200 citas and calls first (more than one batch), their clientas last.
    const n = 2_600;
    const lines = [
      ...Array.from({ length: n }, (_, i) => cita(100 + i, 100 + (i % 50))),
      ...Array.from({ length: n }, (_, i) => llamada(100 + i, 100 + (i % 50))),
      ...Array.from({ length: 50 }, (_, i) => clienta(100 + i)),
      gone('cita', 100), // parked, then deleted: its creada must not follow its eliminada
    ];
    const res = await run(lines);
    expect(res.ok, JSON.stringify(res.errors.slice(0, 3))).toBe(true);
    const log = await events();
    const tally = (prefix: string) => log.filter((e) => e.tipo.startsWith(prefix)).length;
    expect([tally('clienta.creada'), tally('cita.creada'), tally('cita.eliminada'), tally('llamada.creada')]).toEqual([50, n - 1, 1, n]);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    const firstOf = (prefix: string) => log.findIndex((e) => e.tipo.startsWith(prefix));
    expect(firstOf('clienta.')).toBeLessThan(firstOf('cita.'));
    expect(firstOf('clienta.')).toBeLessThan(firstOf('llamada.'));
    const byRecord = new Map<string, FeedRow[]>();
    for (const e of log)
      byRecord.set(`${e.tipo.split('.')[0]} ${JSON.parse(e.datos).id}`, [
        ...(byRecord.get(`${e.tipo.split('.')[0]} ${JSON.parse(e.datos).id}`) ?? []),
        e,
      ]);
    expect(byRecord.get(`cita ${id(2, 100)}`)!.map((e) => e.tipo)).toEqual(['cita.eliminada']);
    const someCall = JSON.parse(byRecord.get(`llamada ${id(3, 101)}`)![0]!.datos);
    expect(someCall.cliente_nombre).toBe('Clienta 101');
    expect(JSON.parse(byRecord.get(`cita ${id(2, 150)}`)![0]!.datos).cliente_nombre).toBe('Clienta 100');
  });

  it('a refused import writes no event and takes no seq', async () => {
    await run(BASE);
    const res = await run([clienta(3), cita(50, 3), 'not json']);
    expect(res.ok).toBe(false);
    expect(await head()).toBe(8);
    expect(await events(8)).toEqual([]);
    expect((await run([clienta(3)])).ok).toBe(true);
    expect((await events(8)).map((e) => e.seq)).toEqual([9]);
  });

  it('a new demo clinic is a starting state: no events, but updated_at and a data version', async () => {
    const { clinic: demo } = await createDemoClinic(database, 0, { seed: 1, scale: 0.05, nowMs: T0 });
    const v = await dataVersions(database.db, demo.id);
    expect([v.eventsSeq, v.data]).toEqual([0, 1]);
    const page = await citasPage(
      database.db,
      { clinicId: demo.id, timezone: demo.timezone, currency: demo.currency },
      { ...WIDE, limit: 5 },
      T0,
    );
    expect(page.citas.length).toBeGreaterThan(0);
    for (const c of page.citas) expect(c.updated_at).toBe('2026-03-28T13:00:00+01:00');
  });
});

// PostgreSQL only (registered there, not skipped on SQLite): webhook workers will wake on it.
describe.each(dialects().filter((d) => d === 'postgres'))('event notifications on %s', () => {
  it('an import that writes events notifies clinic_events with the clinic id, at commit; a refused or unchanged one does not', async () => {
    const url = await newPgDatabaseUrl();
    const database = await openDatabase({ kind: 'postgres', url, poolMax: 2, statementTimeoutMs: 10_000 });
    const listener = new pg.Client({ connectionString: url });
    try {
      await migrateToLatest(database);
      const clinic = await createClinic(database.db, { name: 'Avisos', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' }, T0);
      await listener.connect();
      const heard: string[] = [];
      listener.on('notification', (n) => heard.push(`${n.channel} ${n.payload}`));
      await listener.query('listen clinic_events');
      const run = (lines: (Line | string)[]) => importJsonLines(database, clinic.id, Readable.from([jsonl(lines)]), { now: () => T0 });
      expect((await run([clienta(1), 'bad line'])).ok).toBe(false);
      expect((await run([clienta(1)])).changed).toBe(true);
      expect((await run([clienta(1)])).changed).toBe(false);
      // A round trip on the listening connection delivers whatever is pending before its answer.
      await listener.query('select 1');
      expect(heard).toEqual([`clinic_events ${clinic.id}`]);
    } finally {
      await listener.end().catch(() => {});
      await database.close();
    }
  });
});
