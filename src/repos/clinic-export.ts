// What the clinic's export reads (services/exports/clinic.ts): each collection's rows as stored
// (its id and the columns an import line sets: src/collections/), a page at a time after the last
// id of the page before (keyset on the primary key (clinic_id, id): constant memory, and each page
// one index range).
import type { Kysely } from 'kysely';
import { COLLECTIONS, type CollectionName } from '../collections/index.js';
import type { DB } from '../db/schema.js';

/** A page of collection `name`'s rows of the clinic, in id order, after `afterId` (null: from the first). */
export function recordPage(
  db: Kysely<DB>,
  name: CollectionName,
  clinicId: string,
  afterId: string | null,
  limit: number,
): Promise<Record<string, unknown>[]> {
  const columns = ['id', ...COLLECTIONS[name].columns.map(([c]) => c)];
  // The table and its columns come from the descriptor: Kysely cannot type a table chosen at run time.
  let q = (db as unknown as Kysely<Record<string, { id: string; clinic_id: string }>>)
    .selectFrom(name)
    .select(columns as 'id'[])
    .where('clinic_id', '=', clinicId);
  if (afterId !== null) q = q.where('id', '>', afterId);
  return q.orderBy('id').limit(limit).execute();
}
