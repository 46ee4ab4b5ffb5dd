// Test mode: every clinic may have a sandbox, a clinic row of its own holding only synthetic data
// (services/sandbox.ts), so that every query scoped by clinic id separates it from the live data
// with no change of its own.
//  - clinics.sandbox_of: on a sandbox, the live clinic it belongs to (null on every live clinic);
//    unique, so a clinic has at most one sandbox even when two first uses race.
//  - api_keys.mode, oauth_grants.mode: 'live' or 'test'. A test key (or an app connected in test
//    mode) stays its live clinic's, listed and managed with the others, and reads the sandbox.
//    Every key and grant that existed before is live (the default).
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('clinics')
    .addColumn('sandbox_of', 'text', (c) => c.references('clinics.id'))
    .execute();
  await sql`create unique index clinics_by_sandbox_of on clinics (sandbox_of) where sandbox_of is not null`.execute(db);
  await db.schema
    .alterTable('api_keys')
    .addColumn('mode', 'text', (c) => c.notNull().defaultTo('live'))
    .execute();
  await db.schema
    .alterTable('oauth_grants')
    .addColumn('mode', 'text', (c) => c.notNull().defaultTo('live'))
    .execute();
}
