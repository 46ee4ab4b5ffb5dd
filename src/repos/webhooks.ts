// Webhook endpoints and their recent deliveries (migration 006): plain queries. Every query of a
// clinic's user names the clinic; the two operator-scoped look-ups (locateWebhookEndpoint, for
// the CLI that names an endpoint and no clinic) and the delivery worker's (which works for every
// clinic, each endpoint under its lease) say so.
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import { dialectOf } from '../db/dialect.js';
import type { DB, WebhookDeliveriesTable, WebhookEndpointsTable } from '../db/schema.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;
/** An endpoint's row as it is written: its event types as JSON text. */
type EndpointInsert = Insertable<WebhookEndpointsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function endpointRow(r: Record<string, unknown>): EndpointRow {
  return {
    ...(r as unknown as EndpointRow),
    // jsonb on PostgreSQL arrives parsed; SQLite's JSON text does not.
    event_types: typeof r.event_types === 'string' ? (JSON.parse(r.event_types) as string[]) : (r.event_types as string[] | null),
    enabled: Number(r.enabled),
    disabled_at: num(r.disabled_at),
    created_at: Number(r.created_at),
    cursor: Number(r.cursor),
    attempts: Number(r.attempts),
    next_attempt_ms: Number(r.next_attempt_ms),
    failing_since_ms: num(r.failing_since_ms),
    lease_until_ms: Number(r.lease_until_ms),
    contact: Number(r.contact ?? 1),
    alert_stage: Number(r.alert_stage ?? 0),
    alert_since_ms: num(r.alert_since_ms),
  };
}

export function deliveryRow(r: Record<string, unknown>): DeliveryRow {
  return {
    ...(r as unknown as DeliveryRow),
    seq: num(r.seq),
    attempt: Number(r.attempt),
    at_ms: Number(r.at_ms),
    status_code: num(r.status_code),
    duration_ms: Number(r.duration_ms),
    next_retry_ms: num(r.next_retry_ms),
  };
}

export async function countWebhookEndpoints(db: Kysely<DB>, clinicId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('clinic_id', '=', clinicId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertWebhookEndpoint(db: Kysely<DB>, row: EndpointRow): Promise<void> {
  const values: EndpointInsert = { ...row, event_types: row.event_types === null ? null : JSON.stringify(row.event_types) };
  await db.insertInto('webhook_endpoints').values(values).execute();
}

export async function listWebhookEndpoints(db: Kysely<DB>, clinicId: string): Promise<EndpointRow[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('clinic_id', '=', clinicId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(endpointRow);
}

export async function getWebhookEndpoint(db: Kysely<DB>, clinicId: string, id: string): Promise<EndpointRow | undefined> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('clinic_id', '=', clinicId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row && endpointRow(row);
}

/** Operator-scoped, across clinics: the clinic endpoint `id` belongs to (the CLI names no clinic). */
export async function locateWebhookEndpoint(db: Kysely<DB>, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('webhook_endpoints').select('clinic_id').where('id', '=', id).executeTakeFirst();
  return row?.clinic_id;
}

export async function deleteWebhookEndpoint(db: Kysely<DB>, clinicId: string, id: string): Promise<boolean> {
  await db.deleteFrom('webhook_replays').where('clinic_id', '=', clinicId).where('endpoint_id', '=', id).execute();
  await db.deleteFrom('webhook_deliveries').where('clinic_id', '=', clinicId).where('endpoint_id', '=', id).execute();
  const res = await db.deleteFrom('webhook_endpoints').where('clinic_id', '=', clinicId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Enables (from its cursor, due now, failures forgotten) or disables an endpoint, with the reason. */
export async function setWebhookEnabled(
  db: Kysely<DB>,
  clinicId: string,
  id: string,
  enabled: boolean,
  reason: string | null,
  nowMs: number,
): Promise<boolean> {
  const res = await db
    .updateTable('webhook_endpoints')
    .set(
      enabled
        ? { enabled: 1, disabled_reason: null, disabled_at: null, attempts: 0, failing_since_ms: null, next_attempt_ms: nowMs }
        : { enabled: 0, disabled_reason: reason, disabled_at: Math.floor(nowMs / 1000) },
    )
    .where('clinic_id', '=', clinicId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

// The delivery worker's queries (every clinic; each endpoint only under its lease).

/**
 * Claims up to `limit` due endpoints for `lease` (the claim's own token, stored in lease_owner)
 * until `untilMs`, in one statement: enabled, due,
 * not leased (or the lease expired: its holder died), with events after its cursor. PostgreSQL
 * skips rows another instance is claiming at this moment (FOR UPDATE SKIP LOCKED), so two
 * instances never claim one endpoint; SQLite has one writer at a time.
 */
export async function claimDueEndpoints(
  db: Kysely<DB>,
  lease: string,
  nowMs: number,
  untilMs: number,
  limit: number,
): Promise<EndpointRow[]> {
  const lock = dialectOf(db) === 'postgres' ? sql`for update of e skip locked` : sql``;
  const { rows } = await sql<Record<string, unknown>>`
    update webhook_endpoints set lease_owner = ${lease}, lease_until_ms = ${untilMs}
    where id in (
      select e.id from webhook_endpoints e join clinic_data_versions v on v.clinic_id = e.clinic_id
      where e.enabled = 1 and e.next_attempt_ms <= ${nowMs} and e.lease_until_ms <= ${nowMs} and e.cursor < v.events_seq
      order by e.next_attempt_ms limit ${limit} ${lock})
    returning *`.execute(db);
  return rows.map(endpointRow);
}

/**
 * Extends `lease`'s hold on the endpoint to `untilMs`, right before an attempt; false when
 * another claim holds it now (this session was stalled past its lease, and must not send).
 */
export async function renewWebhookLease(db: Kysely<DB>, id: string, lease: string, untilMs: number): Promise<boolean> {
  const res = await db
    .updateTable('webhook_endpoints')
    .set({ lease_until_ms: untilMs })
    .where('id', '=', id)
    .where('lease_owner', '=', lease)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * The head event was delivered (or needs no delivery): the cursor moves to `cursor`, failures are
 * forgotten and the lease extended. False when `lease` no longer holds the endpoint (its session must stop).
 */
export async function advanceWebhookCursor(
  db: Kysely<DB>,
  id: string,
  lease: string,
  cursor: number,
  leaseUntilMs: number,
): Promise<boolean> {
  const res = await db
    .updateTable('webhook_endpoints')
    .set({ cursor, attempts: 0, failing_since_ms: null, last_error: null, lease_until_ms: leaseUntilMs })
    .where('id', '=', id)
    .where('lease_owner', '=', lease)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** The head event failed: when to try again, since when it fails, and (after 3 days) disabled; the lease is given up. */
export async function recordWebhookFailure(
  db: Kysely<DB>,
  id: string,
  lease: string,
  f: {
    attempts: number;
    nextAttemptMs: number;
    failingSinceMs: number;
    lastError: string;
    disable: boolean;
    nowMs: number;
  },
): Promise<boolean> {
  const res = await db
    .updateTable('webhook_endpoints')
    .set({
      attempts: f.attempts,
      next_attempt_ms: f.nextAttemptMs,
      failing_since_ms: f.failingSinceMs,
      last_error: f.lastError,
      lease_owner: null,
      lease_until_ms: 0,
      ...(f.disable ? { enabled: 0, disabled_reason: 'failing', disabled_at: Math.floor(f.nowMs / 1000) } : {}),
    })
    .where('id', '=', id)
    .where('lease_owner', '=', lease)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Gives the endpoint up, if `lease` still holds it. */
export async function releaseWebhookLease(db: Kysely<DB>, id: string, lease: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ lease_owner: null, lease_until_ms: 0 })
    .where('id', '=', id)
    .where('lease_owner', '=', lease)
    .execute();
}

export async function insertWebhookDelivery(db: Kysely<DB>, row: Insertable<WebhookDeliveriesTable>): Promise<void> {
  await db.insertInto('webhook_deliveries').values(row).execute();
}

/** The endpoint's latest attempts, newest first. */
export async function listWebhookDeliveries(db: Kysely<DB>, clinicId: string, endpointId: string, limit: number): Promise<DeliveryRow[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .where('clinic_id', '=', clinicId)
    .orderBy('at_ms', 'desc')
    .orderBy('seq', 'desc')
    .orderBy('attempt', 'desc')
    .limit(limit)
    .execute();
  return rows.map(deliveryRow);
}

export async function getWebhookDelivery(db: Kysely<DB>, clinicId: string, id: string): Promise<DeliveryRow | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('clinic_id', '=', clinicId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row && deliveryRow(row);
}

/** One event of the clinic by its seq (a resend: the delivery recorded it), a primary-key read. */
export async function getEventBySeq(db: Kysely<DB>, clinicId: string, seq: number) {
  const row = await db
    .selectFrom('events')
    .select(['seq', 'id', 'tipo', 'ocurrido_at', 'datos'])
    .where('clinic_id', '=', clinicId)
    .where('seq', '=', seq)
    .executeTakeFirst();
  return row && { ...row, seq: Number(row.seq), ocurrido_at: Number(row.ocurrido_at) };
}

// Idempotency-Keys of subscriptions by API (migration 015): the key's hash, per credential.

export async function findIdempotencyKey(db: Kysely<DB>, clinicId: string, credentialId: string, keyHash: string, sinceMs: number) {
  const row = await db
    .selectFrom('webhook_idempotency')
    .select(['request_hash', 'endpoint_id'])
    .where('clinic_id', '=', clinicId)
    .where('credential_id', '=', credentialId)
    .where('key_hash', '=', keyHash)
    .where('created_ms', '>=', sinceMs)
    .executeTakeFirst();
  return row;
}

/** Remembers a key (replacing one of the same name older than the window, which no longer counts). */
export async function rememberIdempotencyKey(
  db: Kysely<DB>,
  r: { clinicId: string; credentialId: string; keyHash: string; requestHash: string; endpointId: string; createdMs: number },
): Promise<void> {
  await db
    .deleteFrom('webhook_idempotency')
    .where('clinic_id', '=', r.clinicId)
    .where('credential_id', '=', r.credentialId)
    .where('key_hash', '=', r.keyHash)
    .execute();
  await db
    .insertInto('webhook_idempotency')
    .values({
      clinic_id: r.clinicId,
      credential_id: r.credentialId,
      key_hash: r.keyHash,
      request_hash: r.requestHash,
      endpoint_id: r.endpointId,
      created_ms: r.createdMs,
    })
    .execute();
}

/** Every clinic (retention): forgets the keys older than `beforeMs`. */
export async function pruneIdempotencyKeys(db: Kysely<DB>, beforeMs: number): Promise<number> {
  const res = await db.deleteFrom('webhook_idempotency').where('created_ms', '<', beforeMs).executeTakeFirst();
  return Number(res.numDeletedRows);
}

// The credential behind an endpoint subscribed by API (migration 015): a rolled key hands its
// endpoints to its replacement; a key revoked or expired, or an OAuth grant revoked, disables
// them. A revocation disables its credential's endpoints in its own transaction
// (disableEndpointsOfCredentials); the maintenance pass, every clinic, catches expiries and
// anything a revocation did not reach (a key revoked by an older version, say).

/** Endpoints of rolled keys move to the key that replaced them; how many moved. */
export async function handOverRolledKeyEndpoints(db: Kysely<DB>): Promise<number> {
  const res = await db
    .updateTable('webhook_endpoints')
    .set((eb) => ({
      created_by_key: eb
        .selectFrom('api_keys as k')
        .select('k.replaced_by')
        .whereRef('k.id', '=', 'webhook_endpoints.created_by_key')
        .where('k.clinic_id', '=', eb.ref('webhook_endpoints.clinic_id')),
    }))
    .where('created_by_key', 'in', (eb) => eb.selectFrom('api_keys').select('id').where('replaced_by', 'is not', null))
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** The change that disables an endpoint because the credential that subscribed it ended. */
const endedBy = (reason: string, nowS: number) =>
  ({ enabled: 0, disabled_reason: reason, disabled_at: nowS, lease_owner: null, lease_until_ms: 0 }) as const;

/**
 * A revocation, in its transaction: disables the clinic's enabled endpoints subscribed by the
 * revoked keys (`created_by_key`) or grant (`created_by_grant`), so no delivery starts after it;
 * `at` in seconds, as the revocation's.
 */
export async function disableEndpointsOfCredentials(
  db: Kysely<DB>,
  clinicId: string,
  column: 'created_by_key' | 'created_by_grant',
  ids: readonly string[],
  reason: 'key_revoked' | 'grant_revoked',
  at: number,
): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('webhook_endpoints')
    .set(endedBy(reason, at))
    .where('clinic_id', '=', clinicId)
    .where('enabled', '=', 1)
    .where(column, 'in', [...ids])
    .execute();
}

/**
 * Disables the enabled endpoints whose subscribing key was revoked or has expired at `nowMs`, or
 * whose OAuth grant was revoked, with that reason; returns them (id, clinic, reason).
 */
export async function disableEndpointsOfEndedCredentials(
  db: Kysely<DB>,
  nowMs: number,
): Promise<{ id: string; clinic_id: string; reason: string }[]> {
  const nowS = Math.floor(nowMs / 1000);
  const out: { id: string; clinic_id: string; reason: string }[] = [];
  const ended = [
    {
      reason: 'key_revoked',
      column: 'created_by_key' as const,
      ids: db.selectFrom('api_keys').select('id').where('revoked_at', 'is not', null),
    },
    {
      reason: 'key_expired',
      column: 'created_by_key' as const,
      ids: db.selectFrom('api_keys').select('id').where('expires_at', '<=', nowS).where('replaced_by', 'is', null),
    },
    {
      reason: 'grant_revoked',
      column: 'created_by_grant' as const,
      ids: db.selectFrom('oauth_grants').select('id').where('revoked_at', 'is not', null),
    },
  ];
  for (const { reason, column, ids } of ended) {
    const rows = await db
      .updateTable('webhook_endpoints')
      .set(endedBy(reason, nowS))
      .where('enabled', '=', 1)
      .where(column, 'in', ids)
      .returning(['id', 'clinic_id'])
      .execute();
    out.push(...rows.map((r) => ({ ...r, reason })));
  }
  return out;
}
