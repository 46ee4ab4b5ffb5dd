// Removes events older than the retention period (EVENT_RETENTION_DAYS, at least 30) from the
// event log, in the background of the server: a timer, small batches, each in its own short
// transaction that also records the highest seq removed (a cursor before it is 410
// cursor_expired). A clinic being written (an import holds its lock) is skipped and retried on
// the next pass instead of waited for. Errors are logged and never stop the server; several
// instances may run it at once (deleting the same rows twice is harmless; the mark only rises).
import type { Database } from '../db/connect.js';
import { WriterBusy } from '../db/connect.js';
import { clinicsWithEvents, expireEvents, oldestEvents } from '../repos/events.js';
import { tryLockClinicData } from '../repos/writes.js';
import { PeriodicPasses } from './periodic-passes.js';

export const MIN_RETENTION_DAYS = 30;
const DAY_MS = 86_400_000;
/** Events examined (and at most removed) per transaction: a few milliseconds of the writer lock. */
const BATCH = 1_000;

export interface RetentionLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface EventRetentionOptions {
  days: number;
  /** between passes (default 1 hour); the first pass runs `firstDelayMs` after start() (default 1 minute) */
  intervalMs?: number;
  firstDelayMs?: number;
  now?: () => number;
  log: RetentionLog;
}

export interface RetentionPass {
  removed: number;
  /** clinics skipped because they were being written (retried next pass) */
  busy: number;
  failed: number;
}

export class EventRetention {
  private readonly passes: PeriodicPasses;
  private readonly now: () => number;

  constructor(
    private readonly database: Database,
    private readonly opts: EventRetentionOptions,
  ) {
    if (!(opts.days >= MIN_RETENTION_DAYS)) throw new RangeError(`event retention must be at least ${MIN_RETENTION_DAYS} days`);
    this.now = opts.now ?? Date.now;
    this.passes = new PeriodicPasses(
      () => this.pass().catch((err: unknown) => this.opts.log.error({ err }, 'event retention pass failed')),
      { firstDelayMs: opts.firstDelayMs ?? 60_000, intervalMs: opts.intervalMs ?? 3_600_000 },
    );
  }

  private get stopped(): boolean {
    return this.passes.stopped;
  }

  start(): void {
    this.passes.start();
  }

  /** Stops the schedule and waits for a pass in progress to end (it stops between batches). */
  stop(): Promise<void> {
    return this.passes.stop();
  }

  /** One pass over every clinic with events. */
  async pass(): Promise<RetentionPass> {
    const cutoff = Math.floor((this.now() - this.opts.days * DAY_MS) / 1000);
    const result: RetentionPass = { removed: 0, busy: 0, failed: 0 };
    for (const { clinicId } of await clinicsWithEvents(this.database.db)) {
      if (this.stopped) break;
      try {
        for (;;) {
          if (this.stopped) break;
          const removed = await this.batch(clinicId, cutoff);
          if (removed === 'busy') {
            result.busy++;
            break;
          }
          result.removed += removed;
          if (removed < BATCH) break;
          // Let requests in between batches (SQLite runs them on this thread).
          await new Promise((r) => setImmediate(r));
        }
      } catch (err) {
        result.failed++;
        this.opts.log.error({ err, clinic: clinicId }, 'event retention failed for a clinic; retried next pass');
      }
    }
    if (result.removed > 0 || result.busy > 0) this.opts.log.info({ ...result, days: this.opts.days }, 'event retention pass');
    return result;
  }

  /** Removes the clinic's oldest events before `cutoff`, up to BATCH: how many, or 'busy'. */
  private async batch(clinicId: string, cutoff: number): Promise<number | 'busy'> {
    try {
      return await this.database.writeTransaction(
        async (trx) => {
          if (!(await tryLockClinicData(trx, clinicId))) return 'busy' as const;
          const [bounds] = await trx
            .selectFrom('clinic_data_versions')
            .select('events_expired')
            .where('clinic_id', '=', clinicId)
            .execute();
          const oldest = await oldestEvents(trx, clinicId, Number(bounds?.events_expired ?? 0), BATCH);
          // The log is in commit order; stop at the first event still within the period.
          let n = 0;
          while (n < oldest.length && oldest[n]!.ocurrido_at < cutoff) n++;
          if (n === 0) return 0;
          await expireEvents(trx, clinicId, oldest[n - 1]!.seq);
          return n;
        },
        { waitMs: 0 },
      );
    } catch (err) {
      if (err instanceof WriterBusy) return 'busy';
      throw err;
    }
  }
}
