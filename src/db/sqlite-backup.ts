// The SQLite side of `clinic-api backup` and `restore` (services/backup.ts, services/restore.ts):
// SQLite's online backup API over one read snapshot, and the checks of a copy. The only code that
// drives the driver for them.
//
// Why the read transaction: sqlite3_backup_step() opens and closes a read transaction per step
// when the connection has none, and a step that finds the file changed by another connection or
// process starts the copy over from page 1. A paced copy of a large file next to a service that
// writes (usage counts, an import, webhook deliveries) would then start over at every write and
// might never end (measured: 298 restarts in 6 s against a writer every 20 ms, with no end in
// sight). Held for the whole copy, one read transaction pins one snapshot (WAL: writers go on,
// and their commits are simply not in it): the copy never restarts and is exactly the database as
// it was at that instant, before or after any transaction, never in between.
import { WRITE_ORDER } from '../collections/index.js';
import fs from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';

/** The table a backup carries about itself (format, when, the pepper); dropped on restore. */
export const BACKUP_INFO_TABLE = 'clinic_api_backup';
/** Kysely's table of applied migrations (db/migrate.ts). */
const MIGRATIONS_TABLE = 'kysely_migration';
const BUSY_TIMEOUT_MS = 5_000;

/** The tables counted in what a backup or a restore reports, with the name they are shown under. */
const COUNTED: [label: string, table: string][] = [
  ['clinics', 'clinics'],
  ['users', 'users'],
  ['api_keys', 'api_keys'],
  ...WRITE_ORDER.map((name): [string, string] => [name, name]),
  ['events', 'events'],
  ['webhook_endpoints', 'webhook_endpoints'],
];

export interface CopyOptions {
  /** pages copied per step (each step runs synchronously in this process) */
  pagesPerStep: number;
  /** pages copied so far, of the total */
  onProgress?: (done: number, total: number) => void;
  /** aborts the copy between two steps (the partial file is the caller's to remove) */
  signal?: AbortSignal;
}

/**
 * Copies the database `source` into `dest` (which must not exist) page by page with the online
 * backup API, all pages from one snapshot (see the top of this file). Readers and writers of
 * `source`, in this process or others, go on meanwhile.
 */
export async function snapshotCopy(source: string, dest: string, opts: CopyOptions): Promise<{ pages: number; pageSize: number }> {
  // Read-only: a backup never writes to the database it copies.
  const src = new BetterSqlite3(source, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  try {
    const pageSize = Number(src.pragma('page_size', { simple: true }));
    src.exec('begin');
    try {
      // A deferred transaction reads (and pins its snapshot) at its first statement.
      src.prepare('select count(*) from sqlite_schema').pluck().get();
      const done = await src.backup(dest, {
        progress: ({ totalPages, remainingPages }) => {
          if (opts.signal?.aborted) throw opts.signal.reason instanceof Error ? opts.signal.reason : new Error('backup aborted');
          opts.onProgress?.(totalPages - remainingPages, totalPages);
          return opts.pagesPerStep;
        },
      });
      opts.onProgress?.(done.totalPages, done.totalPages);
      return { pages: done.totalPages, pageSize };
    } finally {
      if (src.inTransaction) src.exec('commit');
    }
  } finally {
    src.close();
  }
}

/**
 * Makes the fresh copy `file` a self-contained file (rollback journal instead of WAL: no -wal
 * beside it, ever) and writes `info` into its BACKUP_INFO_TABLE.
 */
export function sealCopy(file: string, info: Record<string, string>): void {
  const db = new BetterSqlite3(file, { fileMustExist: true });
  try {
    db.pragma('journal_mode = delete');
    db.exec(`create table ${BACKUP_INFO_TABLE} (name text primary key, value text not null)`);
    const insert = db.prepare(`insert into ${BACKUP_INFO_TABLE} (name, value) values (?, ?)`);
    db.transaction(() => {
      for (const [name, value] of Object.entries(info)) insert.run(name, value);
    })();
  } finally {
    db.close();
  }
}

/** What the first 100 bytes and the size of a file say about it, before SQLite opens it. */
export type HeaderCheck = { ok: true; pageSize: number; pages: number } | { ok: false; problem: string };

const MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

export function checkHeader(file: string): HeaderCheck {
  const size = fs.statSync(file).size;
  const head = Buffer.alloc(100);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, head, 0, 100, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (size < 100 || !head.subarray(0, 16).equals(MAGIC)) return { ok: false, problem: 'it is not a SQLite database' };
  const raw = head.readUInt16BE(16);
  const pageSize = raw === 1 ? 65_536 : raw;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) return { ok: false, problem: `its header is damaged (page size ${raw})` };
  // The page count in the header is valid when the two change counters agree (SQLite's rule).
  const counted = head.readUInt32BE(28);
  const valid = counted > 0 && head.readUInt32BE(24) === head.readUInt32BE(92);
  const pages = valid ? counted : Math.floor(size / pageSize);
  if (valid && size < pages * pageSize)
    return { ok: false, problem: `it is truncated: ${size} bytes, where its header says ${pages * pageSize}` };
  if (!valid && size % pageSize !== 0) return { ok: false, problem: `it is truncated: ${size} bytes is not a whole number of pages` };
  return { ok: true, pageSize, pages };
}

export interface CopyInspection {
  /** integrity_check's findings (its first 10 lines); empty when the file is intact */
  problems: string[];
  /** names of the migrations applied in it, in order */
  migrations: string[];
  /** rows per table of COUNTED (tables the file has) */
  counts: Record<string, number>;
  /** its BACKUP_INFO_TABLE, or null when it has none */
  info: Record<string, string> | null;
}

/**
 * integrity_check, then (only when it passes: a damaged file can fail any query) the applied
 * migrations, the counts and the backup's own information. `file` is opened read-only.
 */
export function inspectCopy(file: string): CopyInspection {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    let problems: string[];
    try {
      // One row per finding, or one row holding them all on separate lines, by SQLite version.
      problems = (db.pragma('integrity_check(10)') as { integrity_check: string }[])
        .flatMap((r) => r.integrity_check.split('\n'))
        .filter((line) => line !== '' && !line.startsWith('*** in database'));
    } catch (err) {
      // e.g. "file is not a database", "database disk image is malformed"
      return { problems: [(err as Error).message], migrations: [], counts: {}, info: null };
    }
    if (problems.length !== 1 || problems[0] !== 'ok') return { problems, migrations: [], counts: {}, info: null };
    const tables = new Set(db.prepare(`select name from sqlite_schema where type = 'table'`).pluck().all() as string[]);
    const migrations = tables.has(MIGRATIONS_TABLE)
      ? (db.prepare(`select name from ${MIGRATIONS_TABLE} order by name`).pluck().all() as string[])
      : [];
    const counts: Record<string, number> = {};
    for (const [label, table] of COUNTED)
      if (tables.has(table)) counts[label] = Number(db.prepare(`select count(*) from ${table}`).pluck().get());
    const info = tables.has(BACKUP_INFO_TABLE)
      ? Object.fromEntries(
          (db.prepare(`select name, value from ${BACKUP_INFO_TABLE}`).raw().all() as [string, string][]).map(([k, v]) => [k, v]),
        )
      : null;
    return { problems: [], migrations, counts, info };
  } finally {
    db.close();
  }
}

/**
 * Drops BACKUP_INFO_TABLE from a restored copy with secure_delete on, so that its pages (the
 * pepper among them) are overwritten, not merely freed: the database a service runs on never
 * holds the pepper.
 */
export function dropBackupInfo(file: string): void {
  const db = new BetterSqlite3(file, { fileMustExist: true });
  try {
    db.pragma('secure_delete = on');
    db.exec(`drop table if exists ${BACKUP_INFO_TABLE}`);
  } finally {
    db.close();
  }
}
