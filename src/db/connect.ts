// The one switch between SQLite and PostgreSQL, and the only code that knows the drivers.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.js';
import type { Dialect } from './dialect.js';
import type { DB } from './schema.js';
import { statementCache } from './sqlite-statements.js';

export interface Database {
  readonly db: Kysely<DB>;
  readonly dialect: Dialect;
  close(): Promise<void>;
}

export type DatabaseTarget =
  | { kind: 'sqlite'; file: string }
  /** statementTimeoutMs 0: no limit, for operator commands (import, demo) that run for minutes. */
  | { kind: 'postgres'; url: string; poolMax: number; statementTimeoutMs: number };

export function targetFromConfig(config: Config): DatabaseTarget {
  if (config.databaseUrl) {
    return { kind: 'postgres', url: config.databaseUrl, poolMax: config.dbPoolMax, statementTimeoutMs: config.dbStatementTimeoutMs };
  }
  return { kind: 'sqlite', file: path.join(config.dataDir, 'clinic.db') };
}

export function describeTarget(target: DatabaseTarget): string {
  if (target.kind === 'sqlite') return `SQLite ${target.file}`;
  const u = new URL(target.url);
  return `PostgreSQL ${u.hostname}:${u.port || 5432}${u.pathname}`;
}

export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  return target.kind === 'sqlite' ? openSqlite(target.file) : openPostgres(target);
}

function openSqlite(file: string): Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  raw.pragma('cache_size = -65536');
  const cached = statementCache(raw);
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: cached as unknown as BetterSqlite3.Database }) });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

// int8 (bigint) columns hold epoch seconds and counts, all far below 2^53: parse them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));

function openPostgres(target: Extract<DatabaseTarget, { kind: 'postgres' }>): Database {
  const pool = new pg.Pool({
    connectionString: target.url,
    max: target.poolMax,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 5_000,
    statement_timeout: target.statementTimeoutMs,
    // The server cancels a statement at statement_timeout; this client-side limit covers a
    // server that no longer answers at all (it would otherwise hang the request).
    ...(target.statementTimeoutMs > 0 ? { query_timeout: target.statementTimeoutMs + 1_000 } : {}),
    application_name: 'clinic-api',
  });
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

/** True when `err` came from the database or its connection (answered as 500 database_error). */
export function isDatabaseError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof BetterSqlite3.SqliteError) return true;
  if (err instanceof pg.DatabaseError) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH'].includes(code)) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|driver has already been destroyed|database connection is not open/i.test(err.message);
}
