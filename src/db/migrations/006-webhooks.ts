// Webhooks (issue 13): endpoints per clinic and their recent delivery attempts.
//  - webhook_endpoints: the destination, the event types, the signing secret ENCRYPTED
//    (AES-256-GCM under a key derived from API_KEY_PEPPER: services/webhooks/secret.ts), and the
//    delivery state: the cursor (the last seq of the clinic's event log delivered or skipped), the
//    head event's attempts, when it is due, since when it fails, and the lease (owner, until) that
//    lets exactly one server process deliver to an endpoint at a time. Times that schedule
//    deliveries are epoch MILLISECONDS (back-off starts at seconds); the rest epoch seconds.
//  - webhook_deliveries: recent attempts for the dashboard and the CLI (pruned per endpoint).
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const textC = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;
  const run = async (trx: Kysely<unknown>) => {
    await trx.schema
      .createTable('webhook_endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('clinic_id', 'text', (c) => c.notNull().references('clinics.id'))
      .addColumn('url', 'text', (c) => c.notNull())
      // null: every event type; else ",a,b," (the feed's filter shape)
      .addColumn('event_types', 'text')
      .addColumn('secret_enc', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      // 'failing' (3 days of failures) or 'manual'; null while enabled
      .addColumn('disabled_reason', 'text')
      .addColumn('disabled_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('cursor', 'bigint', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_ms', 'bigint', (c) => c.notNull())
      .addColumn('failing_since_ms', 'bigint')
      .addColumn('last_error', 'text')
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until_ms', 'bigint', (c) => c.notNull())
      .execute();
    await trx.schema.createIndex('webhook_endpoints_clinic').on('webhook_endpoints').columns(['clinic_id', 'created_at']).execute();
    // The worker's "due" scan: enabled endpoints by the time they are due.
    await trx.schema.createIndex('webhook_endpoints_due').on('webhook_endpoints').columns(['enabled', 'next_attempt_ms']).execute();

    await trx.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
      .addColumn('clinic_id', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('tipo', textC, (c) => c.notNull())
      // null for a ping
      .addColumn('seq', 'bigint')
      // 'auto' (the worker), 'test' (a ping), 'resend'
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('at_ms', 'bigint', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('error', 'text')
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .execute();
    await trx.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'at_ms']).execute();
  };
  // SQLite runs migrations outside a transaction (see 003-search): this one makes its own.
  if (dialect === 'sqlite') await db.transaction().execute(run);
  else await run(db);
}
