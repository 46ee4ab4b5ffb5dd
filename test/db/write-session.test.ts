// The two-phase write behind import, demo and the tests' seeds (services/write/session.ts): its
// transaction kept or rolled back by the outcome, references resolved in file order across
// deletion lines, a cita listed before her clienta shown with her name, nothing left behind.
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connect.js';
import type { ImportRecord } from '../../src/domain/records.js';
import { bumpDataVersions, dataVersions, ensureDataVersions, type Clinic } from '../../src/repos/clinics.js';
import { eventsAfter } from '../../src/repos/events.js';
import { createClinic } from '../../src/services/accounts.js';
import type { ClinicContext } from '../../src/services/shape.js';
import { writeClinicData, type Line } from '../../src/services/write/session.js';
import { dialects, freshDatabase } from '../helpers/db.js';
import { citaRecord, clientaRecord, FIXTURE_NOW_MS, llamadaRecord, uid } from '../helpers/fixtures.js';

const K = uid('a', 1, 70);
const CITA = uid('a', 2, 70);
const CALL = uid('a', 3, 70);
const FECHA = '2026-03-30T10:00:00+02:00';

type Item = ImportRecord | { gone: ['clienta' | 'cita' | 'llamada', string] } | { bad: string | null };

describe.each(dialects())('two-phase writes on %s', (dialect) => {
  let database: Database;
  let clinic: Clinic;
  let ctx: ClinicContext;

  const lines = (items: Item[]): Line[] =>
    items.map((x, i) => {
      const line = i + 1;
      if ('gone' in x) return { line, deletion: { type: x.gone[0], id: x.gone[1], deleted: true } };
      if ('bad' in x) return { line, bad: { clientaId: x.bad } };
      return { line, record: x };
    });
  const write = (items: Item[], onApply?: (done: number, total: number) => void) =>
    writeClinicData(database, ctx, lines(items), { mode: 'upsert', now: () => FIXTURE_NOW_MS, onApply });
  const log = async () =>
    (await eventsAfter(database.db, clinic.id, 0, Number.MAX_SAFE_INTEGER, null, 1000)).map((e) => ({
      tipo: e.tipo,
      datos: JSON.parse(e.datos) as Record<string, unknown>,
    }));

  beforeEach(async () => {
    database = await freshDatabase(dialect);
    clinic = await createClinic(database.db, { name: 'Fases', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' });
    ctx = { clinicId: clinic.id, timezone: clinic.timezone, currency: clinic.currency };
  });
  afterEach(async () => {
    await database.close();
  });

  it('Database.writeTransaction commits what `keep` accepts, rolls back and returns what it refuses, and rolls back a throw', async () => {
    const bump = (keep: boolean) =>
      database.writeTransaction(
        async (trx) => {
          await ensureDataVersions(trx, clinic.id);
          await bumpDataVersions(trx, clinic.id, false);
          return { keep };
        },
        { keep: (r) => r.keep },
      );
    expect(await bump(false)).toEqual({ keep: false });
    expect((await dataVersions(database.db, clinic.id)).data).toBe(0);
    expect(await bump(true)).toEqual({ keep: true });
    expect((await dataVersions(database.db, clinic.id)).data).toBe(1);
    await expect(
      database.writeTransaction(async (trx) => {
        await bumpDataVersions(trx, clinic.id, false);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect((await dataVersions(database.db, clinic.id)).data).toBe(1);
  });

  it('a cita listed before her clienta, across a deletion line: written in file order, its event after hers, with her name', async () => {
    const out = await write([
      llamadaRecord(CALL, null, FECHA),
      citaRecord(CITA, K, FECHA),
      { gone: ['llamada', CALL] },
      clientaRecord(K, 'Katia Luna', '+34611000070'),
    ]);
    expect(out).toMatchObject({ ok: true, changed: true });
    expect(out.counts).toEqual({
      clientas: { created: 1, updated: 0, unchanged: 0, deleted: 0 },
      citas: { created: 1, updated: 0, unchanged: 0, deleted: 0 },
      llamadas: { created: 1, updated: 0, unchanged: 0, deleted: 1 },
    });
    const events = await log();
    expect(events.map((e) => e.tipo)).toEqual(['llamada.creada', 'llamada.eliminada', 'clienta.creada', 'cita.creada']);
    expect(events[3]!.datos).toMatchObject({ id: CITA, cliente_nombre: 'Katia Luna', telefono: '+34611000070' });
  });

  it('a reference resolves to a clienta deleted and listed again further down the file, not to one deleted for good', async () => {
    expect((await write([clientaRecord(K, 'Katia Luna', '+34611000070')])).ok).toBe(true);
    const again = await write([{ gone: ['clienta', K] }, citaRecord(CITA, K, FECHA), clientaRecord(K, 'Katia Sol', '+34611000070')]);
    expect(again.ok).toBe(true);
    const events = await log();
    expect(events.slice(1).map((e) => e.tipo)).toEqual(['clienta.eliminada', 'clienta.creada', 'cita.creada']);
    expect(events[3]!.datos).toMatchObject({ cliente_nombre: 'Katia Sol' });

    const gone = await write([{ gone: ['clienta', K] }, citaRecord(uid('a', 2, 71), K, FECHA), { bad: K }]);
    expect(gone.ok).toBe(false);
    expect(gone.dangling).toEqual({
      count: 2,
      onGoodLines: 1,
      first: [
        { line: 2, clientaId: K },
        { line: 3, clientaId: K },
      ],
    });
    // Refused: nothing of it stays, not even her deletion, and no event.
    expect((await log()).length).toBe(4);
    const stored = await database.db.selectFrom('clientas').select('nombre').where('id', '=', K).executeTakeFirst();
    expect(stored).toEqual({ nombre: 'Katia Sol' });
  });

  it('leaves no staging table behind, committed or refused, and the next write on the connection stages again', async () => {
    const temp = async () =>
      dialect === 'sqlite'
        ? Number(
            (await sql<{ n: number }>`select count(*) as n from sqlite_temp_master where name like 'import_%'`.execute(database.db))
              .rows[0]!.n,
          )
        : 0;
    expect((await write([clientaRecord(K, 'Katia Luna', '+34611000070')])).ok).toBe(true);
    expect(await temp()).toBe(0);
    expect((await write([citaRecord(CITA, uid('a', 1, 99), FECHA)])).ok).toBe(false);
    expect(await temp()).toBe(0);
    // PostgreSQL drops them at COMMIT and ROLLBACK: a table left over would make this fail.
    for (let i = 0; i < 6; i++) expect((await write([citaRecord(CITA, K, FECHA, { duracion_min: 30 + i })])).ok).toBe(true);
  });

  it('reports the lines applied, up to all of them, and nothing for a refused write without deletions', async () => {
    const seen: [number, number][] = [];
    await write([clientaRecord(K, 'Katia Luna', '+34611000070'), citaRecord(CITA, K, FECHA), { gone: ['cita', CITA] }], (d, t) =>
      seen.push([d, t]),
    );
    expect(seen.at(-1)).toEqual([3, 3]);
    expect(seen.map(([d]) => d)).toEqual([...seen.map(([d]) => d)].sort((a, b) => a - b));
    seen.length = 0;
    expect((await write([citaRecord(CITA, uid('a', 1, 99), FECHA)], (d, t) => seen.push([d, t]))).ok).toBe(false);
    expect(seen).toEqual([]);
  });
});
