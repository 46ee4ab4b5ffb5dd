// `clinic-api backup FILE`: a consistent copy of the embedded database while the service serves
// and imports run (db/sqlite-backup.ts: the online backup over one read snapshot), written next to
// FILE under a temporary name, checked (integrity_check, migrations this build knows), then put in
// place in one rename. The copy carries the pepper of DATA_DIR/api-key-pepper (services/backup-format.ts),
// so that the restored service accepts the keys it accepted and opens its webhook secrets.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { targetFromConfig } from '../db/connect.js';
import { checkHeader, inspectCopy, sealCopy, snapshotCopy } from '../db/sqlite-backup.js';
import type { Config } from '../config.js';
import { DomainError } from '../errors.js';
import { BACKUP_FORMAT, knownMigrations, pepperCheck, pepperFileOf, type BackupInfo, type PepperSource } from './backup-format.js';
import { fsyncDirectory, fsyncFile, removeQuietly, sqliteSideFiles } from './backup-files.js';

/**
 * Pages per step of the online backup: 1,024 pages (4 MiB at SQLite's default page size). A step
 * runs synchronously in the backup's own process, never in the service's, so the step size does
 * not reach the API's latency (measured at 100 requests/s: docs/operations.md, "Backups and
 * restore"); it bounds how long the command takes to notice Ctrl-C. Measured on the 774 MB
 * database of 1M records: about 1.2-1.3 s of CPU for the whole copy at 1,024 or 8,192 pages a
 * step (8,192 holds the command's event loop up to 300 ms a step), a little more at 100.
 */
export const PAGES_PER_STEP = 1024;

export interface BackupOptions {
  config: Config;
  /** FILE as given */
  file: string;
  /** replace FILE if it exists */
  force: boolean;
  /** "clinic-api 1.2.3", recorded in the backup */
  madeBy: string;
  /** wall clock (ms), for made_at */
  nowMs: number;
  /** the checks of the paths passed: the copy of `source` begins */
  onStart?: (source: string) => void;
  /** pages copied so far, of the total */
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

export interface BackupResult {
  file: string;
  bytes: number;
  seconds: number;
  madeAt: string;
  /** the migrations applied in the copy, in order */
  migrations: string[];
  /** rows per table */
  counts: Record<string, number>;
  pepper: PepperSource;
  replaced: boolean;
}

const invalid = (message: string, field = 'FILE') => new DomainError('invalid_input', message, { field });

/** The refusals that need no copy: FILE's directory, FILE itself, DATA_DIR's database. */
function checkPaths(config: Config, file: string, force: boolean): { target: string; source: string } {
  const target = path.resolve(file);
  const dir = path.dirname(target);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
    throw invalid(`the directory ${dir} does not exist: create it first (mkdir -p ${dir}), or give FILE in a directory that exists`);
  const existing = fs.statSync(target, { throwIfNoEntry: false });
  if (existing?.isDirectory())
    throw invalid(`${target} is a directory: give the backup's file name, e.g. ${path.join(target, 'clinic.db')}`);
  if (existing && !force)
    throw invalid(`${target} exists already: give a new name (e.g. with the date in it), or --force to replace it`, 'FILE');
  const source = targetFromConfig(config);
  if (source.kind !== 'sqlite') throw new Error('backup of a PostgreSQL database'); // the CLI refuses DATABASE_URL before
  if (!fs.existsSync(source.file))
    throw invalid(
      `DATA_DIR (${config.dataDir}) holds no database (clinic.db): nothing to back up; set DATA_DIR to the directory the service runs on`,
      'DATA_DIR',
    );
  const dataDir = fs.realpathSync(config.dataDir);
  const realDir = fs.realpathSync(dir);
  if (realDir === dataDir || realDir.startsWith(dataDir + path.sep))
    throw invalid(
      `${target} is inside DATA_DIR (${config.dataDir}): keep backups elsewhere (one in DATA_DIR is lost with it, and restore needs an ` +
        `empty DATA_DIR)`,
    );
  return { target, source: source.file };
}

/** Where the pepper is, what the backup records about it, and the pepper itself when it carries it. */
function pepperInfo(config: Config): Pick<BackupInfo, 'pepper_source' | 'pepper' | 'pepper_check'> {
  if (config.apiKeyPepper !== null) return { pepper_source: 'environment', pepper_check: pepperCheck(config.apiKeyPepper) };
  const pepper = pepperFileOf(config.dataDir);
  if (pepper === null) return { pepper_source: 'missing' };
  return { pepper_source: 'file', pepper, pepper_check: pepperCheck(pepper) };
}

export async function backupDatabase(opts: BackupOptions): Promise<BackupResult> {
  const started = performance.now();
  const { target, source } = checkPaths(opts.config, opts.file, opts.force);
  const pepper = pepperInfo(opts.config);
  opts.onStart?.(source);
  const info: BackupInfo = {
    format: BACKUP_FORMAT,
    made_at: new Date(opts.nowMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    made_by: opts.madeBy,
    ...pepper,
  };
  // Beside FILE (same file system: the final rename is atomic), hidden, named for what it is.
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.partial-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    // Made here, empty and 0600, before SQLite writes a page into it: the backup holds the pepper.
    fs.writeFileSync(temp, '', { mode: 0o600, flag: 'wx' });
    await snapshotCopy(source, temp, { pagesPerStep: PAGES_PER_STEP, onProgress: opts.onProgress, signal: opts.signal });
    sealCopy(temp, info as unknown as Record<string, string>);
    const header = checkHeader(temp);
    const inspection = inspectCopy(temp);
    if (!header.ok || inspection.problems.length > 0)
      throw new DomainError(
        'rejected',
        `the copy failed its check (${header.ok ? `integrity_check: ${inspection.problems.slice(0, 3).join('; ')}` : header.problem}): ` +
          `the database in DATA_DIR may be damaged; nothing was written to ${target}`,
      );
    const known = new Set(knownMigrations());
    const unknown = inspection.migrations.filter((m) => !known.has(m));
    if (unknown.length > 0)
      throw new DomainError(
        'rejected',
        `the database has migrations this clinic-api does not know (${unknown.join(', ')}): back it up with the clinic-api version the ` +
          `service runs; nothing was written to ${target}`,
      );
    fsyncFile(temp);
    if (opts.signal?.aborted) throw opts.signal.reason;
    const replaced = place(temp, target, opts.force);
    fsyncDirectory(path.dirname(target));
    return {
      file: target,
      bytes: fs.statSync(target).size,
      seconds: (performance.now() - started) / 1000,
      madeAt: info.made_at,
      migrations: inspection.migrations,
      counts: inspection.counts,
      pepper: info.pepper_source,
      replaced,
    };
  } finally {
    for (const f of [temp, ...sqliteSideFiles(temp)]) removeQuietly(f);
  }
}

/**
 * Puts the checked copy at `target`: a hard link, which never replaces a file (one that appeared
 * since the first check is refused, not overwritten), or with --force a rename over it (atomic:
 * readers see the old backup or the new one, never a part). Whether it replaced a file.
 */
function place(temp: string, target: string, force: boolean): boolean {
  if (force) {
    const replaced = fs.existsSync(target);
    fs.renameSync(temp, target);
    return replaced;
  }
  try {
    fs.linkSync(temp, target);
    return false;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw invalid(`${target} exists already (it appeared while the backup ran): nothing was written to it`);
    // A file system without hard links: a rename, after one more look.
    if (fs.existsSync(target)) throw invalid(`${target} exists already (it appeared while the backup ran): nothing was written to it`);
    fs.renameSync(temp, target);
    return false;
  }
}
