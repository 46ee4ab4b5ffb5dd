// A sandbox's records (test mode: services/sandbox.ts), read for its periodic moves and emptied by
// a reset. Every query names the sandbox's clinic id. A sandbox is small by construction
// (demo/sandbox-moves.ts bounds it), so these reads are a few dozen rows at most.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { COLLECTIONS, REFERRING, WRITE_ORDER, type CitaRecord, type CollectionName, type ReferringName } from '../collections/index.js';
import type { Estado } from '../domain/records.js';
import type { SandboxClienta } from '../demo/sandbox-moves.js';
import { recordCounts } from './clinic-rows.js';

/** How many of the oldest records of each kind a move may delete (demo/sandbox-moves.ts reads a few more). */
const OLDEST = 6;
const DUE = 4;

const citaColumns = [
  'id',
  'clienta_id',
  'fecha_hora',
  'servicio',
  'duracion_min',
  'precio_cents',
  'estado',
  'profesional_nombre',
  'sede_nombre',
  'notas',
  'created_at',
] as const;

const asCita = (r: Record<(typeof citaColumns)[number], unknown>): CitaRecord => ({
  id: String(r.id),
  clienta_id: String(r.clienta_id),
  fecha_hora: Number(r.fecha_hora),
  servicio: String(r.servicio),
  duracion_min: Number(r.duracion_min),
  precio_cents: Number(r.precio_cents),
  estado: String(r.estado) as Estado,
  profesional_nombre: String(r.profesional_nombre),
  sede_nombre: String(r.sede_nombre),
  notas: r.notas === null ? null : String(r.notas),
  created_at: Number(r.created_at),
});

export interface SandboxRows {
  clientas: SandboxClienta[];
  upcoming: CitaRecord[];
  due: CitaRecord[];
  staff: { profesional: string; sede: string }[];
  counts: Record<CollectionName, number>;
  oldest: Record<CollectionName, string[]>;
}

/** What a move of sandbox `clinicId` at `nowS` starts from (read inside the move's transaction). */
export async function sandboxRows(db: Kysely<DB>, clinicId: string, nowS: number): Promise<SandboxRows> {
  const open: Estado[] = ['pendiente', 'confirmada'];
  const clientas = await db
    .selectFrom('clientas')
    .select(['id', 'nombre', 'telefono', 'idioma'])
    .where('clinic_id', '=', clinicId)
    .orderBy('id')
    .limit(500)
    .execute();
  const upcoming = await db
    .selectFrom('citas')
    .select(citaColumns)
    .where('clinic_id', '=', clinicId)
    .where('estado', 'in', open)
    .where('fecha_hora', '>', nowS)
    .orderBy('fecha_hora')
    .orderBy('id')
    .limit(DUE)
    .execute();
  const due = await db
    .selectFrom('citas')
    .select(citaColumns)
    .where('clinic_id', '=', clinicId)
    .where('estado', 'in', open)
    .where('fecha_hora', '<=', nowS)
    .orderBy('fecha_hora')
    .orderBy('id')
    .limit(DUE)
    .execute();
  const staff = await db
    .selectFrom('citas')
    .select(['profesional_nombre', 'sede_nombre'])
    .distinct()
    .where('clinic_id', '=', clinicId)
    .orderBy('profesional_nombre')
    .limit(20)
    .execute();
  const oldestOf = async (table: ReferringName) =>
    (
      await db.selectFrom(table).select('id').where('clinic_id', '=', clinicId).orderBy('fecha_hora').orderBy('id').limit(OLDEST).execute()
    ).map((r) => r.id);
  const oldestClientas = (
    await db
      .selectFrom('clientas')
      .select('id')
      .where('clinic_id', '=', clinicId)
      .orderBy('created_at')
      .orderBy('id')
      .limit(OLDEST)
      .execute()
  ).map((r) => r.id);
  return {
    clientas: clientas.map((c) => ({ id: c.id, nombre: c.nombre, telefono: c.telefono, idioma: c.idioma })),
    upcoming: upcoming.map(asCita),
    due: due.map(asCita),
    staff: staff.map((s) => ({ profesional: s.profesional_nombre, sede: s.sede_nombre })),
    counts: await recordCounts(db, clinicId),
    // The referring records by time, the clientas by age.
    oldest: {
      clientas: oldestClientas,
      ...Object.fromEntries(await Promise.all(REFERRING.map(async (n) => [n, await oldestOf(n)] as const))),
    } as Record<CollectionName, string[]>,
  };
}

/**
 * Empties sandbox `clinicId` for a reset, in the caller's transaction under the clinic's lock:
 * its records, their counts and its events go; its feed moves past every cursor given out (the
 * head and the retention mark both step one past the old head, so any earlier cursor is
 * `410 cursor_expired`, the one answer that tells a reader to start again); its webhook endpoints
 * stay, their position moved to the new head (no event of the old data is delivered any more).
 * Keys, grants and the request log are not the sandbox's data: they stay.
 */
export async function emptySandbox(db: Kysely<DB>, clinicId: string): Promise<void> {
  // The referring records before those they refer to, then the count tables and the events.
  const tables = [...[...WRITE_ORDER].reverse(), ...Object.values(COLLECTIONS).map((c) => c.counts.table), 'events'] as const;
  for (const table of tables)
    await db
      .deleteFrom(table as 'events')
      .where('clinic_id', '=', clinicId)
      .execute();
  await db
    .insertInto('clinic_data_versions')
    .values({ clinic_id: clinicId, clientas: 0, data: 0, events_seq: 0, events_expired: 0 })
    .onConflict((oc) => oc.column('clinic_id').doNothing())
    .execute();
  await db
    .updateTable('clinic_data_versions')
    .set({
      events_seq: sql`events_seq + 1`,
      events_expired: sql`events_seq + 1`,
      data: sql`data + 1`,
      clientas: sql`clientas + 1`,
    })
    .where('clinic_id', '=', clinicId)
    .execute();
  const head = await db.selectFrom('clinic_data_versions').select('events_seq').where('clinic_id', '=', clinicId).executeTakeFirstOrThrow();
  await db
    .updateTable('webhook_endpoints')
    .set({ cursor: Number(head.events_seq), attempts: 0, failing_since_ms: null, last_error: null })
    .where('clinic_id', '=', clinicId)
    .execute();
}
