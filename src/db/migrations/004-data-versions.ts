// A per-clinic version of the data a cached answer depends on. Writers (import, demo:
// services/write/) bump it in the same transaction as their rows; readers compare it with the
// version their cached answer was made at. Today it versions the clientas only, for the cached
// totals of searches (services/clientas-search/totals.ts). No row means version 0.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('clinic_data_versions')
    .addColumn('clinic_id', 'text', (c) => c.primaryKey().references('clinics.id'))
    .addColumn('clientas', 'bigint', (c) => c.notNull())
    .execute();
}
