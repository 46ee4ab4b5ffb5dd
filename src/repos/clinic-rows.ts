// How many rows a clinic has in a table: clinic deletion's per-table report, and each collection's
// count for the clinic export's progress and the sandbox's bounds. An index-only count of the
// primary key's (clinic_id, ...) range.
import type { Kysely } from 'kysely';
import { WRITE_ORDER, type CollectionName } from '../collections/index.js';
import type { DB } from '../db/schema.js';

/** The tables that hold a clinic_id column. */
export type ClinicScopedTable = { [T in keyof DB]: DB[T] extends { clinic_id: unknown } ? T : never }[keyof DB];

export async function countClinicRows(db: Kysely<DB>, table: ClinicScopedTable, clinicId: string): Promise<number> {
  const row = await (db as unknown as Kysely<Record<string, { clinic_id: string }>>)
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('clinic_id', '=', clinicId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The clinic's records in each collection. */
export async function recordCounts(db: Kysely<DB>, clinicId: string): Promise<Record<CollectionName, number>> {
  const counts = await Promise.all(WRITE_ORDER.map(async (name) => [name, await countClinicRows(db, name, clinicId)] as const));
  return Object.fromEntries(counts) as Record<CollectionName, number>;
}
