// Import at scale: lines staged in the database and references resolved there (not an in-memory
// set of every id), count tables kept by deltas instead of recounts, and the all-or-nothing report,
// on files larger than the internal batches.
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connect.js';
import type { Clinic } from '../../src/repos/clinics.js';
import { refreshCounts } from '../../src/repos/writes.js';
import { createClinic } from '../../src/services/accounts.js';
import { importJsonLines, MAX_REPORTED } from '../../src/services/import.js';
import { dialects, freshDatabase } from '../helpers/db.js';

const NOW = Date.UTC(2026, 2, 28, 12, 0, 0);
const uuid = (kind: number, n: number) => `0f00000${kind}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const ESTADOS = ['pendiente', 'confirmada', 'completada', 'cancelada', 'no_asistio'];
const RESULTADOS = ['agendada', 'info', 'cancelada', 'transferida', 'sin_accion'];

const clienta = (n: number, vip = n % 7 === 0) =>
  JSON.stringify({
    type: 'clienta',
    id: uuid(1, n),
    nombre: `Clienta ${n}`,
    telefono: `+3460${String(n).padStart(7, '0')}`,
    vip,
    cliente_desde: '2024-01-01',
    created_at: '2024-01-01T10:00:00+01:00',
  });
// Spread over ~60 days around DST so a changed hour can move a cita to another local day.
const cita = (n: number, clientaN: number, shift = 0) =>
  JSON.stringify({
    type: 'cita',
    id: uuid(2, n),
    clienta_id: uuid(1, clientaN),
    fecha_hora: new Date(Date.UTC(2026, 2, 1) + ((n * 7919 + shift) % (60 * 24)) * 3_600_000).toISOString().replace('.000Z', 'Z'),
    servicio: 'Manicura',
    duracion_min: 45,
    precio: 20,
    estado: ESTADOS[(n + shift) % 5],
    profesional_nombre: 'Laura',
    sede_nombre: 'Centro',
    created_at: '2026-01-01T09:00:00+01:00',
  });
const llamada = (n: number, clientaN: number | null, shift = 0) =>
  JSON.stringify({
    type: 'llamada',
    id: uuid(3, n),
    ...(clientaN === null ? {} : { clienta_id: uuid(1, clientaN) }),
    fecha_hora: new Date(Date.UTC(2026, 2, 1) + ((n * 104_729 + shift) % (60 * 24)) * 3_600_000).toISOString().replace('.000Z', 'Z'),
    telefono_caller: '+34600000000',
    duracion_segundos: 60,
    resultado: RESULTADOS[(n + shift) % 5],
    idioma: 'es',
    created_at: '2026-03-27T18:02:00+01:00',
  });

describe.each(dialects())('import at scale on %s', (dialect) => {
  let database: Database;
  let clinic: Clinic;
  const run = (lines: string[]) => importJsonLines(database, clinic.id, Readable.from(lines.map((l) => `${l}\n`)));

  async function countTables() {
    const db = database.db;
    const norm = (rows: Record<string, unknown>[]) => rows.map((r) => ({ ...r, n: Number(r.n) }));
    return {
      citas: norm(
        await db.selectFrom('citas_por_dia').selectAll().where('clinic_id', '=', clinic.id).orderBy('dia').orderBy('estado').execute(),
      ),
      llamadas: norm(
        await db
          .selectFrom('llamadas_por_dia')
          .selectAll()
          .where('clinic_id', '=', clinic.id)
          .orderBy('dia')
          .orderBy('resultado')
          .execute(),
      ),
      vip: norm(await db.selectFrom('clientas_por_vip').selectAll().where('clinic_id', '=', clinic.id).orderBy('vip').execute()),
    };
  }

  /** What a full recount from the rows gives (in a transaction that is rolled back). */
  async function recounted() {
    let out: Awaited<ReturnType<typeof countTables>> | undefined;
    await database.db
      .transaction()
      .execute(async (trx) => {
        await refreshCounts(trx, clinic.id);
        const saved = database;
        database = { ...saved, db: trx };
        try {
          out = await countTables();
        } finally {
          database = saved;
        }
        throw new Error('rollback');
      })
      .catch((err: unknown) => {
        if ((err as Error).message !== 'rollback') throw err;
      });
    return out!;
  }

  beforeEach(async () => {
    database = await freshDatabase(dialect);
    clinic = await createClinic(database.db, { name: 'Grande', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' }, NOW);
  });
  afterEach(async () => {
    await database.close();
  });

  it('resolves references to clientas later in the file across many batches, and leaves no staging table behind', async () => {
    const n = 6_500;
    const lines = [
      ...Array.from({ length: n }, (_, i) => cita(i, i)),
      ...Array.from({ length: n }, (_, i) => llamada(i, i % 3 === 0 ? null : i)),
      ...Array.from({ length: n }, (_, i) => clienta(i)),
    ];
    const res = await run(lines);
    const created = { created: n, updated: 0, unchanged: 0, deleted: 0 };
    expect(res).toMatchObject({ ok: true, errorCount: 0, counts: { clientas: created, citas: created, llamadas: created } });
    expect(await countTables()).toEqual(await recounted());
    if (dialect === 'sqlite') {
      const temp = await sql<{ n: number }>`select count(*) as n from sqlite_temp_master where name like 'import_%'`.execute(database.db);
      expect(temp.rows[0]!.n).toBe(0);
    }
  });

  it('reports every dangling reference by line, mixed with malformed lines, first 100 in full, and applies nothing', async () => {
    const lines: string[] = [];
    const bad: number[] = [];
    // Odd i: clientas, all valid. Even i: a cita of clienta i + 1, or one of the bad lines.
    for (let i = 0; i < 6_000; i++) {
      if (i % 40 === 6) {
        lines.push(cita(i, 900_000 + i)); // no such clienta, anywhere
        bad.push(lines.length);
      } else if (i % 98 === 4) {
        lines.push('{"type":"cita"');
        bad.push(lines.length);
      } else lines.push(i % 2 ? clienta(i) : cita(i, i + 1));
    }
    const res = await run(lines);
    expect(res.ok).toBe(false);
    expect(res.errorCount).toBe(bad.length);
    expect(res.errors.map((e) => e.line)).toEqual(bad.slice(0, MAX_REPORTED));
    expect(res.errors[0]).toEqual({ line: 5, field: null, reason: 'not valid JSON' });
    expect(res.errors[1]).toEqual({
      line: 7,
      field: 'clienta_id',
      reason: `clienta_id ${uuid(1, 900_006)} is not a clienta of this clinic nor in the file`,
    });
    expect(await countTables()).toEqual({ citas: [], llamadas: [], vip: [] });
    const stored = await database.db
      .selectFrom('clientas')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(0);
  });

  it('after a bad line, later references still resolve against clientas that come after them', async () => {
    const res = await run(['not json', cita(1, 1), llamada(1, 2), clienta(1), clienta(2)]);
    expect(res).toMatchObject({ ok: false, errorCount: 1, errors: [{ line: 1, field: null, reason: 'not valid JSON' }] });
  });

  it('keeps the count tables exact through re-imports, moved days, changed statuses, vip flips and duplicate ids', async () => {
    const n = 6_000;
    const first = [
      ...Array.from({ length: n / 4 }, (_, i) => clienta(i)),
      ...Array.from({ length: n }, (_, i) => cita(i, i % (n / 4))),
      ...Array.from({ length: n / 2 }, (_, i) => llamada(i, i % 5 ? i % (n / 4) : null)),
    ];
    expect((await run(first)).ok).toBe(true);
    const afterFirst = await countTables();
    expect(afterFirst).toEqual(await recounted());

    // Same file again: nothing changes.
    expect((await run(first)).ok).toBe(true);
    expect(await countTables()).toEqual(afterFirst);

    // Changes: every third cita moves (other hour, often another day) and changes status; the same
    // ids appear twice more than a batch apart (the last one wins); vip flips; new rows too.
    const second = [
      ...Array.from({ length: n / 4 }, (_, i) => (i % 2 ? clienta(i, i % 7 !== 0) : clienta(i))),
      ...Array.from({ length: n }, (_, i) => (i % 3 === 0 ? cita(i, i % (n / 4), 13) : cita(i, i % (n / 4)))),
      ...Array.from({ length: n / 2 }, (_, i) => (i % 4 === 0 ? llamada(i, null, 29) : llamada(i, i % 5 ? i % (n / 4) : null))),
      ...Array.from({ length: 500 }, (_, i) => cita(n + i, i)),
      ...Array.from({ length: n }, (_, i) => (i % 3 === 0 ? cita(i, i % (n / 4), 37) : cita(i, i % (n / 4)))),
    ];
    const res = await run(second);
    expect(res.ok).toBe(true);
    const afterSecond = await countTables();
    expect(afterSecond).not.toEqual(afterFirst);
    expect(afterSecond).toEqual(await recounted());
    const total = afterSecond.citas.reduce((s, r) => s + r.n, 0);
    expect(total).toBe(n + 500);
  });
});
