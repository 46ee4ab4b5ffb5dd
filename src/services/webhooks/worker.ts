// Longer than 300 lines on purpose: one class whose methods share the lease and the ordering rules
// below; split, the at-least-once argument would be spread over files.
//
// The delivery worker: one per server process (never in the CLI). It claims due endpoints under
// a lease (repos/webhooks.ts claimDueEndpoints: FOR UPDATE SKIP LOCKED on PostgreSQL), so each
// attempt is made by exactly one process, and delivers each claimed endpoint's events strictly in
// the order of the clinic's log: the head event is retried (back-off with full jitter, honouring
// Retry-After) until it is delivered or the endpoint is disabled; nothing behind it goes first.
// The cursor moves only after a 2xx (at least once): a process killed mid-delivery leaves the
// cursor where it was, its lease expires, and another process (or itself, restarted) sends that
// event again. The lease is renewed right before each request is written, and checked there: a
// process stalled past its lease (a starved host, a stopped process) finds the endpoint taken
// and sends nothing; one stalled in the middle of an attempt keeps it for WEBHOOK_LEASE_MS -
// WEBHOOK_TIMEOUT_MS more (docs/webhooks.md, "At least once": the window that remains).
// A lease belongs to one claim (a token), not to the process: when a session's lease ran out
// and this same process claimed the endpoint again, the old session's renewal and cursor moves
// fail as another process's would, and only the new session sends.
//
// SQLite: every write waits for the write lock asynchronously (services/write-lock.ts); while an
// import holds it nothing is claimed, and a cursor to move after a delivery is waited for.
//
// Backpressure: one request in flight per endpoint (its session is sequential) and at most
// `maxInFlight` per process (endpoints are claimed only for free slots); a slow or dead receiver
// holds its own endpoint's slot for at most the attempt's time limit, never another's, and never
// a request of the API (deliveries run here, off the request path).
import { randomUUID } from 'node:crypto';
import { isDatabaseError, whenWritable, WriterBusy, type Database } from '../../db/connect.js';
import { dataVersions } from '../../repos/clinics.js';
import { getClinic } from '../../repos/clinics.js';
import { EVENTS_CHANNEL, eventsAfter } from '../../repos/events.js';
import {
  advanceWebhookCursor,
  claimDueEndpoints,
  getWebhookEndpoint,
  recordWebhookFailure,
  releaseWebhookLease,
  renewWebhookLease,
  type EndpointRow,
} from '../../repos/webhooks.js';
import { backoffDelay, parseRetryAfter, shouldDisable } from './backoff.js';
import { deliveryBody, recordAttempt, type WebhookService } from './endpoints.js';
import type { Resolver } from './destination.js';
import { sendWebhook, type Attempt } from './send.js';
import { BACKGROUND_WRITE_WAIT_MS, INTERACTIVE_WRITE_WAIT_MS } from '../write-lock.js';

/** Events read per query; an endpoint's session delivers at most SESSION_MAX before giving its slot back. */
const PAGE = 50;
const SCAN = 2_000;
const SESSION_MAX = 500;
/** On shutdown, requests in flight get this long to finish before they are cut (their events are sent again later). */
const STOP_GRACE_MS = 3_000;
/** Pauses between attempts at moving the cursor after a delivery, while the database fails. */
const PERSIST_RETRY_FIRST_MS = 100;
const PERSIST_RETRY_MAX_MS = 2_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface WorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DeliveryObserver {
  /** Each attempt of the worker: its outcome, and for a delivered event the lag since the event (ms). */
  attempt(outcome: 'delivered' | 'failed', lagMs: number | null): void;
  disabled(): void;
  /** endpoints being delivered to by this process, after each change */
  inFlight(n: number): void;
}

export interface WorkerOptions {
  maxInFlight: number;
  retryBaseMs: number;
  retryMaxMs: number;
  timeoutMs: number;
  leaseMs: number;
  pollMs: number;
  allowPrivate: boolean;
  log: WorkerLog;
  now?: () => number;
  random?: () => number;
  resolve?: Resolver;
  observer?: DeliveryObserver;
}

export class DeliveryWorker {
  /** The running sessions (two may briefly serve one endpoint: an old one whose lease ran out ends at its next write). */
  private readonly sessions = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly zones = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private started = false;
  private stopped = false;
  private stopping: Promise<void> | null = null;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly database: Database,
    private readonly service: WebhookService,
    private readonly opts: WorkerOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
  }

  /** Endpoints this process is delivering to right now. */
  get inFlight(): number {
    return this.sessions.size;
  }

  async start(): Promise<void> {
    if (this.started || this.stopped) return;
    this.started = true;
    // PostgreSQL wakes the worker at each import's commit; polling stays (SQLite's only way, and
    // retries coming due).
    if (this.database.listen) {
      try {
        this.unlisten = await this.database.listen(
          EVENTS_CHANNEL,
          () => this.kick(),
          (err) => {
            this.opts.log.warn({ err }, 'webhooks: lost the LISTEN connection; polling only');
            this.unlisten = null;
          },
        );
      } catch (err) {
        this.opts.log.warn({ err }, 'webhooks: could not LISTEN for new events; polling only');
      }
    }
    this.schedule(0);
  }

  /** Looks for due endpoints now (new events were committed). */
  kick(): void {
    if (!this.started || this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.ticking = this.tick()
        .then(
          () => {},
          (err: unknown) => this.opts.log.error({ err }, 'webhooks: looking for due endpoints failed'),
        )
        .finally(() => {
          this.ticking = null;
          const soon = this.again;
          this.again = false;
          this.schedule(soon ? 0 : this.opts.pollMs);
        });
    }, ms);
    this.timer.unref();
  }

  /** Claims due endpoints for the free slots and starts a session for each. */
  async tick(): Promise<number> {
    const free = this.opts.maxInFlight - this.sessions.size;
    if (this.stopped || free <= 0) return 0;
    const now = this.now();
    // This claim's token: the sessions it starts hold their endpoints by it, and by nothing else.
    const lease = randomUUID();
    let claimed: EndpointRow[];
    try {
      claimed = await whenWritable(
        () => claimDueEndpoints(this.database.db, lease, now, now + this.opts.leaseMs, free),
        BACKGROUND_WRITE_WAIT_MS,
      );
    } catch (err) {
      // Another process (an import) holds SQLite's write lock: nothing is claimed until it is free.
      if (err instanceof WriterBusy) return 0;
      throw err;
    }
    for (const ep of claimed) {
      const run: Promise<void> = this.session(ep, lease)
        .catch((err: unknown) =>
          this.opts.log.error({ err, endpoint: ep.id, clinic: ep.clinic_id }, 'webhooks: delivery session failed; retried later'),
        )
        // However the session ended, its lease is given up (a no-op when a failed attempt already
        // did, or another session holds the endpoint now).
        .then(() => this.release(ep.id, lease))
        .catch((err: unknown) => this.opts.log.warn({ err, endpoint: ep.id }, 'webhooks: giving a lease up failed; it runs out by itself'))
        .finally(() => {
          this.sessions.delete(run);
          this.opts.observer?.inFlight(this.sessions.size);
          // A slot came free: others may be waiting for it.
          this.kick();
        });
      this.sessions.add(run);
    }
    if (claimed.length > 0) this.opts.observer?.inFlight(this.sessions.size);
    return claimed.length;
  }

  /** Waits until no session is running (tests). */
  async idle(): Promise<void> {
    while (this.sessions.size > 0) await Promise.all([...this.sessions]);
  }

  private async zoneOf(clinicId: string): Promise<string> {
    let zone = this.zones.get(clinicId);
    if (zone === undefined) {
      zone = (await getClinic(this.database.db, clinicId))?.timezone ?? 'UTC';
      this.zones.set(clinicId, zone);
    }
    return zone;
  }

  /** Delivers the endpoint's events after its cursor, in order, while `lease` holds it. */
  private async session(ep: EndpointRow, lease: string): Promise<void> {
    const db = this.database.db;
    const types = ep.event_types;
    const secret = this.service.secretOf(ep);
    const zone = await this.zoneOf(ep.clinic_id);
    let cursor = ep.cursor;
    let sent = 0;
    while (!this.stopped && sent < SESSION_MAX) {
      const bounds = await dataVersions(db, ep.clinic_id);
      if (cursor < bounds.eventsExpired) {
        // Retention removed events this endpoint never got (it was disabled or failing for longer
        // than the log keeps them): they cannot be sent; say so and go on from what is kept.
        this.opts.log.warn(
          { endpoint: ep.id, clinic: ep.clinic_id, from: cursor + 1, through: bounds.eventsExpired },
          'webhooks: events removed by retention before delivery were skipped',
        );
        cursor = bounds.eventsExpired;
        if (!(await this.advance(ep.id, lease, cursor))) return;
      }
      if (cursor >= bounds.eventsSeq) break;
      const through = Math.min(bounds.eventsSeq, cursor + SCAN);
      const rows = await eventsAfter(db, ep.clinic_id, cursor, through, types, PAGE);
      let reread = false;
      for (const ev of rows) {
        if (this.stopped) break;
        // An erasure (services/erasure.ts) may have rewritten the datos of events read into this
        // page since: it bumps the data version, and then the page is read again from the cursor.
        if ((await dataVersions(db, ep.clinic_id)).data !== bounds.data) {
          reread = true;
          break;
        }
        // The lease is renewed right before the request is written (after the address is vetted):
        // it then covers the whole attempt (at most WEBHOOK_TIMEOUT_MS) and a stall of up to
        // WEBHOOK_LEASE_MS - WEBHOOK_TIMEOUT_MS after it, however long this process took to get
        // here. If another process took the endpoint meanwhile (this one was stalled past its
        // lease), nothing is sent: that process delivers from the stored cursor.
        const attempt = await sendWebhook(
          ep.url,
          secret,
          ev.id,
          deliveryBody(ep, ev, zone),
          {
            allowPrivate: this.opts.allowPrivate,
            timeoutMs: this.opts.timeoutMs,
            resolve: this.opts.resolve,
            beforeSend: () => this.renew(ep.id, lease),
          },
          this.abort.signal,
        );
        if (attempt.error === 'aborted' || attempt.error === 'not_sent') return;
        const at = this.now();
        const attemptNo = ep.attempts + 1;
        if (!attempt.ok) {
          await this.failed(ep, lease, ev, attemptNo, attempt, at);
          return;
        }
        // Delivered: the cursor first, since it is what keeps the event from being sent again;
        // the attempt's record (the dashboard's recent deliveries) after it.
        cursor = ev.seq;
        if (!(await this.advance(ep.id, lease, cursor))) return;
        await this.record(ep, ev, attemptNo, at, attempt, null);
        this.opts.observer?.attempt('delivered', at - ev.ocurrido_at * 1000);
        sent++;
        ep = { ...ep, attempts: 0, failing_since_ms: null };
      }
      if (this.stopped) break;
      if (reread) continue;
      // A short page ended the range: the rest of it holds no event of the endpoint's types.
      if (rows.length < PAGE && cursor < through) {
        cursor = through;
        if (!(await this.advance(ep.id, lease, cursor))) return;
      }
    }
  }

  /** beforeSend: extends the session's lease to a full WEBHOOK_LEASE_MS from now; false when it is lost. */
  private async renew(endpointId: string, lease: string): Promise<boolean> {
    const held = await whenWritable(
      () => renewWebhookLease(this.database.db, endpointId, lease, this.now() + this.opts.leaseMs),
      INTERACTIVE_WRITE_WAIT_MS,
    );
    if (!held) this.leaseLost(endpointId);
    return held;
  }

  /** Its endpoint was claimed again after a stall past the lease, or disabled, or deleted. */
  private leaseLost(endpointId: string): void {
    this.opts.log.warn(
      { endpoint: endpointId },
      'webhooks: a delivery session lost its endpoint (claimed again, disabled or deleted); it stops',
    );
  }

  /**
   * Moves the cursor (extending the lease); false when another session holds the endpoint now.
   * A database that fails meanwhile (or SQLite's write lock, taken by an import) is waited for,
   * up to a lease's length: giving up sends the event again later (at least once), and so would
   * giving the endpoint up to another process.
   */
  private async advance(endpointId: string, lease: string, cursor: number): Promise<boolean> {
    const giveUpAt = performance.now() + this.opts.leaseMs;
    for (let pause = PERSIST_RETRY_FIRST_MS; ; pause = Math.min(pause * 2, PERSIST_RETRY_MAX_MS)) {
      try {
        const held = await whenWritable(
          () => advanceWebhookCursor(this.database.db, endpointId, lease, cursor, this.now() + this.opts.leaseMs),
          Math.max(0, giveUpAt - performance.now()),
        );
        if (!held) this.leaseLost(endpointId);
        return held;
      } catch (err) {
        if (!(isDatabaseError(err) || err instanceof WriterBusy) || performance.now() + pause >= giveUpAt) throw err;
        this.opts.log.warn({ err, endpoint: endpointId }, 'webhooks: moving the cursor failed; trying again');
        await sleep(pause);
      }
    }
  }

  /** Records the attempt among the recent deliveries: the dashboard's history, never a reason to send an event again. */
  private async record(
    ep: EndpointRow,
    ev: { id: string; tipo: string; seq: number },
    attemptNo: number,
    at: number,
    a: Attempt,
    nextRetryMs: number | null,
  ) {
    try {
      await recordAttempt(this.database, ep, ev, 'auto', attemptNo, at, a, INTERACTIVE_WRITE_WAIT_MS, {
        mask: this.service.mask,
        nextRetryMs,
      });
    } catch (err) {
      // Deleted while its request was out (its deliveries went with it): nothing to say.
      if (!(await getWebhookEndpoint(this.database.db, ep.clinic_id, ep.id).catch(() => ep))) return;
      this.opts.log.warn(
        { err, endpoint: ep.id, event: ev.id },
        'webhooks: an attempt was made but could not be recorded among the recent deliveries',
      );
    }
  }

  /**
   * Gives the session's lease up (it ended), so that the endpoint is claimed at once rather than
   * when the lease runs out; while SQLite's write lock is taken it simply runs out (on shutdown,
   * after a wait: the next start goes on sooner).
   */
  private async release(endpointId: string, lease: string): Promise<void> {
    try {
      await whenWritable(
        () => releaseWebhookLease(this.database.db, endpointId, lease),
        this.stopped ? INTERACTIVE_WRITE_WAIT_MS : BACKGROUND_WRITE_WAIT_MS,
      );
    } catch (err) {
      if (!(err instanceof WriterBusy)) throw err;
    }
  }

  /** The head event failed: the attempt is logged with when it comes next, and the endpoint waits (or is disabled). */
  private async failed(
    ep: EndpointRow,
    lease: string,
    ev: { id: string; tipo: string; seq: number },
    attemptNo: number,
    a: Attempt,
    at: number,
  ) {
    const attempts = ep.attempts + 1;
    const failingSince = ep.failing_since_ms ?? at;
    const disable = shouldDisable(failingSince, at);
    const delay = backoffDelay(
      { baseMs: this.opts.retryBaseMs, maxMs: this.opts.retryMaxMs },
      attempts,
      parseRetryAfter(a.retryAfter, at),
      this.random(),
    );
    const lastError = a.statusCode !== null ? `HTTP ${a.statusCode}` : (a.error ?? 'error');
    await this.record(ep, ev, attemptNo, at, a, disable ? null : at + delay);
    await whenWritable(
      () =>
        recordWebhookFailure(this.database.db, ep.id, lease, {
          attempts,
          nextAttemptMs: at + delay,
          failingSinceMs: failingSince,
          lastError,
          disable,
          nowMs: at,
        }),
      INTERACTIVE_WRITE_WAIT_MS,
    );
    this.opts.observer?.attempt('failed', null);
    if (disable) {
      this.opts.observer?.disabled();
      this.opts.log.warn(
        { endpoint: ep.id, clinic: ep.clinic_id, failingSince: new Date(failingSince).toISOString(), lastError },
        'webhooks: endpoint disabled after 3 days of failures',
      );
    }
  }

  /**
   * Stops claiming, lets requests in flight finish for a moment (then cuts them: their events
   * were not acknowledged and are sent again later), and waits for every session to give its
   * lease up, so another process (or this one restarted) takes over at once instead of when the
   * leases expire.
   */
  stop(): Promise<void> {
    this.stopping ??= this.halt();
    return this.stopping;
  }

  private async halt(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.unlisten?.().catch(() => {});
    await this.ticking;
    const all = Promise.all([...this.sessions]);
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([
      all,
      new Promise((r) => {
        grace = setTimeout(r, STOP_GRACE_MS);
      }),
    ]);
    clearTimeout(grace);
    this.abort.abort();
    await all;
  }
}
