// The webhooks' delivery log and replay queue (migration 015): every attempt of every delivery,
// kept WEBHOOK_LOG_DAYS, read in keyset pages; the events queued to be sent again. Every query of
// a clinic's user names the clinic; retention and the replayer work across clinics and say so.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { deliveryRow, type DeliveryRow } from './webhooks.js';

export interface DeliveryQuery {
  clinicId: string;
  endpointId?: string;
  outcome?: 'delivered' | 'failed';
  tipo?: string;
  sinceMs?: number;
  untilMs?: number;
  /** newest first (the dashboard) or oldest first (the CLI's stream) */
  order: 'desc' | 'asc';
  /** the page after this attempt, in `order` (keyset: at_ms, then id) */
  after?: { atMs: number; id: string };
  limit: number;
}

/** Attempts of the clinic (or one endpoint), filtered, a page in time order; by (clinic|endpoint, at_ms). */
export async function queryWebhookDeliveries(db: Kysely<DB>, q: DeliveryQuery): Promise<DeliveryRow[]> {
  let sel = db.selectFrom('webhook_deliveries').selectAll().where('clinic_id', '=', q.clinicId);
  if (q.endpointId !== undefined) sel = sel.where('endpoint_id', '=', q.endpointId);
  if (q.outcome !== undefined) sel = sel.where('outcome', '=', q.outcome);
  if (q.tipo !== undefined) sel = sel.where('tipo', '=', q.tipo);
  if (q.sinceMs !== undefined) sel = sel.where('at_ms', '>=', q.sinceMs);
  if (q.untilMs !== undefined) sel = sel.where('at_ms', '<', q.untilMs);
  const after = q.after;
  if (after !== undefined) {
    const cmp = q.order === 'desc' ? '<' : '>';
    sel = sel.where((eb) => eb.or([eb('at_ms', cmp, after.atMs), eb.and([eb('at_ms', '=', after.atMs), eb('id', cmp, after.id)])]));
  }
  const rows = await sel.orderBy('at_ms', q.order).orderBy('id', q.order).limit(q.limit).execute();
  return rows.map(deliveryRow);
}

/** Every clinic (retention): removes up to `limit` attempts older than `beforeMs`; how many went. */
export async function pruneDeliveryLog(db: Kysely<DB>, beforeMs: number, limit: number): Promise<number> {
  const res = await db
    .deleteFrom('webhook_deliveries')
    .where('id', 'in', (eb) => eb.selectFrom('webhook_deliveries').select('id').where('at_ms', '<', beforeMs).limit(limit))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * The events of the endpoint's log whose every attempt since `sinceMs` failed (none delivered
 * since), oldest first: what a replay sends again. Pings (no seq) are not events of the log.
 */
export async function failedEventsSince(db: Kysely<DB>, clinicId: string, endpointId: string, sinceMs: number) {
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .select(['d.seq', 'd.event_id'])
    .distinct()
    .where('d.clinic_id', '=', clinicId)
    .where('d.endpoint_id', '=', endpointId)
    .where('d.at_ms', '>=', sinceMs)
    .where('d.outcome', '=', 'failed')
    .where('d.seq', 'is not', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_deliveries as ok')
            .select('ok.id')
            .whereRef('ok.endpoint_id', '=', 'd.endpoint_id')
            .whereRef('ok.seq', '=', 'd.seq')
            .where('ok.outcome', '=', 'delivered')
            .where('ok.at_ms', '>=', sinceMs),
        ),
      ),
    )
    .orderBy('d.seq')
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), eventId: r.event_id }));
}

// The replay queue: events to send again, one attempt each, in seq order per endpoint.

export async function enqueueReplays(
  db: Kysely<DB>,
  rows: { id: string; clinic_id: string; endpoint_id: string; seq: number; queued_ms: number }[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('webhook_replays')
    .values(rows.map((r) => ({ ...r, lease_owner: null, lease_until_ms: 0 })))
    .execute();
}

/**
 * Every clinic (the replayer, under a lease): claims the queued replays of one endpoint no other
 * process holds, for `owner` until `untilMs`, in seq order; [] when none is waiting.
 */
export async function claimReplays(db: Kysely<DB>, owner: string, nowMs: number, untilMs: number, limit: number) {
  const next = await db
    .selectFrom('webhook_replays')
    .select('endpoint_id')
    .where('lease_until_ms', '<=', nowMs)
    .orderBy('queued_ms')
    .limit(1)
    .executeTakeFirst();
  if (!next) return [];
  const ids = await db
    .selectFrom('webhook_replays')
    .select('id')
    .where('endpoint_id', '=', next.endpoint_id)
    .where('lease_until_ms', '<=', nowMs)
    .orderBy('seq')
    .limit(limit)
    .execute();
  if (ids.length === 0) return [];
  // Conditional on the lease still being free: of two processes, only one takes each row.
  const rows = await db
    .updateTable('webhook_replays')
    .set({ lease_owner: owner, lease_until_ms: untilMs })
    .where(
      'id',
      'in',
      ids.map((r) => r.id),
    )
    .where('lease_until_ms', '<=', nowMs)
    .returningAll()
    .execute();
  return rows.map((r) => ({ ...r, seq: Number(r.seq) })).sort((a, b) => a.seq - b.seq);
}

export async function deleteReplay(db: Kysely<DB>, id: string, owner: string): Promise<void> {
  await db.deleteFrom('webhook_replays').where('id', '=', id).where('lease_owner', '=', owner).execute();
}

/** Queued replays of the endpoint (the CLI says how many are waiting). */
export async function countReplays(db: Kysely<DB>, clinicId: string, endpointId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_replays')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('clinic_id', '=', clinicId)
    .where('endpoint_id', '=', endpointId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
