// `clinic-api restore FILE`: a backup (services/backup.ts) into an empty or absent DATA_DIR. The
// file is copied into DATA_DIR under a temporary name and checked there (SQLite header and size,
// integrity_check, a backup of a format and schema this build knows, the pepper it needs); only
// then do the pepper and clinic.db get their names, the database last, each by a link that never
// replaces a file. A refusal removes what the restore made, DATA_DIR too when it made it: nothing
// changes. `clinic-api serve` then starts from the restored directory (and applies any migration
// the backup predates).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { targetFromConfig } from '../db/connect.js';
import { checkHeader, dropBackupInfo, inspectCopy } from '../db/sqlite-backup.js';
import { DomainError } from '../errors.js';
import { BACKUP_FORMAT, knownMigrations, pepperCheck, type BackupInfo } from './backup-format.js';
import { fsyncDirectory, fsyncFile, removeQuietly, sqliteSideFiles } from './backup-files.js';
import { PEPPER_FILE } from './pepper.js';

/** What a fresh file system's root holds (ext4's lost+found): an empty DATA_DIR on its own volume. */
const IGNORED_ENTRIES = new Set(['lost+found']);

export interface RestoreOptions {
  config: Config;
  /** FILE as given */
  file: string;
  /** the checks that need no copy passed: the copy of `file` begins */
  onStart?: (file: string) => void;
  /** aborts between steps (the restore then removes what it made) */
  signal?: AbortSignal;
}

export interface RestoreResult {
  file: string;
  dataDir: string;
  bytes: number;
  madeAt: string;
  madeBy: string;
  migrations: string[];
  /** migrations this build has and the backup predates: `serve` applies them at start */
  pending: string[];
  counts: Record<string, number>;
  /** `written`: the backup's pepper is now DATA_DIR/api-key-pepper; `environment`: API_KEY_PEPPER is the one; `missing`: there was none */
  pepper: 'written' | 'environment' | 'missing';
}

const NOTHING_CHANGED = 'nothing was changed';

function damaged(file: string, what: string): DomainError {
  return new DomainError(
    'rejected',
    `${file} is not an intact backup: ${what}; ${NOTHING_CHANGED}. Restore another backup (e.g. the one before it), made by \`clinic-api ` +
      `backup\``,
  );
}

/** The refusals that need no copy: FILE, DATA_DIR. Whether DATA_DIR exists. */
function checkPlaces(file: string, dataDir: string): boolean {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat) throw new DomainError('invalid_input', `cannot read ${file}: no such file`, { field: 'FILE' });
  if (!stat.isFile()) throw new DomainError('invalid_input', `${file} is not a file: give the backup file`, { field: 'FILE' });
  const dir = fs.statSync(dataDir, { throwIfNoEntry: false });
  if (!dir) return false;
  if (!dir.isDirectory())
    throw new DomainError('invalid_input', `DATA_DIR (${dataDir}) is not a directory: point DATA_DIR at an empty or new directory`, {
      field: 'DATA_DIR',
    });
  const entries = fs.readdirSync(dataDir).filter((e) => !IGNORED_ENTRIES.has(e));
  if (entries.length > 0)
    throw new DomainError(
      'conflict',
      `DATA_DIR (${dataDir}) is not empty (it holds ${entries.slice(0, 4).join(', ')}${entries.length > 4 ? ', ...' : ''}): ` +
        `restore only into an empty or new directory; stop the service and point DATA_DIR at a new directory (or move these files away), ` +
        `then restore again; ${NOTHING_CHANGED}`,
      { field: 'DATA_DIR' },
    );
  return true;
}

/** The pepper the restored service needs: the backup's, or API_KEY_PEPPER when the backup was made with it. Refuses a mismatch. */
function pepperToWrite(
  file: string,
  info: BackupInfo,
  envPepper: string | null,
): { write: string | null; pepper: RestoreResult['pepper'] } {
  if (info.pepper_source === 'file') {
    if (!info.pepper || info.pepper_check !== pepperCheck(info.pepper)) throw damaged(file, 'the pepper it carries is damaged');
    if (envPepper !== null && pepperCheck(envPepper) !== info.pepper_check)
      throw new DomainError(
        'invalid_config',
        `API_KEY_PEPPER is set, to another secret than the pepper of ${file}: the restored service would refuse every API key. ` +
          `Unset API_KEY_PEPPER (the backup's pepper goes to DATA_DIR/${PEPPER_FILE}), or set it to the value the backed-up service ` +
          `had; ${NOTHING_CHANGED}`,
        { field: 'API_KEY_PEPPER' },
      );
    return { write: info.pepper, pepper: 'written' };
  }
  if (info.pepper_source === 'environment') {
    if (envPepper === null)
      throw new DomainError(
        'invalid_config',
        `${file} was made by a service with API_KEY_PEPPER set, and a backup never holds that variable: ` +
          `set API_KEY_PEPPER to the value the backed-up service had, then restore again (and serve with it); ${NOTHING_CHANGED}`,
        { field: 'API_KEY_PEPPER' },
      );
    if (pepperCheck(envPepper) !== info.pepper_check)
      throw new DomainError(
        'invalid_config',
        `API_KEY_PEPPER is not the secret ${file} was made with: the restored service would refuse every API key. ` +
          `Set it to the value the backed-up service had; ${NOTHING_CHANGED}`,
        { field: 'API_KEY_PEPPER' },
      );
    return { write: null, pepper: 'environment' };
  }
  return { write: null, pepper: 'missing' };
}

/** Checks the copy `temp` of `file`; the backup's information. */
function checkCopy(file: string, temp: string): { info: BackupInfo; migrations: string[]; counts: Record<string, number> } {
  const header = checkHeader(temp);
  if (!header.ok) throw damaged(file, header.problem);
  const inspection = inspectCopy(temp);
  if (inspection.problems.length > 0)
    throw damaged(file, `it is damaged (SQLite's integrity_check: ${inspection.problems.slice(0, 3).join('; ')})`);
  const info = inspection.info as BackupInfo | null;
  if (info === null)
    throw new DomainError(
      'rejected',
      `${file} is a SQLite database but not a backup made by \`clinic-api backup\` (it has no clinic_api_backup table): restore such a ` +
        `file instead; ${NOTHING_CHANGED}`,
    );
  if (info.format !== BACKUP_FORMAT)
    throw new DomainError(
      'rejected',
      `${file} was made by a newer clinic-api (${info.made_by}, backup format ${info.format}): restore it with that version or a newer ` +
        `one; ${NOTHING_CHANGED}`,
    );
  const known = new Set(knownMigrations());
  const unknown = inspection.migrations.filter((m) => !known.has(m));
  if (unknown.length > 0)
    throw new DomainError(
      'rejected',
      `${file} holds a newer schema than this clinic-api knows (migration ${unknown.join(', ')}; made by ${info.made_by}): ` +
        `restore it with that version or a newer one; ${NOTHING_CHANGED}`,
    );
  return { info, migrations: inspection.migrations, counts: inspection.counts };
}

export async function restoreDatabase(opts: RestoreOptions): Promise<RestoreResult> {
  const file = path.resolve(opts.file);
  const { dataDir } = opts.config;
  const target = targetFromConfig(opts.config);
  if (target.kind !== 'sqlite') throw new Error('restore into PostgreSQL'); // the CLI refuses DATABASE_URL before
  const existed = checkPlaces(file, dataDir);
  // Before any copy: a file that is not even SQLite is refused without touching DATA_DIR.
  const header = checkHeader(file);
  if (!header.ok) throw damaged(file, header.problem);
  opts.onStart?.(file);

  // The first directory mkdir made (DATA_DIR or one of its parents): removed again on a refusal.
  const made = existed ? undefined : fs.mkdirSync(dataDir, { recursive: true });
  const tag = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const temp = path.join(dataDir, `.restore-${tag}.db`);
  const pepperTemp = path.join(dataDir, `.restore-${tag}.pepper`);
  const pepperFile = path.join(dataDir, PEPPER_FILE);
  let linkedPepper = false;
  let done = false;
  try {
    fs.writeFileSync(temp, '', { mode: 0o600, flag: 'wx' });
    const stop = () => {
      if (opts.signal?.aborted) throw opts.signal.reason;
    };
    await fs.promises.copyFile(file, temp);
    stop();
    const { info, migrations, counts } = checkCopy(file, temp);
    const pepper = pepperToWrite(file, info, opts.config.apiKeyPepper);
    stop();
    dropBackupInfo(temp);
    fsyncFile(temp);
    stop();
    if (pepper.write !== null) {
      fs.writeFileSync(pepperTemp, `${pepper.write}\n`, { mode: 0o600, flag: 'wx' });
      fsyncFile(pepperTemp);
      linkInto(pepperTemp, pepperFile, dataDir);
      linkedPepper = true;
    }
    // The database last: a DATA_DIR with clinic.db is a whole restore.
    linkInto(temp, target.file, dataDir);
    done = true;
    fsyncDirectory(dataDir);
    const known = knownMigrations();
    return {
      file,
      dataDir,
      bytes: fs.statSync(target.file).size,
      madeAt: info.made_at,
      madeBy: info.made_by,
      migrations,
      pending: known.filter((m) => !migrations.includes(m)),
      counts,
      pepper: pepper.pepper,
    };
  } finally {
    for (const f of [temp, pepperTemp, ...sqliteSideFiles(temp)]) removeQuietly(f);
    if (!done) {
      if (linkedPepper) removeQuietly(pepperFile);
      if (made !== undefined) fs.rmSync(made, { recursive: true, force: true });
    }
  }
}

/** A link that never replaces a file: one that appeared since the first check means someone else writes to DATA_DIR. */
function linkInto(temp: string, final: string, dataDir: string): void {
  try {
    fs.linkSync(temp, final);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // A file system without hard links: a rename, after one more look.
    if (code !== 'EEXIST' && !fs.existsSync(final)) return fs.renameSync(temp, final);
    if (code !== 'EEXIST') throw err;
    throw new DomainError(
      'conflict',
      `DATA_DIR (${dataDir}) is no longer empty: ${path.basename(final)} appeared while the restore ran (is a service starting on ` +
        `it?); ${NOTHING_CHANGED}`,
      { field: 'DATA_DIR' },
    );
  }
}
