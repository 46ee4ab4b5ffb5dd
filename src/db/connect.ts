// The one switch between SQLite and PostgreSQL, and the only code that knows the drivers. Longer
// than 300 lines on purpose: both drivers' opening, write transactions and error mapping side by
// side, so a difference between the two databases is visible in one file.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type Pg from 'pg';
import type { Config } from '../config.js';
import { DomainError } from '../errors.js';
import type { Dialect } from './dialect.js';
import type { DB } from './schema.js';
import { guardedPool, isConnectionFault } from './pg-pool.js';
import { spans } from '../spans.js';
import { tracedStatementCache } from './sqlite-spans.js';
import { registerDirect, statementCache } from './sqlite-statements.js';

export interface Database {
  readonly db: Kysely<DB>;
  readonly dialect: Dialect;
  /**
   * Runs `fn` while this process holds the database's start-up lock, so that instances starting
   * at once on one database migrate it and make the first-run demo one at a time. The lock is the
   * database's own and dies with the process that holds it: PostgreSQL, a session advisory lock
   * on a connection of its own (outside the pool, which `fn` may need whole); SQLite, an exclusive
   * transaction on a lock file beside the database (clinic.db.lock), waited for without blocking.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Runs `fn` in a transaction that may write, on one connection. SQLite: BEGIN IMMEDIATE, so the
   * write lock is taken at the start and several processes on one file queue for it (a deferred
   * transaction that reads and then writes fails with SQLITE_BUSY_SNAPSHOT instead of waiting);
   * while another process holds it, the attempt is repeated asynchronously (never blocking the
   * event loop) for up to `waitMs` (default 10 minutes; 0: one attempt), then WriterBusy.
   * PostgreSQL: an ordinary transaction (writers of a clinic serialise on its advisory lock,
   * repos/writes.ts). It commits when `fn` returns, or rolls back and returns its result when
   * `keep` says so (a refused import), and rolls back and rethrows when `fn` throws.
   */
  writeTransaction<T>(fn: (trx: Kysely<DB>) => Promise<T>, opts?: WriteTransactionOptions<T>): Promise<T>;
  /**
   * Runs `fn`'s reads on one consistent view of the database, however long it takes (an export
   * read a page at a time sees no change made meanwhile), holding no lock a writer waits for.
   * SQLite: a read transaction on a read-only connection of its own (WAL: writers go on); an
   * in-memory database has one connection, so `fn` reads it as it is. PostgreSQL: a read-only
   * REPEATABLE READ transaction on one pooled connection.
   */
  readSnapshot<T>(fn: (db: Kysely<DB>) => Promise<T>): Promise<T>;
  /**
   * PostgreSQL only: LISTEN on `channel` on a connection of its own (outside the pool), calling
   * `onNotify` with each payload; resolves to a function that stops listening. A lost connection
   * calls `onError` once and stops (listeners also poll, so they only lose promptness).
   */
  listen?(channel: string, onNotify: (payload: string) => void, onError: (err: unknown) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface WriteTransactionOptions<T> {
  /** SQLite: how long to wait for the write lock (default 10 minutes; 0: one attempt, WriterBusy if taken) */
  waitMs?: number;
  /** whether to commit what `fn` returned (default: always); false rolls back */
  keep?: (result: T) => boolean;
}

/**
 * Another process held SQLite's write lock for longer than the write could wait: nothing was
 * written. Reason `busy` on every surface (the dashboard's busy page, the CLI's exit code 1).
 */
export class WriterBusy extends DomainError {
  constructor(waitedMs: number, options?: { cause?: unknown }) {
    super(
      'busy',
      `another process is writing to the database (an import?) and held its write lock ` +
        `for ${waitedMs > 0 ? `over ${waitedMs} ms` : 'now'}; nothing was changed, try again in a moment`,
    );
    this.name = 'WriterBusy';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** SQLite refused a write because another connection holds the write lock (SQLITE_BUSY and its extended codes). */
export function isWriteLockBusy(err: unknown): boolean {
  return err instanceof BetterSqlite3.SqliteError && err.code.startsWith('SQLITE_BUSY');
}

/** How long a writer waits for SQLite's write lock by default (an import of a million rows takes minutes). */
const WRITE_LOCK_WAIT_MS = 600_000;
/**
 * SQLite's own wait for its write lock, inside the statement: it sleeps on the thread, so the
 * event loop stands still meanwhile. The server sets 0 (openRuntime's `server`) and waits
 * asynchronously instead (whenWritable, writeTransaction); commands keep this.
 */
export const COMMAND_BUSY_TIMEOUT_MS = 5_000;
/** The first pause between two attempts at the write lock; each pause doubles, up to the last. */
const LOCK_RETRY_FIRST_MS = 5;
const LOCK_RETRY_MAX_MS = 100;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs `write` until SQLite's write lock does not refuse it, waiting asynchronously between
 * attempts (the event loop goes on: other requests, /livez) for up to `waitMs` (0: one attempt),
 * then throws WriterBusy. `write` must be all or nothing: one statement, or one transaction (a
 * refused transaction is rolled back by Kysely). On PostgreSQL nothing is refused this way: it runs once.
 */
export async function whenWritable<T>(write: () => Promise<T>, waitMs: number): Promise<T> {
  const deadline = performance.now() + waitMs;
  for (let pause = LOCK_RETRY_FIRST_MS; ; pause = Math.min(pause * 2, LOCK_RETRY_MAX_MS)) {
    try {
      return await write();
    } catch (err) {
      if (!isWriteLockBusy(err)) throw err;
      const left = deadline - performance.now();
      if (left <= 0) throw new WriterBusy(waitMs, { cause: err });
      await sleep(Math.min(pause, left));
    }
  }
}

/** Arbitrary constant naming the start-up lock (PostgreSQL advisory lock key). */
const STARTUP_LOCK = 720_431_915;
/** How long an instance waits for another's start-up (migrations, the demo) before giving up. */
const STARTUP_LOCK_WAIT_MS = 300_000;
const SQLITE_LOCK_POLL_MS = 50;

export type DatabaseTarget =
  /** busyTimeoutMs: SQLite's own (blocking) wait for the write lock; default COMMAND_BUSY_TIMEOUT_MS, 0 in the server */
  | { kind: 'sqlite'; file: string; busyTimeoutMs?: number }
  /**
   * statementTimeoutMs 0: no limit, for operator commands (import, demo) that run for minutes.
   * connectTimeoutMs: how long to wait for a connection, new or from the pool (default 5 s).
   */
  | { kind: 'postgres'; url: string; poolMax: number; statementTimeoutMs: number; connectTimeoutMs?: number };

export interface DatabaseEvents {
  /** A pooled connection failed outside any query (e.g. the server restarted); the pool drops it. */
  onConnectionError?: (err: Error) => void;
}

/**
 * How much longer than the statement timeout pg waits for an answer before it gives up on the
 * connection (a server that no longer answers at all, e.g. frozen): the server's own timeout
 * cancels a slow statement first and keeps the connection usable.
 */
export const READ_TIMEOUT_MARGIN_MS = 250;

/** `busyTimeoutMs`: SQLite's own wait for its write lock (the server passes 0). */
export function targetFromConfig(config: Config, busyTimeoutMs = COMMAND_BUSY_TIMEOUT_MS): DatabaseTarget {
  if (config.databaseUrl) {
    return {
      kind: 'postgres',
      url: config.databaseUrl,
      poolMax: config.dbPoolMax,
      statementTimeoutMs: config.dbStatementTimeoutMs,
      connectTimeoutMs: config.dbConnectTimeoutMs,
    };
  }
  return { kind: 'sqlite', file: path.join(config.dataDir, 'clinic.db'), busyTimeoutMs };
}

export function describeTarget(target: DatabaseTarget): string {
  if (target.kind === 'sqlite') return `SQLite ${target.file}`;
  const u = new URL(target.url);
  return `PostgreSQL ${u.hostname}:${u.port || 5432}${u.pathname}`;
}

export async function openDatabase(target: DatabaseTarget, events: DatabaseEvents = {}): Promise<Database> {
  if (target.kind === 'sqlite') return openSqlite(target.file, target.busyTimeoutMs ?? COMMAND_BUSY_TIMEOUT_MS);
  return openPostgres(await loadPg(), target, events);
}

/**
 * pg, loaded when a PostgreSQL database is first opened: a service on SQLite never holds it
 * (1.3 MiB of heap). No pg error can exist before, which isDatabaseError relies on.
 */
let pgLoaded: typeof Pg | null = null;

async function loadPg(): Promise<typeof Pg> {
  if (pgLoaded === null) {
    const loaded = (await import('pg')).default;
    // int8 (bigint) columns hold epoch seconds and counts, all far below 2^53: parse them as numbers.
    loaded.types.setTypeParser(20, (v) => Number(v));
    pgLoaded = loaded;
  }
  return pgLoaded;
}

/**
 * The SQLite page cache of a connection, KiB: SQLite's default, written here as a decision. What
 * one list reads again on every request (the indexes' upper levels, a page of rows and their
 * clientas: about a megabyte) stays; the rest is in the operating system's file cache, a copy
 * away. It is held for the process's life, and the request log's writes fill it too, so it is
 * sized to the reads, not to the database: each MiB of cache costs about two of RSS (SQLite's page
 * headers, the allocator's slack). At 4 MiB the cold page's peak RSS was about 5 MiB higher
 * (medians of 11 and 15 runs) with the same requests/s; at 64 MiB the cache was a third of the memory.
 */
export const SQLITE_CACHE_KIB = 2_048;

function openSqlite(file: string, busyTimeoutMs: number): Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma(`busy_timeout = ${busyTimeoutMs}`);
  raw.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  const cached = spans === null ? statementCache(raw) : tracedStatementCache(statementCache(raw), spans);
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: cached as unknown as BetterSqlite3.Database }) });
  registerDirect(db, cached);
  // An in-memory database has this one connection: nothing else can reach it.
  const exclusive = file === ':memory:' ? <T>(fn: () => Promise<T>) => fn() : sqliteLock(`${file}.lock`);
  return {
    db,
    dialect: 'sqlite',
    exclusive,
    writeTransaction: sqliteWriteTransaction(db, raw, busyTimeoutMs),
    readSnapshot: file === ':memory:' ? (fn) => fn(db) : sqliteSnapshot(file),
    close: () => db.destroy(),
  };
}

/**
 * BEGIN IMMEDIATE on the connection Kysely holds for `fn` (db.connection() keeps its mutex for the
 * whole callback, so no other query of this process runs inside the transaction). Kysely's own
 * transaction() can only BEGIN (deferred), hence the raw statements on the driver's handle. Each
 * attempt at the lock is made with SQLite's busy wait off, and a refused one gives the connection
 * back (the process's reads go on) and waits asynchronously before the next; WriterBusy past `waitMs`.
 */
function sqliteWriteTransaction(db: Kysely<DB>, raw: BetterSqlite3.Database, busyTimeoutMs: number) {
  /** One attempt at the write lock; false: another process holds it. */
  const begin = (): boolean => {
    if (busyTimeoutMs !== 0) raw.pragma('busy_timeout = 0');
    try {
      raw.exec('begin immediate');
      return true;
    } catch (err) {
      if (isWriteLockBusy(err)) return false;
      throw err;
    } finally {
      if (busyTimeoutMs !== 0) raw.pragma(`busy_timeout = ${busyTimeoutMs}`);
    }
  };
  const attempt = <T>(fn: (trx: Kysely<DB>) => Promise<T>, keep: ((result: T) => boolean) | undefined) =>
    db.connection().execute(async (conn): Promise<{ value: T } | null> => {
      if (!begin()) return null;
      try {
        const value = await fn(conn);
        raw.exec(keep === undefined || keep(value) ? 'commit' : 'rollback');
        return { value };
      } catch (err) {
        if (raw.inTransaction) raw.exec('rollback');
        throw err;
      }
    });
  return async <T>(fn: (trx: Kysely<DB>) => Promise<T>, opts: WriteTransactionOptions<T> = {}): Promise<T> => {
    const waitMs = opts.waitMs ?? WRITE_LOCK_WAIT_MS;
    const deadline = performance.now() + waitMs;
    for (let pause = LOCK_RETRY_FIRST_MS; ; pause = Math.min(pause * 2, LOCK_RETRY_MAX_MS)) {
      const done = await attempt(fn, opts.keep);
      if (done) return done.value;
      const left = deadline - performance.now();
      if (left <= 0) throw new WriterBusy(waitMs);
      await sleep(Math.min(pause, left));
    }
  };
}

/** SQLite's readSnapshot: a read-only connection whose transaction's first read fixes its view (WAL). */
function sqliteSnapshot(file: string) {
  return async <T>(fn: (db: Kysely<DB>) => Promise<T>): Promise<T> => {
    const raw = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: raw }) });
    try {
      raw.exec('begin');
      // A deferred transaction starts reading, and so takes its snapshot, at its first read.
      raw.prepare('select count(*) from clinics').get();
      return await fn(db);
    } finally {
      if (raw.inTransaction) raw.exec('commit');
      await db.destroy();
    }
  };
}

/**
 * SQLite has no advisory locks, so the lock is another SQLite file's exclusive transaction (the
 * OS releases it if the process dies). Taken with busy_timeout 0 and polled, so that waiting
 * never blocks the event loop.
 */
function sqliteLock(lockFile: string) {
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    const lock = new BetterSqlite3(lockFile, { timeout: 0 });
    try {
      const deadline = Date.now() + STARTUP_LOCK_WAIT_MS;
      for (;;) {
        try {
          lock.exec('begin exclusive');
          break;
        } catch (err) {
          if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
          if (Date.now() > deadline)
            throw new Error(
              `another instance has held ${lockFile} for over ${STARTUP_LOCK_WAIT_MS / 1000} s (migrating or making the demo)`,
              { cause: err },
            );
          await new Promise((r) => setTimeout(r, SQLITE_LOCK_POLL_MS));
        }
      }
      try {
        return await fn();
      } finally {
        lock.exec('rollback');
      }
    } finally {
      lock.close();
    }
  };
}

function openPostgres(pg: typeof Pg, target: Extract<DatabaseTarget, { kind: 'postgres' }>, events: DatabaseEvents): Database {
  const pool = new pg.Pool({
    connectionString: target.url,
    max: target.poolMax,
    idleTimeoutMillis: 30_000,
    // Also bounds the wait for a free pooled connection: a request never queues for longer.
    connectionTimeoutMillis: target.connectTimeoutMs ?? 5_000,
    statement_timeout: target.statementTimeoutMs,
    // The server cancels a statement at statement_timeout; this client-side limit covers a
    // server that no longer answers at all (it would otherwise hang the request).
    ...(target.statementTimeoutMs > 0 ? { query_timeout: target.statementTimeoutMs + READ_TIMEOUT_MARGIN_MS } : {}),
    // TCP keepalive: a connection to a host that vanished (no FIN, no RST) is found dead.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    application_name: 'clinic-api',
  });
  // Every client keeps an error listener for its whole life, and a client whose connection
  // failed is destroyed rather than reused (pg-pool.ts): a restarting server must not crash us.
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: guardedPool(pool, (err) => events.onConnectionError?.(err)) }) });
  return {
    db,
    dialect: 'postgres',
    exclusive: pgLock(pg, target.url),
    writeTransaction: (fn, opts) => pgWriteTransaction(db, fn, opts),
    readSnapshot: (fn) =>
      db
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute((trx) => fn(trx)),
    listen: pgListen(pg, target.url),
    close: () => db.destroy(),
  };
}

async function pgWriteTransaction<T>(
  db: Kysely<DB>,
  fn: (trx: Kysely<DB>) => Promise<T>,
  opts: WriteTransactionOptions<T> = {},
): Promise<T> {
  const trx = await db.startTransaction().execute();
  let result: T;
  try {
    result = await fn(trx);
    if (opts.keep === undefined || opts.keep(result)) await trx.commit().execute();
    else await trx.rollback().execute();
  } catch (err) {
    // The connection is released even when the rollback fails (a lost connection): the cause is `err`.
    if (!trx.isCommitted && !trx.isRolledBack)
      await trx
        .rollback()
        .execute()
        .catch(() => {});
    throw err;
  }
  return result;
}

function pgListen(pg: typeof Pg, url: string) {
  return async (channel: string, onNotify: (payload: string) => void, onError: (err: unknown) => void) => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, application_name: 'clinic-api listener' });
    let ended = false;
    client.on('error', (err) => {
      if (!ended) onError(err);
      ended = true;
    });
    client.on('notification', (n) => {
      if (n.channel === channel) onNotify(n.payload ?? '');
    });
    await client.connect();
    if (!/^[a-z_]+$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    await client.query(`listen ${channel}`);
    return async () => {
      ended = true;
      await client.end().catch(() => {});
    };
  };
}

function pgLock(pg: typeof Pg, url: string) {
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, application_name: 'clinic-api start-up lock' });
    client.on('error', () => {});
    await client.connect();
    try {
      await client.query(`set lock_timeout = ${STARTUP_LOCK_WAIT_MS}`);
      await client.query('select pg_advisory_lock($1)', [STARTUP_LOCK]);
      try {
        return await fn();
      } finally {
        await client.query('select pg_advisory_unlock($1)', [STARTUP_LOCK]).catch(() => {});
      }
    } finally {
      await client.end().catch(() => {});
    }
  };
}

/** What pg, its pool and better-sqlite3 say when the connection, not the query, failed. */
const CONNECTION_MESSAGES = new RegExp(
  [
    'Connection terminated',
    'timeout exceeded when trying to connect',
    'Query read timeout',
    'not queryable',
    'driver has already been destroyed',
    'database connection is not open',
  ].join('|'),
  'i',
);

/** True when `err` came from the database or its connection (answered as 500 database_error). */
export function isDatabaseError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof BetterSqlite3.SqliteError) return true;
  if (pgLoaded !== null && err instanceof pgLoaded.DatabaseError) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH'].includes(code))
    return true;
  return CONNECTION_MESSAGES.test(err.message);
}

export type DatabaseErrorKind = 'timeout' | 'connection' | 'query';

/**
 * For metrics: a timeout (statement, read or connect), the connection failing (refused, reset,
 * the server shutting down), or a statement the database refused.
 */
export function databaseErrorKind(err: unknown): DatabaseErrorKind {
  const code = (err as { code?: unknown })?.code;
  const message = err instanceof Error ? err.message : '';
  if (code === '57014' || /timeout|timed out/i.test(message) || code === 'ETIMEDOUT') return 'timeout';
  if (isConnectionFault(err) || (typeof code === 'string' && /^E[A-Z]+$/.test(code)) || /not open|destroyed/i.test(message))
    return 'connection';
  return 'query';
}
