// Removes request-log entries (and their access rows) older than REQUEST_LOG_DAYS, in the
// background: the first pass a minute after start, then hourly. Each batch is its own short
// write transaction; its size adapts so that one batch holds the write lock (SQLite's, for every
// writer of the file) for about BATCH_TARGET_MS and never much more: it halves after a slow batch
// and doubles after a quick one. A batch that cannot get SQLite's lock at once waits for the
// next pass (an import holds it). Entries of clinics that no longer exist go too, whatever their
// age. Several instances may run it at once: deleting twice is harmless.
import type { Database } from '../db/connect.js';
import { WriterBusy } from '../db/connect.js';
import { getClinic } from '../repos/clinics.js';
import { deleteLogRows, loggedClinicAfter, logIdsOfClinic, logRowsAfter } from '../repos/request-log.js';
import { PeriodicPasses } from './periodic-passes.js';
import { BACKGROUND_WRITE_WAIT_MS } from './write-lock.js';

const DAY_MS = 86_400_000;
/** What one batch aims to hold the write lock for; the contract's bound is 100 ms. */
export const BATCH_TARGET_MS = 25;
// Small first: a batch of entries that each name a set of their own deletes a hundred set rows per entry.
const FIRST_BATCH = 25;
const MIN_BATCH = 10;
const MAX_BATCH = 5_000;
/**
 * Rows are in the order they were written, and their times are when they were answered: a batch
 * written late, or by an instance whose clock is ahead, puts a newer time among older ones. The
 * walk goes on past newer rows until it meets one this much newer than the limit.
 */
const SKEW_MS = 3_600_000;

export interface RequestLogRetentionOptions {
  days: number;
  intervalMs?: number;
  firstDelayMs?: number;
  now?: () => number;
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export interface PurgePass {
  /** log entries removed, and their access rows */
  entries: number;
  access: number;
  batches: number;
  /** the longest a batch's transaction took (ms): how long it held the write lock */
  maxHoldMs: number;
  /** batches that held it longer than 100 ms (a slow disk, or a machine short of CPU) */
  slowBatches: number;
  /** stopped because another process held the write lock */
  busy: boolean;
}

export class RequestLogRetention {
  private readonly passes: PeriodicPasses;
  private batch = FIRST_BATCH;

  constructor(
    private readonly database: Database,
    private readonly opts: RequestLogRetentionOptions,
  ) {
    this.passes = new PeriodicPasses(
      () =>
        this.pass()
          .then((p) => {
            if (p.entries > 0) this.opts.log.info({ ...p }, 'request log: old entries removed');
          })
          .catch((err: unknown) => this.opts.log.error({ err }, 'request log retention failed; retried at the next pass')),
      { firstDelayMs: opts.firstDelayMs ?? 60_000, intervalMs: opts.intervalMs ?? 3_600_000 },
    );
  }

  private get stopped(): boolean {
    return this.passes.stopped;
  }

  start(): void {
    if (this.opts.days > 0) this.passes.start();
  }

  /**
   * One pass: batches until no entry is older than the period (or stop(), or the lock is taken);
   * then the entries of clinics that no longer exist, whatever their age (a clinic deleted while
   * a batch of its entries was being written elsewhere: the writer skips deleted clinics, this
   * catches what a race or an older version left).
   */
  async pass(): Promise<PurgePass> {
    const out: PurgePass = { entries: 0, access: 0, batches: 0, maxHoldMs: 0, slowBatches: 0, busy: false };
    const before = (this.opts.now ?? Date.now)() - this.opts.days * DAY_MS;
    let after = 0;
    while (!this.stopped) {
      const rows = await logRowsAfter(this.database.db, after, this.batch);
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!.id;
      const ids = rows.filter((r) => r.atMs < before).map((r) => r.id);
      const done = rows.length < this.batch || rows.some((r) => r.atMs >= before + SKEW_MS);
      if (ids.length === 0) {
        if (done) break;
        continue;
      }
      if (!(await this.deleteBatch(ids, out))) return out;
      if (done) break;
      // Let requests run between batches.
      await new Promise<void>((r) => setImmediate(r));
    }
    for (let clinic = await loggedClinicAfter(this.database.db, null); clinic !== null && !this.stopped;) {
      if ((await getClinic(this.database.db, clinic)) === undefined) {
        for (;;) {
          const ids = await logIdsOfClinic(this.database.db, clinic, this.batch);
          if (ids.length === 0 || !(await this.deleteBatch(ids, out))) break;
          await new Promise<void>((r) => setImmediate(r));
        }
        if (out.busy) return out;
      }
      clinic = await loggedClinicAfter(this.database.db, clinic);
    }
    return out;
  }

  /** Deletes one batch in its own short write transaction; false when another process holds SQLite's lock (out.busy). */
  private async deleteBatch(ids: number[], out: PurgePass): Promise<boolean> {
    let held = 0;
    try {
      const r = await this.database.writeTransaction(
        async (trx) => {
          const t0 = performance.now();
          const n = await deleteLogRows(trx, ids);
          held = performance.now() - t0;
          return n;
        },
        { waitMs: BACKGROUND_WRITE_WAIT_MS },
      );
      out.entries += r.log;
      out.access += r.access;
    } catch (err) {
      if (err instanceof WriterBusy) {
        out.busy = true;
        return false;
      }
      throw err;
    }
    out.batches++;
    out.maxHoldMs = Math.max(out.maxHoldMs, held);
    if (held > 100) out.slowBatches++;
    // Adapt the next batch to the time this one held the lock.
    if (held > BATCH_TARGET_MS) this.batch = Math.max(MIN_BATCH, Math.floor(this.batch / 2));
    else if (held < BATCH_TARGET_MS / 2 && ids.length === this.batch) this.batch = Math.min(MAX_BATCH, this.batch * 2);
    return true;
  }

  /** Stops the schedule and waits for a pass in progress to end (it stops between batches). */
  stop(): Promise<void> {
    return this.passes.stop();
  }
}
