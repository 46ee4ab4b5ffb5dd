// Webhook endpoints, the use-cases: create (the secret returned once), list, enable/disable,
// delete, recent deliveries, a test event (ping) and a resend. Shared by the dashboard and the
// CLI; the delivery worker (worker.ts) does the rest.
import { randomUUID } from 'node:crypto';
import { whenWritable, type Database } from '../../db/connect.js';
import type { Plan } from '../../domain/records.js';
import { EVENT_TYPES } from '../../collections/index.js';
import { DomainError } from '../../errors.js';
import { getClinic } from '../../repos/clinics.js';
import {
  countWebhookEndpoints,
  deleteWebhookEndpoint,
  getEventBySeq,
  getWebhookDelivery,
  getWebhookEndpoint,
  insertWebhookDelivery,
  insertWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  locateWebhookEndpoint,
  pruneWebhookDeliveries,
  setWebhookEnabled,
  type DeliveryRow,
  type EndpointRow,
} from '../../repos/webhooks.js';
import { lockClinicData } from '../../repos/writes.js';
import { isApiEligible } from '../api-keys.js';
import { eventJson } from '../feed.js';
import { formatTimestamp } from '../../time.js';
import { checkUrl, vetHost, type Resolver } from './destination.js';
import { generateWebhookSecret, openSecret, sealSecret } from './secret.js';
import { sendWebhook, type Attempt } from './send.js';
import { FOLLOW_UP_WRITE_WAIT_MS, INTERACTIVE_WRITE_WAIT_MS } from '../write-lock.js';

export const MAX_ENDPOINTS_PER_CLINIC = 10;
/** Attempts kept per endpoint for the dashboard and the CLI. */
export const DELIVERIES_KEPT = 100;

export type { DeliveryRow, EndpointRow };

export interface WebhookServiceOptions {
  pepper: string;
  apiPlans: readonly Plan[];
  allowPrivate: boolean;
  timeoutMs: number;
  now?: () => number;
  /** DNS resolution of destinations (default: the system's) */
  resolve?: Resolver;
}

export type EndpointStatus = 'active' | 'failing' | 'disabled';

export function endpointStatus(e: Pick<EndpointRow, 'enabled' | 'failing_since_ms'>): EndpointStatus {
  if (!e.enabled) return 'disabled';
  return e.failing_since_ms !== null ? 'failing' : 'active';
}

/** Validates a choice of event types (null or empty: all), in the catalogue's order. */
export function parseEventTypes(asked: readonly string[] | null): string[] | null {
  if (asked === null) return null;
  const list = asked.map((t) => t.trim()).filter(Boolean);
  if (list.length === 0) return null;
  const unknown = list.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0) {
    throw new DomainError(
      'invalid_input',
      `events must be a comma-separated list of: ${EVENT_TYPES.join(', ')}; not: ${unknown.map((t) => JSON.stringify(t)).join(', ')}`,
      { field: 'events' },
    );
  }
  const chosen = EVENT_TYPES.filter((t) => list.includes(t));
  return chosen.length === EVENT_TYPES.length ? null : chosen;
}

export interface CreatedEndpoint {
  endpoint: EndpointRow;
  /** whsec_...: shown once, never stored in clear */
  secret: string;
}

export class WebhookService {
  private readonly now: () => number;

  constructor(
    private readonly database: Database,
    private readonly opts: WebhookServiceOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  get allowPrivate(): boolean {
    return this.opts.allowPrivate;
  }

  async create(input: {
    clinicId: string;
    url: string;
    eventTypes: readonly string[] | null;
    createdBy: string | null;
  }): Promise<CreatedEndpoint> {
    const db = this.database.db;
    const clinic = await getClinic(db, input.clinicId);
    if (!clinic)
      throw new DomainError('not_found', `no clinic with id ${input.clinicId} (clinic-api clinics list shows the ids)`, {
        field: 'clinic',
      });
    if (!isApiEligible(clinic.plan, this.opts.apiPlans)) {
      throw new DomainError(
        'plan_not_eligible',
        `Clinic plan "${clinic.plan}" does not include API access (webhooks included); eligible plans: ${this.opts.apiPlans.join(', ')}`,
      );
    }
    const types = parseEventTypes(input.eventTypes);
    const url = checkUrl(input.url, this.opts.allowPrivate);
    await vetHost(url, this.opts.allowPrivate, this.opts.resolve);
    const secret = generateWebhookSecret();
    const id = randomUUID();
    const nowMs = this.now();
    const endpoint = await this.database.writeTransaction(
      async (trx) => {
        // Under the clinic's writer lock: the count cannot be raced past 10, and the head read is
        // the committed one, so the endpoint receives exactly the events committed after it.
        await lockClinicData(trx, clinic.id);
        if ((await countWebhookEndpoints(trx, clinic.id)) >= MAX_ENDPOINTS_PER_CLINIC) {
          throw new DomainError(
            'conflict',
            `clinic ${clinic.id} already has ${MAX_ENDPOINTS_PER_CLINIC} webhook endpoints, the most allowed: delete one first`,
            { field: 'url' },
          );
        }
        const head = await trx
          .selectFrom('clinic_data_versions')
          .select('events_seq')
          .where('clinic_id', '=', clinic.id)
          .executeTakeFirst();
        const row: EndpointRow = {
          id,
          clinic_id: clinic.id,
          url: url.href,
          event_types: types,
          secret_enc: sealSecret(this.opts.pepper, id, secret),
          enabled: 1,
          disabled_reason: null,
          disabled_at: null,
          created_at: Math.floor(nowMs / 1000),
          created_by: input.createdBy,
          cursor: Number(head?.events_seq ?? 0),
          attempts: 0,
          next_attempt_ms: nowMs,
          failing_since_ms: null,
          last_error: null,
          lease_owner: null,
          lease_until_ms: 0,
        };
        await insertWebhookEndpoint(trx, row);
        return row;
      },
      { waitMs: INTERACTIVE_WRITE_WAIT_MS },
    );
    return { endpoint, secret };
  }

  list(clinicId: string): Promise<EndpointRow[]> {
    return listWebhookEndpoints(this.database.db, clinicId);
  }

  get(clinicId: string, id: string): Promise<EndpointRow | undefined> {
    return getWebhookEndpoint(this.database.db, clinicId, id);
  }

  /** Operator-scoped: the clinic of endpoint `id` (the CLI names endpoints, not clinics). */
  locate(id: string): Promise<string | undefined> {
    return locateWebhookEndpoint(this.database.db, id);
  }

  delete(clinicId: string, id: string): Promise<boolean> {
    return this.database.writeTransaction((trx) => deleteWebhookEndpoint(trx, clinicId, id), { waitMs: INTERACTIVE_WRITE_WAIT_MS });
  }

  /** Enabling resumes from the endpoint's cursor: every event since it stopped is delivered (see docs/webhooks.md). */
  setEnabled(clinicId: string, id: string, enabled: boolean): Promise<boolean> {
    const at = this.now();
    return whenWritable(
      () => setWebhookEnabled(this.database.db, clinicId, id, enabled, enabled ? null : 'manual', at),
      INTERACTIVE_WRITE_WAIT_MS,
    );
  }

  deliveries(clinicId: string, endpointId: string, limit = 20): Promise<DeliveryRow[]> {
    return listWebhookDeliveries(this.database.db, clinicId, endpointId, limit);
  }

  /** The signing secret of an endpoint (for a delivery only; never shown again, never logged). */
  secretOf(e: Pick<EndpointRow, 'id' | 'secret_enc'>): string {
    return openSecret(this.opts.pepper, e.id, e.secret_enc);
  }

  /** One attempt now (a ping or a resend): sent, recorded among the deliveries, and returned. */
  async deliverNow(
    e: EndpointRow,
    ev: { id: string; tipo: string; seq: number | null; body: string },
    kind: 'test' | 'resend',
  ): Promise<Attempt> {
    const attempt = await sendWebhook(e.url, this.secretOf(e), ev.id, ev.body, {
      allowPrivate: this.opts.allowPrivate,
      timeoutMs: this.opts.timeoutMs,
      resolve: this.opts.resolve,
    });
    // The request was sent: its record follows it (a follow-up write, which waits longer).
    await recordAttempt(this.database, e, ev, kind, 1, this.now(), attempt, FOLLOW_UP_WRITE_WAIT_MS);
    return attempt;
  }

  /** Sends a `ping` event (not part of the event log or the feed) to the endpoint, enabled or not. */
  async sendTest(clinicId: string, id: string): Promise<Attempt> {
    const e = await this.get(clinicId, id);
    if (!e) throw new DomainError('not_found', `no webhook endpoint with id ${id}`, { field: 'endpoint' });
    const clinic = await getClinic(this.database.db, clinicId);
    const eventId = randomUUID();
    const body = JSON.stringify({
      id: eventId,
      tipo: 'ping',
      ocurrido_at: formatTimestamp(Math.floor(this.now() / 1000), clinic?.timezone ?? 'UTC'),
      datos: { endpoint_id: e.id, mensaje: 'Evento de prueba / test event' },
    });
    return this.deliverNow(e, { id: eventId, tipo: 'ping', seq: null, body }, 'test');
  }

  /** Delivers the event of a past delivery again, now (out of order; same webhook-id). */
  async resend(clinicId: string, deliveryId: string): Promise<Attempt> {
    const d = await getWebhookDelivery(this.database.db, clinicId, deliveryId);
    const e = d && (await this.get(clinicId, d.endpoint_id));
    if (!d || !e) throw new DomainError('not_found', `no webhook delivery with id ${deliveryId}`, { field: 'delivery' });
    if (d.seq === null) return this.sendTest(clinicId, e.id);
    const [ev, clinic] = await Promise.all([getEventBySeq(this.database.db, clinicId, d.seq), getClinic(this.database.db, clinicId)]);
    if (!ev || !clinic)
      throw new DomainError('conflict', 'that event is no longer kept (older than the event retention period)', { field: 'delivery' });
    return this.deliverNow(e, { id: ev.id, tipo: ev.tipo, seq: ev.seq, body: eventJson(ev, clinic.timezone) }, 'resend');
  }
}

/**
 * Records one attempt among the endpoint's deliveries (and prunes its oldest beyond
 * DELIVERIES_KEPT now and then), waiting up to `lockWaitMs` for SQLite's write lock.
 */
export async function recordAttempt(
  database: Database,
  e: Pick<EndpointRow, 'id' | 'clinic_id'>,
  ev: { id: string; tipo: string; seq: number | null },
  kind: 'auto' | 'test' | 'resend',
  attempt: number,
  atMs: number,
  a: Attempt,
  lockWaitMs: number,
): Promise<void> {
  const row = {
    id: randomUUID(),
    endpoint_id: e.id,
    clinic_id: e.clinic_id,
    event_id: ev.id,
    tipo: ev.tipo,
    seq: ev.seq,
    kind,
    attempt,
    at_ms: atMs,
    outcome: a.ok ? 'delivered' : 'failed',
    status_code: a.statusCode,
    error: a.error,
    duration_ms: a.durationMs,
  };
  await whenWritable(() => insertWebhookDelivery(database.db, row), lockWaitMs);
  // Pruning costs a read: one attempt in 20 pays it, so an endpoint keeps between 100 and ~120.
  if (Math.random() < 0.05) await whenWritable(() => pruneWebhookDeliveries(database.db, e.id, DELIVERIES_KEPT), lockWaitMs);
}
