// The request log's collector and batch writer (docs/architecture.md, "The request log and the
// access record"). No database write on a request's path: the API's onResponse hook hands over
// one plain object (record(): a push, no promise), kept as JSON text outside V8's heap until it is
// written (encoded-queue.ts: an object held that second was promoted and then died in the old
// generation, Node 24's peak RSS under load), and a timer writes what was collected at least
// once a second, in chunks of a hundred entries, each its own short write transaction
// (SQLite: BEGIN IMMEDIATE attempted asynchronously, never a wait inside a statement, never a
// long hold of the lock). At close (SIGTERM, after the drain) everything left is written.
//
// Memory is bounded: past `maxPending` entries (the database slow or locked for long) new entries
// are dropped, counted (`request_log_dropped_total`) and logged once per minute at most. Entries
// leave the queue only once written: a failed write leaves them for the next attempt. A `kill -9`
// loses what was collected since the last write: at most about a second.
//
// Entries are kept raw (the URL, the user agent, the error body as sent); `toRow` (given by the
// composition root, from the API's masking of http/log.ts) turns them into rows at write time,
// off the request's path. Entries of a clinic deleted since they were collected are not written.
//
// The clientas a response disclosed are stored as a set, once per clinic and day
// (domain/access-set.ts): the writer remembers for an hour which sets it has stored, and writes a
// set's members only the first time. An hour, because a set it stored is then named by a log row of
// the last hour, which retention (a day at least) cannot have removed with the set. The set's id is
// computed in record(), on the request's path (a digest of the page's tag, remembered, or of the
// ids when there is none: up to 8 µs), and the entry keeps only that id: a hundred ids kept per
// entry for a second were copied by every young-generation GC and then promoted, which cost more
// CPU than the digest and doubled the RSS under load. The members are kept once per set not yet
// stored (`unstored`).
import { LRUCache } from 'lru-cache';
import type { Database } from '../db/connect.js';
import { accessSet, type AccessSet } from '../domain/access-set.js';
import { insertRequestLog, liveClinics, type RequestLogRow } from '../repos/request-log.js';
import type { BackgroundErrorHandler } from './background.js';
import { EncodedQueue } from './encoded-queue.js';
import { PeriodicWriter } from './periodic-writer.js';
import { BACKGROUND_WRITE_WAIT_MS } from './write-lock.js';

/** What the hook collects for one response, as it is. */
export interface RawLogEntry {
  clinicId: string;
  atMs: number;
  requestId: string;
  keyId: string | null;
  grantId: string | null;
  method: string;
  /** the request's URL as received (masked when written) */
  url: string;
  status: number;
  errorCode: string | null;
  durationMs: number;
  /** records returned; null: none */
  records: number | null;
  ip: string | null;
  userAgent: string | null;
  /** the body of an error response as sent (masked when written) */
  errorBody: string | null;
  /** the clientas whose data the response disclosed, as it listed them (record() replaces them with their set's id) */
  clientas: readonly string[] | null;
  /** what names those clientas, when known: a list page's tag (http/disclosure.ts); null: their ids */
  tag?: string | null;
  /** set by record(): the hex id of the access set the response disclosed, null: nobody */
  accessSet?: string | null;
}

export const FLUSH_INTERVAL_MS = 1_000;
/** Entries kept in memory at most while they cannot be written (about 500 bytes of text each). */
export const DEFAULT_MAX_PENDING = 100_000;
/**
 * Entries per write transaction, and access rows: about a millisecond each. SQLite's writes are
 * synchronous, so a transaction holds the event loop as well as the write lock: the requests that
 * arrive meanwhile wait for it. At 300 requests/s a write of a second's 300 entries in one
 * transaction (5-15 ms) delayed the 1 % of requests that arrived during it by as much: the p99.
 */
const ENTRIES_PER_TRANSACTION = 100;
const ACCESS_ROWS_PER_TRANSACTION = 2_000;
/** Sets remembered as stored, and for how long (see the header). */
const STORED_SETS_MAX = 20_000;
const STORED_SET_TTL_MS = 3_600_000;
const DROP_LOG_EVERY_MS = 60_000;

export interface RequestLogObserver {
  dropped(n: number): void;
  written(n: number): void;
  pending(n: number): void;
}

export interface RequestLogOptions {
  /** turns a raw entry into its row: the URL split and masked, the user agent truncated and masked */
  toRow: (e: RawLogEntry) => Omit<RequestLogRow, 'access_set'>;
  maxPending?: number;
  onError?: BackgroundErrorHandler;
  observer?: RequestLogObserver;
  warn?: (obj: object, msg: string) => void;
  now?: () => number;
}

export class RequestLog {
  /** the entries waiting to be written, as text outside V8's heap (see encoded-queue.ts) */
  private readonly queue = new EncodedQueue<RawLogEntry>();
  private readonly writer: PeriodicWriter;
  private droppedSinceWarn = 0;
  private lastWarnMs = -Infinity;
  private droppedTotal = 0;
  private readonly maxPending: number;
  /** hex ids of the access sets this writer stored in the last hour */
  private readonly storedSets = new LRUCache<string, true>({ max: STORED_SETS_MAX, ttl: STORED_SET_TTL_MS });
  /** sets named by pending entries and not stored yet, by hex id */
  private readonly unstored = new Map<string, { clinicId: string; set: AccessSet }>();

  constructor(
    private readonly database: Database,
    private readonly opts: RequestLogOptions,
  ) {
    this.maxPending = opts.maxPending ?? DEFAULT_MAX_PENDING;
    this.writer = new PeriodicWriter('request log write', (lockWaitMs) => this.flushOnce(lockWaitMs), {
      onError: opts.onError,
      due: () => this.queue.length > 0,
    });
  }

  /** Collects one response's entry. Synchronous and cheap: it is on every request's path. */
  record(e: RawLogEntry): void {
    if (this.queue.length >= this.maxPending) {
      this.dropped(1);
      return;
    }
    const set = e.clientas === null ? null : accessSet(e.clinicId, e.atMs, e.clientas, e.tag ?? null);
    if (set !== null && !this.unstored.has(set.hex) && !this.storedSets.has(set.hex))
      this.unstored.set(set.hex, { clinicId: e.clinicId, set });
    e.clientas = null;
    e.tag = null;
    e.accessSet = set?.hex ?? null;
    this.queue.push(e);
  }

  /** Entries collected and not yet written. */
  get pending(): number {
    return this.queue.length;
  }

  /** Entries dropped since the start because the bound was reached. */
  get droppedCount(): number {
    return this.droppedTotal;
  }

  private dropped(n: number): void {
    this.droppedTotal += n;
    this.droppedSinceWarn += n;
    this.opts.observer?.dropped(n);
    const now = (this.opts.now ?? Date.now)();
    if (now - this.lastWarnMs >= DROP_LOG_EVERY_MS) {
      this.opts.warn?.(
        { dropped: this.droppedSinceWarn, pending: this.queue.length },
        `request log entries dropped: ${this.maxPending} were already waiting to be written (the database is slow, ` +
          'or another process holds its write lock)',
      );
      this.droppedSinceWarn = 0;
      this.lastWarnMs = now;
    }
  }

  /**
   * Writes everything collected so far, chunk by chunk. Flushes never overlap. A chunk that
   * cannot be written (SQLite's write lock held past `lockWaitMs`, a database error) stays in
   * front with what is left, and the error is thrown.
   */
  flush(lockWaitMs = BACKGROUND_WRITE_WAIT_MS): Promise<void> {
    return this.writer.write(lockWaitMs);
  }

  private async flushOnce(lockWaitMs: number): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const { rows, sets } = this.chunk();
        const stored = await this.database.writeTransaction(
          async (trx) => {
            // Entries of clinics deleted since (their keys served until every instance refuses them) are not written.
            const live = await liveClinics(trx, [...new Set(rows.map((r) => r.clinic_id))]);
            const newSets = [...sets].filter(([, s]) => live.has(s.clinicId)).map(([, s]) => s.set);
            await insertRequestLog(
              trx,
              rows.filter((r) => live.has(r.clinic_id)),
              newSets,
            );
            return newSets;
          },
          { waitMs: lockWaitMs },
        );
        // Only now are they gone: a chunk that could not be written stays in front for the next attempt.
        this.queue.shift(rows.length);
        for (const s of stored) {
          this.storedSets.set(s.hex, true);
          this.unstored.delete(s.hex);
        }
        this.opts.observer?.written(rows.length);
        // The requests that arrived during this chunk are answered before the next one.
        if (this.queue.length > 0) await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      this.opts.observer?.pending(this.queue.length);
    }
    // Nothing pending: what is left was named only by entries dropped at the bound.
    this.unstored.clear();
  }

  /** The next rows to write (from the front of the queue), and the access sets they name that are not stored yet (by hex id). */
  private chunk(): { rows: RequestLogRow[]; sets: Map<string, { clinicId: string; set: AccessSet }> } {
    const rows: RequestLogRow[] = [];
    const sets = new Map<string, { clinicId: string; set: AccessSet }>();
    const entries = this.queue.reader();
    let accessRows = 0;
    while (rows.length < ENTRIES_PER_TRANSACTION && (rows.length === 0 || accessRows < ACCESS_ROWS_PER_TRANSACTION)) {
      const e = entries.next();
      if (e === undefined) break;
      const hex = e.accessSet ?? null;
      rows.push({ ...this.opts.toRow(e), access_set: hex === null ? null : Buffer.from(hex, 'hex') });
      const unstored = hex === null || sets.has(hex) ? undefined : this.unstored.get(hex);
      if (unstored !== undefined) {
        sets.set(hex!, unstored);
        accessRows += unstored.set.clientas.length;
      }
    }
    return { rows, sets };
  }

  /** Writes every `intervalMs` until stop(). The timer never keeps the process alive. */
  start(intervalMs = FLUSH_INTERVAL_MS): void {
    this.writer.start(intervalMs);
  }

  stop(): void {
    this.writer.stop();
  }

  /** Stops the timer and writes everything left (before the database closes), waiting a little for the lock. */
  close(): Promise<void> {
    return this.writer.close();
  }
}
