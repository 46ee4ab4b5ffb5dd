// The webhooks' periodic pass, in every server process (several at once is harmless: each step is
// one idempotent statement): endpoints subscribed by a credential that ended are disabled (a
// rolled key hands them to its replacement first), and Idempotency-Keys older than their 24 hours
// are forgotten. The first pass soon after start, then every `intervalMs`.
import { whenWritable, WriterBusy, type Database } from '../../db/connect.js';
import { disableEndpointsOfEndedCredentials, handOverRolledKeyEndpoints, pruneIdempotencyKeys } from '../../repos/webhooks.js';
import { PeriodicPasses } from '../periodic-passes.js';
import { BACKGROUND_WRITE_WAIT_MS } from '../write-lock.js';
import { IDEMPOTENCY_WINDOW_MS } from './endpoints.js';

export interface MaintenanceOptions {
  now: () => number;
  intervalMs?: number;
  firstDelayMs?: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export interface MaintenanceReport {
  handedOver: number;
  disabled: { id: string; clinic_id: string; reason: string }[];
  idempotencyKeysForgotten: number;
}

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

  stop(): Promise<void> {
    return this.passes.stop();
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
    return { handedOver, disabled, idempotencyKeysForgotten };
  }
}
