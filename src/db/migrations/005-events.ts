// Following changes (docs/architecture.md, "Following changes"):
//  - updated_at on clientas, citas, llamadas: the time of the record's latest event. Rows stored
//    before this migration get the migration's time (a change "now"): a follower that asks for
//    updated_since a time before the upgrade sees them, none is hidden.
//  - (clinic_id, updated_at, id) on each: updated_since pages in that order.
//  - events: the durable log behind GET /api/v1/eventos and webhooks, one row per created,
//    changed or deleted record, numbered per clinic (seq) under the clinic's writer lock.
//  - clinic_data_versions: `data` (bumped by every write that changes what a list answers: the
//    ETags), `events_seq` (the clinic's last seq) and `events_expired` (the highest seq the
//    retention job removed: an older cursor is 410 cursor_expired).
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const textC = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;
  const now = Math.floor(Date.now() / 1000);
  const run = async (trx: Kysely<unknown>) => {
    for (const table of ['clientas', 'citas', 'llamadas']) {
      // A constant default fills existing rows without rewriting them (PostgreSQL 11+, SQLite).
      await sql`alter table ${sql.table(table)} add column updated_at bigint not null default ${sql.lit(now)}`.execute(trx);
      // Writers always set it: on PostgreSQL a row without it is a bug, not a default.
      if (dialect === 'postgres') await sql`alter table ${sql.table(table)} alter column updated_at drop default`.execute(trx);
      await sql`create index ${sql.id(`${table}_by_updated`)} on ${sql.table(table)} (clinic_id, updated_at, id)`.execute(trx);
    }
    await trx.schema
      .createTable('events')
      .addColumn('clinic_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('tipo', 'text', (c) => c.notNull())
      .addColumn('record_id', textC, (c) => c.notNull())
      .addColumn('ocurrido_at', 'bigint', (c) => c.notNull())
      .addColumn('datos', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('events_pk', ['clinic_id', 'seq'])
      .execute();
    for (const [column, def] of [
      ['data', 0],
      ['events_seq', 0],
      ['events_expired', 0],
    ] as const) {
      await sql`alter table clinic_data_versions add column ${sql.id(column)} bigint not null default ${sql.lit(def)}`.execute(trx);
    }
  };
  // SQLite runs migrations outside a transaction (see 003-search): this one makes its own.
  if (dialect === 'sqlite') await db.transaction().execute(run);
  else await run(db);
}
