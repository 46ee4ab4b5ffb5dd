// A clinic's exports made in the background (Settings > API > Export; services/exports/jobs.ts):
//  - clinic_exports: one row per export asked for: its state (queued, running, done, failed),
//    progress (records written of the total), the ZIP's size, when it was asked for and
//    finished, when it expires (24 hours after: then it and its parts are deleted), and the
//    lease of the instance making it (ms): one whose instance died is taken up again by another.
//  - clinic_export_parts: the ZIP itself, in parts of about 1 MiB in order, in the database so
//    that any instance of a fleet serves the download (no shared disk is needed), read a part at
//    a time (constant memory).
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const pg = dialect === 'postgres';
  const run = async (trx: Kysely<unknown>) => {
    await sql`create table clinic_exports (
      id text primary key,
      clinic_id text not null,
      requested_by text,
      state text not null,
      done bigint not null default 0,
      total bigint not null default 0,
      bytes bigint,
      parts integer not null default 0,
      error text,
      requested_at bigint not null,
      finished_at bigint,
      expires_at bigint,
      lease_until bigint
    )`.execute(trx);
    await sql`create index clinic_exports_by_clinic on clinic_exports (clinic_id, requested_at)`.execute(trx);
    await sql`create index clinic_exports_by_state on clinic_exports (state, requested_at)`.execute(trx);
    await sql`create table clinic_export_parts (
      clinic_id text not null,
      export_id text not null,
      seq integer not null,
      data ${pg ? sql`bytea` : sql`blob`} not null,
      primary key (export_id, seq)
    )`.execute(trx);
    await sql`create index clinic_export_parts_by_clinic on clinic_export_parts (clinic_id)`.execute(trx);
  };
  // SQLite runs migrations outside a transaction (see 003-search): this one makes its own.
  if (pg) await run(db);
  else await db.transaction().execute(run);
}
