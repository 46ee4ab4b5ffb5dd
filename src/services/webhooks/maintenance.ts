// The webhooks' periodic pass, in every server process (several at once is harmless: each step is
// one idempotent statement): endpoints subscribed by a credential that ended are disabled (a
// rolled key hands them to its replacement first), Idempotency-Keys older than their 24 hours
// are forgotten, and the delivery log keeps WEBHOOK_LOG_DAYS (removed in short batches, so a
// pass never holds SQLite's write lock long). The first pass soon after start, then every
// `intervalMs`.
import { whenWritable, WriterBusy, type Database } from '../../db/connect.js';
import type { AlertChange } from '../../repos/webhook-alerts.js';
import { pruneDeliveryLog } from '../../repos/webhook-log.js';
import { disableEndpointsOfEndedCredentials, handOverRolledKeyEndpoints, pruneIdempotencyKeys } from '../../repos/webhooks.js';
import { PeriodicPasses } from '../periodic-passes.js';
import type { WebhookAlerts } from './alerts.js';
import { BACKGROUND_WRITE_WAIT_MS } from '../write-lock.js';
import { IDEMPOTENCY_WINDOW_MS } from './endpoints.js';

export interface MaintenanceOptions {
  now: () => number;
  /** WEBHOOK_LOG_DAYS */
  logDays: number;
  /** the incidents' stages and e-mails (alerts.ts), last in each pass */
  alerts?: WebhookAlerts;
  intervalMs?: number;
  firstDelayMs?: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export interface MaintenanceReport {
  handedOver: number;
  disabled: { id: string; clinic_id: string; reason: string }[];
  idempotencyKeysForgotten: number;
  /** attempts removed from the delivery log */
  attemptsRemoved: number;
  /** incidents that began, grew (disabled) or ended */
  alerts: AlertChange[];
  /** alert e-mails sent */
  mailsSent: number;
}

const DAY_MS = 86_400_000;
/** Attempts removed per statement: a short hold of the write lock each. */
const PRUNE_BATCH = 500;

export class WebhookMaintenance {
  private readonly passes: PeriodicPasses;

  constructor(
    private readonly database: Database,
    private readonly opts: MaintenanceOptions,
  ) {
    this.passes = new PeriodicPasses(
      () =>
        this.pass().catch((err: unknown) => {
          if (err instanceof WriterBusy) return; // an import holds SQLite's write lock: the next pass does it
          this.opts.log.error({ err }, 'webhooks: the maintenance pass failed; retried at the next one');
        }),
      { firstDelayMs: opts.firstDelayMs ?? 5_000, intervalMs: opts.intervalMs ?? 30_000 },
    );
  }

  start(): void {
    this.passes.start();
  }

  async stop(): Promise<void> {
    await this.passes.stop();
    this.opts.alerts?.close();
  }

  /** One pass (tests call it directly). */
  async pass(): Promise<MaintenanceReport> {
    const db = this.database.db;
    const nowMs = this.opts.now();
    const write = <T>(f: () => Promise<T>) => whenWritable(f, BACKGROUND_WRITE_WAIT_MS);
    const handedOver = await write(() => handOverRolledKeyEndpoints(db));
    const disabled = await write(() => disableEndpointsOfEndedCredentials(db, nowMs));
    for (const d of disabled)
      this.opts.log.warn(
        { endpoint: d.id, clinic: d.clinic_id, reason: d.reason },
        'webhooks: endpoint disabled: the credential that subscribed it ended',
      );
    const idempotencyKeysForgotten = await write(() => pruneIdempotencyKeys(db, nowMs - IDEMPOTENCY_WINDOW_MS));
    let attemptsRemoved = 0;
    for (let n = PRUNE_BATCH; n === PRUNE_BATCH && !this.passes.stopped; attemptsRemoved += n)
      n = await write(() => pruneDeliveryLog(db, nowMs - this.opts.logDays * DAY_MS, PRUNE_BATCH));
    const alerts = (await this.opts.alerts?.detect()) ?? [];
    for (const a of alerts) this.opts.log.info({ endpoint: a.id, clinic: a.clinic_id, alert: a.kind }, 'webhooks: delivery alert');
    // Last: a slow or failing mail server delays nothing else (each e-mail has a time limit).
    const mailsSent = (await this.opts.alerts?.send()) ?? 0;
    return { handedOver, disabled, idempotencyKeysForgotten, attemptsRemoved, alerts, mailsSent };
  }
}
