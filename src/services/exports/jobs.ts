// Settings > API > Export: a clinic's export made in the background, kept 24 hours for its owners
// to download, then deleted. Owned by the runtime (startServices() starts it, close() stops it).
//
// A request is a row (`queued`); a worker pass, every PASS_MS and at once on a request made on
// this instance, takes the oldest waiting export under a lease (LEASE_MS, renewed as it goes:
// several instances never make one twice, and one whose instance died is taken up again once its
// lease runs out), makes the ZIP (./clinic.ts: constant memory) and stores it in the database in
// parts of PART_BYTES, so that any instance of a fleet serves the download a part at a time.
// Progress (records written of the total) is written at most once a second. Each pass also
// deletes the exports past their expiry. Stopping ends the export in progress and puts it back in
// the queue, for the next instance or start.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Database } from '../../db/connect.js';
import { DomainError } from '../../errors.js';
import { getClinic } from '../../repos/clinics.js';
import {
  activeExportOf,
  deleteExport,
  deleteParts,
  expiredExports,
  exportOf,
  exportsOf,
  insertExport,
  insertPart,
  nextToMake,
  partOf,
  setExport,
  takeExport,
  type ClinicExportRow,
} from '../../repos/clinic-exports.js';
import { reportBackgroundError, type BackgroundErrorHandler } from '../background.js';
import { PeriodicPasses } from '../periodic-passes.js';
import { writeClinicExport } from './clinic.js';

export type { ClinicExportRow };

/** How long the dashboard offers a finished export. */
export const EXPORT_KEPT_MS = 24 * 3_600_000;
const PASS_MS = 5_000;
const LEASE_MS = 60_000;
const PART_BYTES = 1 << 20;
const PROGRESS_EVERY_MS = 1_000;
/** A write of the export waits this long for SQLite's write lock (an import holding it). */
const WRITE_WAIT_MS = 60_000;
/** What the owner reads when an export failed (the cause is in the service's log). */
export const FAILED_MESSAGE = 'the export failed';

export interface ExportJobsOptions {
  now: () => number;
  onError: BackgroundErrorHandler;
  passMs?: number;
}

/** The ZIP, written into the database a part at a time; each write waits for the part's insert (backpressure). */
class PartsSink extends Writable {
  private pending: Buffer[] = [];
  private size = 0;
  parts = 0;

  constructor(private readonly store: (seq: number, data: Buffer) => Promise<void>) {
    super();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.pending.push(chunk);
    this.size += chunk.length;
    if (this.size < PART_BYTES) return done();
    this.flushPart().then(() => done(), done);
  }

  override _final(done: (err?: Error | null) => void): void {
    (this.size > 0 ? this.flushPart() : Promise.resolve()).then(() => done(), done);
  }

  private async flushPart(): Promise<void> {
    const data = Buffer.concat(this.pending, this.size);
    this.pending = [];
    this.size = 0;
    await this.store(this.parts, data);
    this.parts++;
  }
}

export class ExportJobs {
  private readonly passes: PeriodicPasses;
  private abort: AbortController | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private started = false;

  constructor(
    private readonly database: Database,
    private readonly opts: ExportJobsOptions,
  ) {
    this.passes = new PeriodicPasses(() => this.pass(), { firstDelayMs: 1_000, intervalMs: opts.passMs ?? PASS_MS });
  }

  start(): void {
    this.started = true;
    this.passes.start();
  }

  /**
   * Asks for an export of the clinic; one already waiting or being made is returned instead (an
   * owner who clicks twice gets one export).
   */
  async request(clinicId: string, userId: string | null): Promise<ClinicExportRow> {
    const active = await activeExportOf(this.database.db, clinicId);
    if (active) return active;
    const row: ClinicExportRow = {
      id: randomUUID(),
      clinic_id: clinicId,
      requested_by: userId,
      state: 'queued',
      done: 0,
      total: 0,
      bytes: null,
      parts: 0,
      error: null,
      requested_at: this.opts.now(),
      finished_at: null,
      expires_at: null,
      lease_until: null,
    };
    await this.write((db) => insertExport(db, row));
    this.kick();
    return row;
  }

  /** The clinic's exports not expired, newest first. */
  list(clinicId: string): Promise<ClinicExportRow[]> {
    return exportsOf(this.database.db, clinicId, this.opts.now(), 10);
  }

  /** A finished export of the clinic still offered, or null (unknown, another clinic's, not done, expired). */
  async ready(clinicId: string, id: string): Promise<ClinicExportRow | null> {
    const row = await exportOf(this.database.db, clinicId, id);
    if (!row || row.state !== 'done' || row.expires_at === null || row.expires_at <= this.opts.now()) return null;
    return row;
  }

  /** The ZIP of a ready export (see ready()), a part at a time. */
  async *file(row: ClinicExportRow): AsyncGenerator<Buffer> {
    for (let seq = 0; seq < row.parts; seq++) {
      const data = await partOf(this.database.db, row.clinic_id, row.id, seq);
      if (data === undefined) throw new DomainError('not_found', 'the export was deleted while it was being downloaded');
      yield Buffer.from(data);
    }
  }

  /** Once started: runs a pass soon, unless one runs (it then runs another after it). */
  kick(): void {
    if (!this.started || this.passes.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    setImmediate(() => void this.pass());
  }

  /** One pass: the expired exports deleted, then every export waiting made, one after the other. */
  async pass(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          for (const id of await expiredExports(this.database.db, this.opts.now(), 100)) await this.write((db) => deleteExport(db, id));
          for (;;) {
            if (this.passes.stopped) return;
            const next = await nextToMake(this.database.db, this.opts.now());
            if (!next) break;
            if (!(await this.write((db) => takeExport(db, next, this.opts.now() + LEASE_MS)))) continue;
            await this.make(next);
          }
        } while (this.again && !this.passes.stopped);
      } catch (err) {
        reportBackgroundError(this.opts.onError, 'clinic export', err);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  private write<T>(fn: (db: Database['db']) => Promise<T>): Promise<T> {
    return this.database.writeTransaction(fn, { waitMs: WRITE_WAIT_MS });
  }

  /** Makes one export taken by this instance. */
  private async make(row: ClinicExportRow): Promise<void> {
    const abort = (this.abort = new AbortController());
    // Stopped between taking it and now: it goes back to the queue at once.
    if (this.passes.stopped) abort.abort();
    const now = this.opts.now;
    let lastWrite = 0;
    let progress = { done: 0, total: 0 };
    try {
      // Parts an instance that stopped midway left behind.
      await this.write((db) => deleteParts(db, row.id));
      const clinic = await getClinic(this.database.db, row.clinic_id);
      if (!clinic) {
        await this.write((db) => deleteExport(db, row.id));
        return;
      }
      const sink = new PartsSink((seq, data) =>
        this.write(async (db) => {
          await insertPart(db, row.clinic_id, row.id, seq, data);
          lastWrite = now();
          await setExport(db, row.id, { ...progress, parts: seq + 1, lease_until: lastWrite + LEASE_MS });
        }),
      );
      const result = await writeClinicExport(this.database, clinic, sink, {
        nowMs: now(),
        signal: abort.signal,
        onProgress: (done, total) => {
          progress = { done, total };
          if (now() - lastWrite < PROGRESS_EVERY_MS) return;
          lastWrite = now();
          // Not awaited: the export goes on; a failed progress write is reported and the next one tries again.
          this.write((db) => setExport(db, row.id, { done, total, lease_until: lastWrite + LEASE_MS })).catch((err: unknown) =>
            reportBackgroundError(this.opts.onError, 'clinic export progress', err),
          );
        },
      });
      const finished = now();
      await this.write((db) =>
        setExport(db, row.id, {
          state: 'done',
          done: progress.total,
          total: progress.total,
          bytes: result.bytes,
          parts: sink.parts,
          finished_at: finished,
          expires_at: finished + EXPORT_KEPT_MS,
          lease_until: null,
        }),
      );
    } catch (err) {
      if (abort.signal.aborted) {
        // Stopped: back in the queue, for the next instance or start.
        await this.write(async (db) => {
          await deleteParts(db, row.id);
          await setExport(db, row.id, { state: 'queued', done: 0, parts: 0, lease_until: null });
        }).catch((e: unknown) => reportBackgroundError(this.opts.onError, 'clinic export stop', e));
        return;
      }
      reportBackgroundError(this.opts.onError, 'clinic export', err);
      const finished = now();
      await this.write(async (db) => {
        await deleteParts(db, row.id);
        await setExport(db, row.id, {
          state: 'failed',
          error: FAILED_MESSAGE,
          finished_at: finished,
          expires_at: finished + EXPORT_KEPT_MS,
          lease_until: null,
        });
      }).catch((e: unknown) => reportBackgroundError(this.opts.onError, 'clinic export failure', e));
    } finally {
      this.abort = null;
    }
  }

  /** Stops the passes; an export in progress ends now and goes back to the queue. */
  async stop(): Promise<void> {
    this.abort?.abort();
    await this.passes.stop();
    await this.running;
  }
}
