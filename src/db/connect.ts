// The one switch between SQLite and PostgreSQL, and the only code that knows the drivers.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.js';
import type { Dialect } from './dialect.js';
import type { DB } from './schema.js';
import { guardedPool, isConnectionFault } from './pg-pool.js';
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
   * it is retried for up to `waitMs` (default 10 minutes; 0: one attempt that does not wait, and
   * WriterBusy if another writer holds the lock). PostgreSQL: an ordinary transaction (writers of
   * a clinic serialise on its advisory lock, repos/writes.ts). It commits when `fn` returns, or
   * rolls back and returns its result when `keep` says so (a refused import), and rolls back and
   * rethrows when `fn` throws.
   */
  writeTransaction<T>(fn: (trx: Kysely<DB>) => Promise<T>, opts?: WriteTransactionOptions<T>): Promise<T>;
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

/** Another process holds SQLite's write lock and the caller asked not to wait (writeTransaction). */
export class WriterBusy extends Error {
  constructor() {
    super('another process is writing to the database');
    this.name = 'WriterBusy';
  }
}

/** How long a writer waits for SQLite's write lock by default (an import of a million rows takes minutes). */
const WRITE_LOCK_WAIT_MS = 600_000;
const BUSY_TIMEOUT_MS = 5_000;

/** Arbitrary constant naming the start-up lock (PostgreSQL advisory lock key). */
const STARTUP_LOCK = 720_431_915;
/** How long an instance waits for another's start-up (migrations, the demo) before giving up. */
const STARTUP_LOCK_WAIT_MS = 300_000;
const SQLITE_LOCK_POLL_MS = 50;

export type DatabaseTarget =
  | { kind: 'sqlite'; file: string }
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

export function targetFromConfig(config: Config): DatabaseTarget {
  if (config.databaseUrl) {
    return {
      kind: 'postgres',
      url: config.databaseUrl,
      poolMax: config.dbPoolMax,
      statementTimeoutMs: config.dbStatementTimeoutMs,
      connectTimeoutMs: config.dbConnectTimeoutMs,
    };
  }
  return { kind: 'sqlite', file: path.join(config.dataDir, 'clinic.db') };
}

export function describeTarget(target: DatabaseTarget): string {
  if (target.kind === 'sqlite') return `SQLite ${target.file}`;
  const u = new URL(target.url);
  return `PostgreSQL ${u.hostname}:${u.port || 5432}${u.pathname}`;
}

export async function openDatabase(target: DatabaseTarget, events: DatabaseEvents = {}): Promise<Database> {
  return target.kind === 'sqlite' ? openSqlite(target.file) : openPostgres(target, events);
}

function openSqlite(file: string): Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  raw.pragma('cache_size = -65536');
  const cached = statementCache(raw);
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: cached as unknown as BetterSqlite3.Database }) });
  registerDirect(db, cached);
  // An in-memory database has this one connection: nothing else can reach it.
  const exclusive = file === ':memory:' ? <T>(fn: () => Promise<T>) => fn() : sqliteLock(`${file}.lock`);
  return { db, dialect: 'sqlite', exclusive, writeTransaction: sqliteWriteTransaction(db, raw), close: () => db.destroy() };
}

/**
 * BEGIN IMMEDIATE on the connection Kysely holds for `fn` (db.connection() keeps its mutex for the
 * whole callback, so no other query of this process runs inside the transaction). Kysely's own
 * transaction() can only BEGIN (deferred), hence the raw statements on the driver's handle.
 */
function sqliteWriteTransaction(db: Kysely<DB>, raw: BetterSqlite3.Database) {
  const begin = (waitMs: number) => {
    if (waitMs === 0) {
      // One attempt: the connection's busy handler is off for it (synchronous, nothing interleaves).
      raw.pragma('busy_timeout = 0');
      try {
        raw.exec('begin immediate');
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new WriterBusy();
        throw err;
      } finally {
        raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      }
      return;
    }
    // Each attempt waits up to busy_timeout inside SQLite (blocking: writers are operator
    // commands and the first run, never a request).
    const deadline = Date.now() + waitMs;
    for (;;) {
      try {
        raw.exec('begin immediate');
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err;
      }
    }
  };
  return <T>(fn: (trx: Kysely<DB>) => Promise<T>, opts: WriteTransactionOptions<T> = {}): Promise<T> =>
    db.connection().execute(async (conn) => {
      begin(opts.waitMs ?? WRITE_LOCK_WAIT_MS);
      try {
        const result = await fn(conn);
        raw.exec(opts.keep === undefined || opts.keep(result) ? 'commit' : 'rollback');
        return result;
      } catch (err) {
        if (raw.inTransaction) raw.exec('rollback');
        throw err;
      }
    });
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

// int8 (bigint) columns hold epoch seconds and counts, all far below 2^53: parse them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));

function openPostgres(target: Extract<DatabaseTarget, { kind: 'postgres' }>, events: DatabaseEvents): Database {
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
    exclusive: pgLock(target.url),
    writeTransaction: (fn, opts) => pgWriteTransaction(db, fn, opts),
    listen: pgListen(target.url),
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

function pgListen(url: string) {
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

function pgLock(url: string) {
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

/** True when `err` came from the database or its connection (answered as 500 database_error). */
export function isDatabaseError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof BetterSqlite3.SqliteError) return true;
  if (err instanceof pg.DatabaseError) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH'].includes(code))
    return true;
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|driver has already been destroyed|database connection is not open/i.test(
    err.message,
  );
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
