// What erasing a clienta (GDPR art. 17, services/erasure.ts) reads and rewrites besides the
// deletion itself, which is an import's (services/write/): the records that hold her data, and
// the events whose `datos` hold it. Every query names the clinic. Callers run these inside the
// erasure's writing transaction.
import { sql, type Kysely, type SqlBool } from 'kysely';
import { dialectOf } from '../db/dialect.js';
import { inIds } from '../db/in-ids.js';
import type { DB } from '../db/schema.js';

/** Her record as stored, or undefined. */
export async function clientaIdentity(db: Kysely<DB>, clinicId: string, clientaId: string) {
  return db
    .selectFrom('clientas')
    .select(['id', 'nombre', 'telefono', 'email'])
    .where('clinic_id', '=', clinicId)
    .where('id', '=', clientaId)
    .executeTakeFirst();
}

/** Whether the clinic's log has any event of this clienta (she may be deleted already; the log keeps her id). */
export async function hasClientaEvents(db: Kysely<DB>, clinicId: string, clientaId: string): Promise<boolean> {
  const row = await db
    .selectFrom('events')
    .select('seq')
    .where('clinic_id', '=', clinicId)
    .where('record_id', '=', clientaId)
    .where('tipo', 'like', 'clienta.%')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The `datos` of her own events not yet reduced to her id: the phones she had are read from them. */
export async function clientaEventDatos(db: Kysely<DB>, clinicId: string, clientaId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('events')
    .select('datos')
    .where('clinic_id', '=', clinicId)
    .where('record_id', '=', clientaId)
    .where('tipo', 'like', 'clienta.%')
    .where('tipo', '!=', 'clienta.eliminada')
    .execute();
  return rows.map((r) => r.datos);
}

/** Her citas' ids. */
export async function citaIdsOf(db: Kysely<DB>, clinicId: string, clientaId: string): Promise<string[]> {
  const rows = await db.selectFrom('citas').select('id').where('clinic_id', '=', clinicId).where('clienta_id', '=', clientaId).execute();
  return rows.map((r) => r.id);
}

/** Her calls: linked to her, or made from one of her phones by a caller linked to no clienta. */
export async function llamadaIdsOf(db: Kysely<DB>, clinicId: string, clientaId: string, phones: readonly string[]): Promise<string[]> {
  const rows = await db
    .selectFrom('llamadas')
    .select('id')
    .where('clinic_id', '=', clinicId)
    .where((eb) =>
      phones.length === 0
        ? eb('clienta_id', '=', clientaId)
        : eb.or([eb('clienta_id', '=', clientaId), eb.and([eb('clienta_id', 'is', null), inIds(db, 'telefono_caller', phones)])]),
    )
    .execute();
  return rows.map((r) => r.id);
}

/** Whether `text` contains `part` (SQLite instr, PostgreSQL strpos: no LIKE wildcards to escape). */
function contains(db: Kysely<DB>, part: string) {
  return dialectOf(db) === 'postgres' ? sql<SqlBool>`strpos(datos, ${part}) > 0` : sql<SqlBool>`instr(datos, ${part}) > 0`;
}

export interface EventToScrub {
  seq: number;
  record_id: string;
  datos: string;
  tipo: string;
}

/** The events of these records (any type) whose datos are more than the record's id. */
export async function eventsOfRecords(db: Kysely<DB>, clinicId: string, recordIds: readonly string[]): Promise<EventToScrub[]> {
  if (recordIds.length === 0) return [];
  return db
    .selectFrom('events')
    .select(['seq', 'record_id', 'datos', 'tipo'])
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'record_id', recordIds))
    .where('tipo', 'not like', '%.eliminada')
    .execute();
}

/**
 * Cita and call events whose datos hold one of `fragments` (exact JSON text such as
 * `"telefono":"+34600123456"`): records of other clientas, or of hers deleted earlier, as they
 * were when she was their clienta or caller.
 */
export async function eventsHolding(db: Kysely<DB>, clinicId: string, fragments: readonly string[]): Promise<EventToScrub[]> {
  if (fragments.length === 0) return [];
  return db
    .selectFrom('events')
    .select(['seq', 'record_id', 'datos', 'tipo'])
    .where('clinic_id', '=', clinicId)
    .where((eb) => eb.or([eb('tipo', 'like', 'cita.%'), eb('tipo', 'like', 'llamada.%')]))
    .where((eb) => eb.or(fragments.map((f) => contains(db, f))))
    .execute();
}

/** Replaces one event's datos. */
export async function setEventDatos(db: Kysely<DB>, clinicId: string, seq: number, datos: string): Promise<void> {
  await db.updateTable('events').set({ datos }).where('clinic_id', '=', clinicId).where('seq', '=', seq).execute();
}

/**
 * Of these seqs, how many each of the clinic's enabled webhook endpoints has not delivered yet
 * (after its cursor, of a type it takes): deliveries that will now carry the scrubbed datos.
 */
export async function pendingDeliveriesOf(db: Kysely<DB>, clinicId: string, events: readonly { seq: number; tipo: string }[]) {
  if (events.length === 0) return 0;
  const endpoints = await db
    .selectFrom('webhook_endpoints')
    .select(['cursor', 'event_types'])
    .where('clinic_id', '=', clinicId)
    .where('enabled', '=', 1)
    .execute();
  let n = 0;
  for (const ep of endpoints) {
    const types = typeof ep.event_types === 'string' ? (JSON.parse(ep.event_types) as string[]) : ep.event_types;
    for (const e of events) if (e.seq > Number(ep.cursor) && (types === null || types.includes(e.tipo))) n++;
  }
  return n;
}
