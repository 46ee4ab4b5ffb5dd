// Webhook endpoints, the use-cases: create (the secret returned once), list, enable/disable,
// delete, recent deliveries, a test event (ping) and a resend. Shared by the dashboard and the
// CLI; the delivery worker (worker.ts) does the rest.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { whenWritable, type Database } from '../../db/connect.js';
import type { DB } from '../../db/schema.js';
import type { Plan } from '../../domain/records.js';
import { EVENT_TYPES } from '../../collections/index.js';
import { secretMasker } from '../../domain/secret-mask.js';
import { DomainError } from '../../errors.js';
import { getApiKey } from '../../repos/api-keys.js';
import { getClinic } from '../../repos/clinics.js';
import { getGrant } from '../../repos/oauth.js';
import {
  countWebhookEndpoints,
  deleteWebhookEndpoint,
  findIdempotencyKey,
  getEventBySeq,
  getWebhookDelivery,
  getWebhookEndpoint,
  insertWebhookDelivery,
  insertWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  locateWebhookEndpoint,
  rememberIdempotencyKey,
  setWebhookEnabled,
  type DeliveryRow,
  type EndpointRow,
} from '../../repos/webhooks.js';
import { endpointsInIncident } from '../../repos/webhook-alerts.js';
import { enqueueReplays, failedEventsSince, queryWebhookDeliveries, type DeliveryQuery } from '../../repos/webhook-log.js';
import { lockClinicData } from '../../repos/writes.js';
import { isApiEligible } from '../api-keys.js';
import { datosWithoutContact } from '../contact-view.js';
import { eventJson } from '../feed.js';
import { formatTimestamp } from '../../time.js';
import { checkUrl, vetHost, type Resolver } from './destination.js';
import { generateWebhookSecret, openSecret, sealSecret } from './secret.js';
import { sendWebhook, type Attempt } from './send.js';
import { FOLLOW_UP_WRITE_WAIT_MS, INTERACTIVE_WRITE_WAIT_MS } from '../write-lock.js';

export const MAX_ENDPOINTS_PER_CLINIC = 10;

export type { DeliveryQuery, DeliveryRow, EndpointRow };

export interface WebhookServiceOptions {
  pepper: string;
  /** API_KEY_PREFIX (default svc): keys of this prefix in a receiver's answer are masked in the delivery log */
  keyPrefix?: string;
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

/**
 * An event as endpoint `e` receives it: the feed's JSON, without contact details when the
 * credential that subscribed it could not read them (as its feed would show it).
 */
export function deliveryBody(
  e: Pick<EndpointRow, 'contact'>,
  ev: { id: string; tipo: string; ocurrido_at: number; datos: string },
  timezone: string,
): string {
  return eventJson(e.contact === 0 ? { ...ev, datos: datosWithoutContact(ev.tipo, ev.datos) } : ev, timezone);
}

/** The credential that subscribed an endpoint by API. */
export interface Subscriber {
  kind: 'key' | 'app';
  id: string;
  name: string;
}

export interface CreatedEndpoint {
  endpoint: EndpointRow;
  /** whsec_...: shown once, never stored in clear */
  secret: string;
  /** true: an Idempotency-Key seen before; nothing was created, this is what it made */
  repeated: boolean;
}

/** How long an Idempotency-Key answers the same endpoint again. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

/** A POST's Idempotency-Key: hashed, with the hash of the request it came with. */
export interface IdempotencyKey {
  /** the API key's (or OAuth grant's) id: keys are per credential */
  credentialId: string;
  keyHash: string;
  requestHash: string;
}

export interface NewEndpoint {
  clinicId: string;
  url: string;
  eventTypes: readonly string[] | null;
  /** the dashboard user who added it */
  createdBy: string | null;
  description?: string | null;
  /** the API key or OAuth grant that subscribed it by API (its end disables the endpoint) */
  createdByKey?: string | null;
  createdByGrant?: string | null;
  /** false: deliveries carry no contact details (the subscriber may not read them) */
  contact?: boolean;
  idempotency?: IdempotencyKey;
}

export class WebhookService {
  private readonly now: () => number;

  constructor(
    private readonly database: Database,
    private readonly opts: WebhookServiceOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.mask = secretMasker(opts.keyPrefix ?? 'svc');
  }

  /** Masks secrets in a receiver's answer before it enters the delivery log. */
  readonly mask: (text: string) => string;

  get allowPrivate(): boolean {
    return this.opts.allowPrivate;
  }

  async create(input: NewEndpoint): Promise<CreatedEndpoint> {
    const db = this.database.db;
    const idem = input.idempotency;
    // A repeated Idempotency-Key answers what the first request made, before any check: the
    // destination may no longer resolve, and the answer must be the same.
    if (idem) {
      const earlier = await this.idempotentAnswer(db, input.clinicId, idem);
      if (earlier) return earlier;
    }
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
        // The same key sent twice at once: the second waited for the lock and finds the first's.
        if (idem) {
          const earlier = await this.idempotentAnswer(trx, clinic.id, idem);
          if (earlier) return earlier;
        }
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
          description: input.description ?? null,
          created_by_key: input.createdByKey ?? null,
          created_by_grant: input.createdByGrant ?? null,
          contact: input.contact === false ? 0 : 1,
          alert_stage: 0,
          alert_since_ms: null,
        };
        await insertWebhookEndpoint(trx, row);
        if (idem) await rememberIdempotencyKey(trx, { clinicId: clinic.id, ...idem, endpointId: id, createdMs: nowMs });
        return { endpoint: row, secret, repeated: false };
      },
      { waitMs: INTERACTIVE_WRITE_WAIT_MS },
    );
    return endpoint;
  }

  /**
   * What an Idempotency-Key used in the last 24 hours made: the same endpoint and secret again;
   * undefined for a key not used (or used longer ago). The same key with another body, or whose
   * endpoint was deleted since, is refused: answering anything else would not be the same answer.
   */
  private async idempotentAnswer(db: Kysely<DB>, clinicId: string, idem: IdempotencyKey): Promise<CreatedEndpoint | undefined> {
    const earlier = await findIdempotencyKey(db, clinicId, idem.credentialId, idem.keyHash, this.now() - IDEMPOTENCY_WINDOW_MS);
    if (!earlier) return undefined;
    if (earlier.request_hash !== idem.requestHash)
      throw new DomainError(
        'conflict',
        'this Idempotency-Key was used in the last 24 hours with another request body; send a new key for a new request',
        { field: 'Idempotency-Key' },
      );
    const e = await getWebhookEndpoint(db, clinicId, earlier.endpoint_id);
    if (!e)
      throw new DomainError(
        'conflict',
        `the webhook endpoint this Idempotency-Key created (${earlier.endpoint_id}) was deleted since; send a new key to create another`,
        { field: 'Idempotency-Key' },
      );
    return { endpoint: e, secret: this.secretOf(e), repeated: true };
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

  /** Who subscribed an endpoint by API: the key's or the app's name (null: added in the dashboard or the CLI). */
  async subscriber(e: Pick<EndpointRow, 'clinic_id' | 'created_by_key' | 'created_by_grant'>): Promise<Subscriber | null> {
    if (e.created_by_key !== null) {
      const k = await getApiKey(this.database.db, e.clinic_id, e.created_by_key);
      return { kind: 'key', id: e.created_by_key, name: k?.name ?? e.created_by_key };
    }
    if (e.created_by_grant !== null) {
      const g = await getGrant(this.database.db, e.clinic_id, e.created_by_grant);
      return { kind: 'app', id: e.created_by_grant, name: g?.client_name ?? e.created_by_grant };
    }
    return null;
  }

  deliveries(clinicId: string, endpointId: string, limit = 20): Promise<DeliveryRow[]> {
    return listWebhookDeliveries(this.database.db, clinicId, endpointId, limit);
  }

  /** The clinic's endpoints in a delivery incident (failing past WEBHOOK_ALERT_AFTER_MIN, or disabled by it): the dashboard's banner. */
  incidents(clinicId: string) {
    return endpointsInIncident(this.database.db, clinicId);
  }

  /** The delivery log: a page of attempts, filtered (the dashboard newest first, the CLI's stream oldest first). */
  deliveryLog(q: DeliveryQuery): Promise<DeliveryRow[]> {
    return queryWebhookDeliveries(this.database.db, q);
  }

  /** One attempt of the clinic's delivery log. */
  delivery(clinicId: string, id: string): Promise<DeliveryRow | undefined> {
    return getWebhookDelivery(this.database.db, clinicId, id);
  }

  /**
   * Queues every event of the endpoint whose attempts since `sinceMs` all failed, to be sent
   * again once each, in event order, with the same webhook-id (replay.ts sends them beside the
   * live deliveries, never in their way). Returns how many were queued.
   */
  async replay(clinicId: string, endpointId: string, sinceMs: number): Promise<number> {
    const e = await this.get(clinicId, endpointId);
    if (!e) throw new DomainError('not_found', `no webhook endpoint with id ${endpointId} in clinic ${clinicId}`, { field: 'endpoint' });
    const events = await failedEventsSince(this.database.db, clinicId, endpointId, sinceMs);
    const queuedMs = this.now();
    await whenWritable(
      () =>
        enqueueReplays(
          this.database.db,
          events.map((ev) => ({ id: randomUUID(), clinic_id: clinicId, endpoint_id: endpointId, seq: ev.seq, queued_ms: queuedMs })),
        ),
      INTERACTIVE_WRITE_WAIT_MS,
    );
    return events.length;
  }

  /** The signing secret of an endpoint (for a delivery only; never shown again, never logged). */
  secretOf(e: Pick<EndpointRow, 'id' | 'secret_enc'>): string {
    return openSecret(this.opts.pepper, e.id, e.secret_enc);
  }

  /** One attempt now (a ping or a resend): sent, recorded among the deliveries, and returned. */
  async deliverNow(
    e: EndpointRow,
    ev: { id: string; tipo: string; seq: number | null; body: string },
    kind: 'test' | 'resend' | 'replay',
  ): Promise<Attempt> {
    const attempt = await sendWebhook(e.url, this.secretOf(e), ev.id, ev.body, {
      allowPrivate: this.opts.allowPrivate,
      timeoutMs: this.opts.timeoutMs,
      resolve: this.opts.resolve,
    });
    // The request was sent: its record follows it (a follow-up write, which waits longer).
    await recordAttempt(this.database, e, ev, kind, 1, this.now(), attempt, FOLLOW_UP_WRITE_WAIT_MS, { mask: this.mask });
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
    return this.deliverNow(e, { id: ev.id, tipo: ev.tipo, seq: ev.seq, body: deliveryBody(e, ev, clinic.timezone) }, 'resend');
  }
}

/** How an attempt was made: by the worker, a test ping, a resend, or a replay. */
export type AttemptKind = 'auto' | 'test' | 'resend' | 'replay';

/**
 * Records one attempt in the delivery log (kept WEBHOOK_LOG_DAYS: maintenance.ts prunes it),
 * with the answer's first 1 KB masked and when the event is tried next, waiting up to
 * `lockWaitMs` for SQLite's write lock.
 */
export async function recordAttempt(
  database: Database,
  e: Pick<EndpointRow, 'id' | 'clinic_id'>,
  ev: { id: string; tipo: string; seq: number | null },
  kind: AttemptKind,
  attempt: number,
  atMs: number,
  a: Attempt,
  lockWaitMs: number,
  log: { mask: (text: string) => string; nextRetryMs?: number | null },
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
    response_excerpt: a.body === null ? null : log.mask(a.body),
    next_retry_ms: log.nextRetryMs ?? null,
  };
  await whenWritable(() => insertWebhookDelivery(database.db, row), lockWaitMs);
}
