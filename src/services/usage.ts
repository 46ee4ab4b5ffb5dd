// API usage at a glance, without a database write per request: API responses are counted in
// memory, keyed (key, clinic-local day, status class, error code), and written in one batch
// every few seconds (and on close). The dashboard reads the stored counts plus what is still
// pending in memory, so it is current on the instance that served the requests.
import type { Kysely } from 'kysely';
import { whenWritable } from '../db/connect.js';
import type { DB } from '../db/schema.js';
import {
  addKeyErrors,
  rowsOfExistingKeys,
  addUsage,
  recentKeyErrors,
  usageForDays,
  type KeyErrorRow,
  type UsageRow,
} from '../repos/usage.js';
import { localDate } from '../time.js';
import type { BackgroundErrorHandler } from './background.js';
import { PeriodicWriter } from './periodic-writer.js';
import { BACKGROUND_WRITE_WAIT_MS } from './write-lock.js';

export const DEFAULT_FLUSH_INTERVAL_MS = 30_000;
/** Distinct error codes kept per key for the dashboard. */
export const LAST_ERRORS_PER_KEY = 5;

export interface UsageEvent {
  keyId: string;
  clinicId: string;
  /** the clinic's IANA zone: a request counts on the clinic's local day */
  timezone: string;
  status: number;
  /** the API error code when the response was an error, else null */
  errorCode: string | null;
  atMs: number;
}

export interface DayCount {
  day: string;
  ok: number;
  errors: number;
}

export interface KeyUsage {
  /** one entry per requested day, oldest first */
  days: DayCount[];
  total: number;
  errors: number;
  lastErrors: { code: string; status: number; at: number; count: number }[];
}

export function statusClass(status: number): string {
  return `${Math.min(5, Math.max(1, Math.floor(status / 100)))}xx`;
}

const SEP = '\u0000';

export class UsageCounter {
  private counts = new Map<string, UsageRow>();
  private errors = new Map<string, KeyErrorRow>();
  private readonly writer: PeriodicWriter;

  constructor(
    private readonly db: Kysely<DB>,
    opts: { onError?: BackgroundErrorHandler } = {},
  ) {
    // A failed flush keeps its counts for the next one (flushOnce); the timer's failures are reported, never thrown.
    this.writer = new PeriodicWriter('usage flush', (lockWaitMs) => this.flushOnce(lockWaitMs), { onError: opts.onError });
  }

  /** Counts one API response. Synchronous and allocation-light: it is on every request's path. */
  record(e: UsageEvent): void {
    const day = localDate(Math.floor(e.atMs / 1000), e.timezone);
    const cls = statusClass(e.status);
    const code = e.errorCode ?? '';
    const k = e.keyId + SEP + day + SEP + cls + SEP + code;
    const row = this.counts.get(k);
    if (row) row.n += 1;
    else this.counts.set(k, { clinic_id: e.clinicId, key_id: e.keyId, day, status_class: cls, error_code: code, n: 1 });
    if (code) {
      const ek = e.keyId + SEP + code;
      const at = Math.floor(e.atMs / 1000);
      const er = this.errors.get(ek);
      if (er) {
        er.n += 1;
        if (at > er.last_at) er.last_at = at;
      } else {
        this.errors.set(ek, { clinic_id: e.clinicId, key_id: e.keyId, error_code: code, status: e.status, last_at: at, n: 1 });
      }
    }
  }

  /** Rows counted but not yet written. */
  get pending(): number {
    return this.counts.size;
  }

  /**
   * Writes everything counted so far in one transaction. Flushes never overlap; if the write
   * fails the counts are merged back and retried at the next flush, so nothing is lost. While
   * another process holds SQLite's write lock, a flush waits for it at most `lockWaitMs`
   * (asynchronously; by default not at all: the next flush comes soon) and fails with WriterBusy.
   */
  flush(lockWaitMs = BACKGROUND_WRITE_WAIT_MS): Promise<void> {
    return this.writer.write(lockWaitMs);
  }

  private async flushOnce(lockWaitMs: number): Promise<void> {
    if (this.counts.size === 0 && this.errors.size === 0) return;
    const counts = this.counts;
    const errors = this.errors;
    this.counts = new Map();
    this.errors = new Map();
    try {
      await whenWritable(
        () =>
          this.db.transaction().execute(async (trx) => {
            await addUsage(trx, await rowsOfExistingKeys(trx, [...counts.values()]));
            await addKeyErrors(trx, await rowsOfExistingKeys(trx, [...errors.values()]));
          }),
        lockWaitMs,
      );
    } catch (err) {
      this.mergeBack(counts, errors);
      throw err;
    }
  }

  private mergeBack(counts: Map<string, UsageRow>, errors: Map<string, KeyErrorRow>): void {
    for (const [k, row] of counts) {
      const now = this.counts.get(k);
      if (now) now.n += row.n;
      else this.counts.set(k, row);
    }
    for (const [k, row] of errors) {
      const now = this.errors.get(k);
      if (now) {
        now.n += row.n;
        now.last_at = Math.max(now.last_at, row.last_at);
      } else this.errors.set(k, row);
    }
  }

  /** Flushes every `intervalMs` until stop(). The timer never keeps the process alive. */
  start(intervalMs = DEFAULT_FLUSH_INTERVAL_MS): void {
    this.writer.start(intervalMs);
  }

  stop(): void {
    this.writer.stop();
  }

  /** Stops the timer and writes what is pending (call before closing the database), waiting a little for the lock. */
  close(): Promise<void> {
    return this.writer.close();
  }

  /**
   * Per key of `clinicId`: requests on each of `days` (consecutive local dates, oldest first),
   * split into successes and errors, and the last few distinct error codes.
   */
  async summary(clinicId: string, days: string[]): Promise<Map<string, KeyUsage>> {
    const out = new Map<string, KeyUsage>();
    const first = days[0];
    const last = days[days.length - 1];
    if (first === undefined || last === undefined) return out;
    const index = new Map(days.map((d, i) => [d, i]));
    const entry = (keyId: string): KeyUsage => {
      let u = out.get(keyId);
      if (!u) {
        u = { days: days.map((day) => ({ day, ok: 0, errors: 0 })), total: 0, errors: 0, lastErrors: [] };
        out.set(keyId, u);
      }
      return u;
    };
    const addRow = (r: UsageRow) => {
      const i = index.get(r.day);
      if (i === undefined) return;
      const u = entry(r.key_id);
      const d = u.days[i]!;
      const n = Number(r.n);
      if (r.error_code || r.status_class === '4xx' || r.status_class === '5xx') {
        d.errors += n;
        u.errors += n;
      } else d.ok += n;
      u.total += n;
    };
    for (const r of await usageForDays(this.db, clinicId, first, last)) addRow(r);
    for (const r of this.counts.values()) if (r.clinic_id === clinicId) addRow(r);

    const errs = new Map<string, KeyErrorRow>();
    for (const r of await recentKeyErrors(this.db, clinicId))
      errs.set(r.key_id + SEP + r.error_code, { ...r, n: Number(r.n), last_at: Number(r.last_at) });
    for (const r of this.errors.values()) {
      if (r.clinic_id !== clinicId) continue;
      const k = r.key_id + SEP + r.error_code;
      const stored = errs.get(k);
      errs.set(k, stored ? { ...stored, n: stored.n + r.n, last_at: Math.max(stored.last_at, r.last_at) } : { ...r });
    }
    const sorted = [...errs.values()].sort((a, b) => b.last_at - a.last_at || a.error_code.localeCompare(b.error_code));
    for (const r of sorted) {
      const u = entry(r.key_id);
      if (u.lastErrors.length < LAST_ERRORS_PER_KEY) u.lastErrors.push({ code: r.error_code, status: r.status, at: r.last_at, count: r.n });
    }
    return out;
  }
}
