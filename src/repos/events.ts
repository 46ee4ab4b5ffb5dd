// The event log (migration 005): one row per created, changed or deleted record, numbered per
// clinic. Writers number events inside their transaction, after the clinic's writer lock
// (repos/writes.ts lockClinicData), so a clinic's seqs become visible in order and without gaps:
// a reader of "seq > cursor" never finds an event appear behind its cursor later
// (docs/architecture.md, "Following changes"). The feed and (later) webhook deliveries read it
// through eventsAfter; the retention job removes old events and records the highest removed seq.
import { sql, type Kysely } from 'kysely';
import { compiledOnce } from '../db/compiled-once.js';
import { dialectOf } from '../db/dialect.js';
import type { DB, EventsTable } from '../db/schema.js';
import { insertRows } from './writes.js';

export type EventRow = EventsTable;

/**
 * Takes the next `n` seqs of the clinic: the first of them. Call inside the writing transaction,
 * with the clinic's writer lock held and its row of versions present (ensureDataVersions). The
 * UPDATE is a statement of its own, after the lock's: on PostgreSQL's READ COMMITTED it reads the
 * head as the previous writer committed it.
 */
export async function takeSeqs(db: Kysely<DB>, clinicId: string, n: number): Promise<number> {
  const row = await db
    .updateTable('clinic_data_versions')
    .set((eb) => ({ events_seq: eb('events_seq', '+', n) }))
    .where('clinic_id', '=', clinicId)
    .returning('events_seq')
    .executeTakeFirstOrThrow();
  return Number(row.events_seq) - n + 1;
}

const COLUMNS: readonly (readonly [keyof EventRow, string])[] = [
  ['clinic_id', 'text'],
  ['seq', 'int8'],
  ['id', 'text'],
  ['tipo', 'text'],
  ['record_id', 'text'],
  ['ocurrido_at', 'int8'],
  ['datos', 'text'],
  ['clienta_id', 'text'],
];
/** Stores events (multi-row statements: repos/writes.ts). */
export async function insertEvents(db: Kysely<DB>, rows: readonly EventRow[]): Promise<void> {
  await insertRows(db, 'events', COLUMNS, rows);
}

/** The channel a PostgreSQL writer notifies, with the clinic id, when it commits events. */
export const EVENTS_CHANNEL = 'clinic_events';

/**
 * PostgreSQL: tells listeners (webhook workers, later) that the clinic has new events. NOTIFY is
 * transactional: it is delivered at COMMIT, and never for a transaction that rolls back. SQLite
 * has no such thing: its readers poll the head.
 */
export async function notifyEvents(db: Kysely<DB>, clinicId: string): Promise<void> {
  if (dialectOf(db) === 'postgres') await sql`select pg_notify(${EVENTS_CHANNEL}, ${clinicId})`.execute(db);
}

export type FeedRow = Pick<EventRow, 'seq' | 'id' | 'tipo' | 'ocurrido_at' | 'datos' | 'clienta_id'>;

/** `tipos`: the types asked for, as a JSON array (one parameter however many, so the statement has one shape) */
type AfterValues = { clinicId: string; after: number; through: number; tipos: string; limit: number };
const AFTER_VALUES = ['clinicId', 'after', 'through', 'tipos', 'limit'] as const;

function afterQuery(db: Kysely<DB>, p: AfterValues, byTipo: boolean) {
  let q = db
    .selectFrom('events')
    .select(['seq', 'id', 'tipo', 'ocurrido_at', 'datos', 'clienta_id'])
    .where('clinic_id', '=', p.clinicId)
    .where('seq', '>', p.after)
    .where('seq', '<=', p.through);
  // The list's elements, as rows: the same JSON array on both databases.
  if (byTipo) {
    q = q.where(
      dialectOf(db) === 'postgres'
        ? sql<boolean>`tipo in (select jsonb_array_elements_text(${p.tipos}::jsonb))`
        : sql<boolean>`tipo in (select value from json_each(${p.tipos}))`,
    );
  }
  return q.orderBy('seq').limit(p.limit);
}

const afterAny = compiledOnce(AFTER_VALUES, (db, p: AfterValues) => afterQuery(db, p, false));
const afterByTipo = compiledOnce(AFTER_VALUES, (db, p: AfterValues) => afterQuery(db, p, true));

/**
 * The clinic's events with seq in (after, through], oldest first, of the given types (null: all),
 * at most `limit`: the one access path of the feed and of webhook deliveries, a range of the
 * primary key (clinic_id, seq). `through` bounds the rows read, so a rare type never scans the
 * whole log in one call.
 */
export async function eventsAfter(
  db: Kysely<DB>,
  clinicId: string,
  after: number,
  through: number,
  tipos: readonly string[] | null,
  limit: number,
): Promise<FeedRow[]> {
  if (through <= after) return [];
  const values = { clinicId, after, through, tipos: tipos === null ? '[]' : JSON.stringify(tipos), limit };
  const rows = await (tipos === null ? afterAny(db, values) : afterByTipo(db, values));
  return rows.map((r) => ({ ...r, seq: Number(r.seq), ocurrido_at: Number(r.ocurrido_at) }));
}

// Retention (services/event-retention.ts).

/** Clinics whose log holds events (their head above what retention removed). */
export async function clinicsWithEvents(db: Kysely<DB>): Promise<{ clinicId: string; expired: number }[]> {
  const rows = await db
    .selectFrom('clinic_data_versions')
    .select(['clinic_id', 'events_expired'])
    .whereRef('events_seq', '>', 'events_expired')
    .orderBy('clinic_id')
    .execute();
  return rows.map((r) => ({ clinicId: r.clinic_id, expired: Number(r.events_expired) }));
}

/** The seq and time of the clinic's oldest `n` events after `after` (primary-key order). */
export async function oldestEvents(
  db: Kysely<DB>,
  clinicId: string,
  after: number,
  n: number,
): Promise<{ seq: number; ocurrido_at: number }[]> {
  const rows = await db
    .selectFrom('events')
    .select(['seq', 'ocurrido_at'])
    .where('clinic_id', '=', clinicId)
    .where('seq', '>', after)
    .orderBy('seq')
    .limit(n)
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), ocurrido_at: Number(r.ocurrido_at) }));
}

/** Removes the clinic's events through `through` and records it as expired (never lowering the mark). */
export async function expireEvents(db: Kysely<DB>, clinicId: string, through: number): Promise<number> {
  const res = await db.deleteFrom('events').where('clinic_id', '=', clinicId).where('seq', '<=', through).executeTakeFirst();
  const greatest = dialectOf(db) === 'postgres' ? sql`greatest(events_expired, ${through})` : sql`max(events_expired, ${through})`;
  await db
    .updateTable('clinic_data_versions')
    .set({ events_expired: greatest as never })
    .where('clinic_id', '=', clinicId)
    .execute();
  return Number(res.numDeletedRows);
}
