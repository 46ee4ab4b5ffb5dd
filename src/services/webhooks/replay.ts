// Sends the queued replays (`clinic-api webhooks replay`): each event once more, with its own
// webhook-id, one endpoint's in event order, beside the delivery worker and never in its way (the
// worker's sessions and slots are its own; a replay is one more request to the receiver). Every
// server process runs one; a process claims one endpoint's queued events under a lease, so each is
// sent by one process; a process that dies leaves its claim to run out, and the rest are sent by
// another (one event may then be sent twice: receivers deduplicate on webhook-id anyway).
import { randomUUID } from 'node:crypto';
import { whenWritable, WriterBusy, type Database } from '../../db/connect.js';
import { getClinic } from '../../repos/clinics.js';
import { claimReplays, deleteReplay } from '../../repos/webhook-log.js';
import { getEventBySeq } from '../../repos/webhooks.js';
import { PeriodicPasses } from '../periodic-passes.js';
import { BACKGROUND_WRITE_WAIT_MS } from '../write-lock.js';
import { deliveryBody, type WebhookService } from './endpoints.js';

export interface ReplayOptions {
  pollMs: number;
  leaseMs: number;
  timeoutMs: number;
  now: () => number;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export class Replayer {
  readonly owner = randomUUID();
  private readonly passes: PeriodicPasses;

  constructor(
    private readonly database: Database,
    private readonly service: WebhookService,
    private readonly opts: ReplayOptions,
  ) {
    this.passes = new PeriodicPasses(
      () =>
        this.pass().catch((err: unknown) => {
          if (!(err instanceof WriterBusy)) this.opts.log.error({ err }, 'webhooks: a replay pass failed; retried at the next one');
        }),
      { firstDelayMs: opts.pollMs, intervalMs: opts.pollMs },
    );
  }

  start(): void {
    this.passes.start();
  }

  stop(): Promise<void> {
    return this.passes.stop();
  }

  /** Sends what is queued, one endpoint's batch after another, until nothing is left (tests call it). */
  async pass(): Promise<number> {
    const db = this.database.db;
    // A batch is sent within its lease: at most as many attempts as fit in it.
    const batch = Math.max(1, Math.floor(this.opts.leaseMs / this.opts.timeoutMs) - 1);
    let sent = 0;
    while (!this.passes.stopped) {
      const now = this.opts.now();
      const claimed = await whenWritable(() => claimReplays(db, this.owner, now, now + this.opts.leaseMs, batch), BACKGROUND_WRITE_WAIT_MS);
      if (claimed.length === 0) return sent;
      for (const r of claimed) {
        const [e, ev, clinic] = await Promise.all([
          this.service.get(r.clinic_id, r.endpoint_id),
          getEventBySeq(db, r.clinic_id, r.seq),
          getClinic(db, r.clinic_id),
        ]);
        if (e && ev && clinic) {
          await this.service.deliverNow(e, { id: ev.id, tipo: ev.tipo, seq: ev.seq, body: deliveryBody(e, ev, clinic.timezone) }, 'replay');
          sent++;
        } else if (e) {
          this.opts.log.warn(
            { endpoint: r.endpoint_id, clinic: r.clinic_id, seq: r.seq },
            'webhooks: a replayed event is no longer kept (older than the event retention); skipped',
          );
        }
        await whenWritable(() => deleteReplay(db, r.id, this.owner), BACKGROUND_WRITE_WAIT_MS);
      }
    }
    return sent;
  }
}
