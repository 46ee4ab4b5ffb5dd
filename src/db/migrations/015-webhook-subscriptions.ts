// Webhooks for integrators (docs/webhooks.md): subscriptions by API, the delivery log, replay and
// alerts.
//  - webhook_endpoints gains: `description`; `created_by_key` / `created_by_grant`, the API key or
//    OAuth grant that subscribed it by API (its end disables the endpoint); `contact`: 0 when that
//    credential could not read contact details, so its deliveries carry none (as the feed's);
//    `alert_stage` (0 none, 1 the "failing" e-mail went, 2 the "disabled" one) and
//    `alert_since_ms` (when the incident's first e-mail was queued), the alerts' state.
//  - webhook_deliveries gains the log's detail: the first 1 KB of the answer (secrets masked) and
//    when the next attempt is due; indexed by time for retention and by clinic for the CLI.
//  - webhook_idempotency: a POST's Idempotency-Key (hashed) and the endpoint it made, 24 hours.
//  - webhook_replays: events queued to be sent again (replay), one attempt each, in seq order.
//  - webhook_alert_mails: the alerts' outbox, retried until sent.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const pg = dialect === 'postgres';
  const run = async (trx: Kysely<unknown>) => {
    for (const column of [
      sql`description text`,
      sql`created_by_key text`,
      sql`created_by_grant text`,
      sql`contact integer not null default 1`,
      sql`alert_stage integer not null default 0`,
      sql`alert_since_ms bigint`,
    ])
      await sql`alter table webhook_endpoints add column ${column}`.execute(trx);
    await sql`create index webhook_endpoints_by_key on webhook_endpoints (created_by_key)`.execute(trx);
    await sql`create index webhook_endpoints_by_grant on webhook_endpoints (created_by_grant)`.execute(trx);

    await sql`alter table webhook_deliveries add column response_excerpt text`.execute(trx);
    await sql`alter table webhook_deliveries add column next_retry_ms bigint`.execute(trx);
    await sql`create index webhook_deliveries_at on webhook_deliveries (at_ms)`.execute(trx);
    await sql`create index webhook_deliveries_clinic on webhook_deliveries (clinic_id, at_ms)`.execute(trx);

    await sql`create table webhook_idempotency (
      clinic_id text not null,
      credential_id text not null,
      key_hash text not null,
      request_hash text not null,
      endpoint_id text not null,
      created_ms bigint not null,
      primary key (clinic_id, credential_id, key_hash)
    )`.execute(trx);
    await sql`create index webhook_idempotency_at on webhook_idempotency (created_ms)`.execute(trx);

    await sql`create table webhook_replays (
      id text primary key,
      clinic_id text not null,
      endpoint_id text not null references webhook_endpoints(id) on delete cascade,
      seq bigint not null,
      queued_ms bigint not null,
      lease_owner text,
      lease_until_ms bigint not null
    )`.execute(trx);
    await sql`create index webhook_replays_endpoint on webhook_replays (endpoint_id, seq)`.execute(trx);
    await sql`create index webhook_replays_due on webhook_replays (lease_until_ms)`.execute(trx);

    await sql`create table webhook_alert_mails (
      id text primary key,
      clinic_id text not null,
      endpoint_id text not null,
      kind text not null,
      created_ms bigint not null,
      attempts integer not null,
      next_ms bigint not null,
      sent_ms bigint,
      last_error text
    )`.execute(trx);
    await sql`create index webhook_alert_mails_due on webhook_alert_mails (sent_ms, next_ms)`.execute(trx);
  };
  // SQLite runs migrations outside a transaction (see 003-search): this one makes its own.
  if (pg) await run(db);
  else await db.transaction().execute(run);
}
