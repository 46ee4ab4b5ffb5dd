// Deletions (import lines with "deleted": true) and the changes a clienta's rows cause in the
// records that refer to her: her deletion deletes or unlinks them (each collection's
// deletedWithReferred), her new name or phone moves their updated_at. Each returns what the count deltas and the events need; ids are at
// most a chunk (services/write/). Callers run these inside the writing transaction.
import { COLLECTIONS, type CollectionName, type ReferringName } from '../collections/index.js';
import type { Kysely } from 'kysely';
import { inIds } from '../db/in-ids.js';
import type { DB } from '../db/schema.js';
import type { Keys } from './staging.js';

/**
 * The records of `table` that refer to clientas whose name or phone changed (what they show of
 * her): what the API shows of them changed too, so their updated_at moves. Returns their ids.
 */
export async function touchRecordsOf(
  db: Kysely<DB>,
  table: ReferringName,
  clinicId: string,
  clientaIds: string[],
  updatedAt: number,
): Promise<string[]> {
  if (clientaIds.length === 0) return [];
  const rows = await db
    .updateTable(table)
    .set({ updated_at: updatedAt })
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'clienta_id', clientaIds))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Deletes records `ids` of collection `table`: each deleted one's id and count-table keys. */
export async function deleteRecords(db: Kysely<DB>, table: CollectionName, clinicId: string, ids: string[]): Promise<Keys[]> {
  if (ids.length === 0) return [];
  return (await db
    .deleteFrom(table)
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .returning(['id', ...COLLECTIONS[table].counts.by] as never)
    .execute()) as unknown as Keys[];
}

/** Deletes the records of `table` that refer to `referredIds` (they go with them): ids and count-table keys. */
export async function deleteRecordsOf(db: Kysely<DB>, table: ReferringName, clinicId: string, referredIds: string[]): Promise<Keys[]> {
  if (referredIds.length === 0) return [];
  return (await db
    .deleteFrom(table)
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'clienta_id', referredIds))
    .returning(['id', ...COLLECTIONS[table].counts.by] as never)
    .execute()) as unknown as Keys[];
}

/** Empties the collection's `unlinked` fields in the records of `table` that refer to `referredIds`; their ids. */
export async function unlinkRecordsOf(
  db: Kysely<DB>,
  table: ReferringName,
  clinicId: string,
  referredIds: string[],
  updatedAt: number,
): Promise<string[]> {
  if (referredIds.length === 0) return [];
  const set = Object.fromEntries([...COLLECTIONS[table].unlinked.map((f) => [f, null]), ['updated_at', updatedAt]]);
  const rows = await db
    .updateTable(table)
    .set(set)
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'clienta_id', referredIds))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Which of `ids` are records of collection `table` in this clinic. */
export async function storedIds(db: Kysely<DB>, table: CollectionName, clinicId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom(table)
    .select('id')
    .where('clinic_id', '=', clinicId)
    .where(inIds(db, 'id', ids))
    .execute();
  return new Set(rows.map((r) => r.id));
}
