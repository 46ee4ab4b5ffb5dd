// `clinic-api backup FILE` and `clinic-api restore FILE` (services/backup.ts, services/restore.ts):
// what they did on stderr, the file (backup) or DATA_DIR (restore) on stdout, --json for both.
// Neither opens the runtime: a backup must not migrate the database it copies, nor generate a
// pepper, and a restore writes into an empty DATA_DIR that has no database yet.
import os from 'node:os';
import type { Command } from 'commander';
import { DomainError } from '../errors.js';
import type { BackupResult } from '../services/backup.js';
import type { RestoreResult } from '../services/restore.js';
import { info, result, type CliContext } from './io.js';
import { packageVersion } from './version.js';

const HOW_POSTGRES =
  'Use PostgreSQL\'s own tools: `pg_dump -Fc -f clinic.dump "$DATABASE_URL"` makes a backup, ' +
  '`pg_restore --no-owner --dbname "$NEW_DATABASE_URL" clinic.dump` restores it into an empty database, ' +
  'and continuous archiving (WAL archiving with a base backup) gives point-in-time recovery; ' +
  'keep API_KEY_PEPPER with them. docs/operations.md, "Backups and restore", has the steps';

/** With DATABASE_URL the data is in PostgreSQL: both commands say how to back it up instead (exit 2). */
function refusePostgres(ctx: CliContext, command: string): void {
  if ((ctx.io.env.DATABASE_URL ?? '').trim() === '') return;
  throw new DomainError(
    'invalid_input',
    `${command}: DATABASE_URL is set, so the data is in PostgreSQL, and \`clinic-api ${command}\` copies only the embedded SQLite ` +
      `database. ${HOW_POSTGRES}`,
    { field: 'DATABASE_URL' },
  );
}

/**
 * Runs `fn` with an AbortSignal that SIGINT and SIGTERM abort: the command then removes its
 * partial files and exits 1, instead of leaving them behind.
 */
async function interruptible<T>(what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals) =>
    ac.abort(new DomainError('rejected', `${what} was interrupted by ${sig}: its partial files were removed, nothing was changed`));
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await fn(ac.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * Runs `fn` at the lowest CPU priority (nice 19, as `nice -n 19` would): most of a backup's time
 * is integrity_check, a core's worth of work for seconds (about 10 s for a 774 MB database), and
 * on a machine that also runs the service the service's requests must come first. The priority is
 * put back afterwards where the system allows it (the command may run inside a test's process).
 */
async function atLowPriority<T>(fn: () => Promise<T>): Promise<T> {
  let before: number | null = null;
  try {
    before = os.getPriority();
    os.setPriority(os.constants.priority.PRIORITY_LOW);
  } catch {
    // not permitted here: it runs at the priority it has
  }
  try {
    return await fn();
  } finally {
    try {
      if (before !== null) os.setPriority(before);
    } catch {
      // raising a priority again needs a privilege: a process that is about to exit keeps the low one
    }
  }
}

const fmt = (n: number) => n.toLocaleString('en-US');
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
/** Each table's rows named as one of them is (a collection's by its singular). */
const ROW_NOUNS: Record<string, string> = {
  clinics: 'clinic',
  users: 'user',
  api_keys: 'API key',
  events: 'event',
  webhook_endpoints: 'webhook endpoint',
};
const counted = async (counts: Record<string, number>) => {
  const { SINGULAR_OF } = await import('../collections/index.js');
  const nouns: Record<string, string> = { ...ROW_NOUNS, ...SINGULAR_OF };
  return Object.entries(counts)
    .map(([table, n]) => `${fmt(n)} ${nouns[table] ?? table}${n === 1 ? '' : 's'}`)
    .join(', ');
};
const schema = (migrations: string[]) => migrations.at(-1) ?? 'none';

const PEPPER_NOTE: Record<BackupResult['pepper'], string> = {
  file: 'the pepper (DATA_DIR/api-key-pepper) is inside, so that a restore accepts the same API keys: keep this file as secret as DATA_DIR',
  environment:
    'API_KEY_PEPPER is set: the backup does not hold it. Keep that variable: a restored service needs the same value, ' +
    'or it refuses every API key and cannot open the webhook signing secrets',
  missing:
    'warning: DATA_DIR has no api-key-pepper and API_KEY_PEPPER is unset: the backup holds no pepper, and no service can verify the API ' +
    'keys it holds',
};

const RESTORED_PEPPER_NOTE: Record<RestoreResult['pepper'], string> = {
  written: "the backup's pepper is in DATA_DIR/api-key-pepper: the API keys and webhook secrets work as before",
  environment: "API_KEY_PEPPER is the backup's pepper: serve with the same value",
  missing: 'warning: the backup holds no pepper: the service will generate a new one, and the API keys it holds will not work',
};

export function registerBackupCommands(program: Command, ctx: CliContext): void {
  program
    .command('backup')
    .description('copy the embedded SQLite database (and its pepper) into FILE while the service runs, checked before it is put in place')
    .argument('<file>', 'the backup file to write (its directory must exist)')
    .option('--force', 'replace FILE if it exists')
    .action(async (file: string, o: { force?: boolean }) => {
      refusePostgres(ctx, 'backup');
      const config = await ctx.config();
      const [{ backupDatabase }, { startProgress }] = await Promise.all([import('../services/backup.js'), import('./progress.js')]);
      const progress = startProgress(ctx.io.stderr, { label: 'backup', total: null, unit: 'pages', now: ctx.io.now });
      const res = await interruptible('the backup', (signal) =>
        atLowPriority(() =>
          backupDatabase({
            config,
            file,
            force: Boolean(o.force),
            madeBy: `clinic-api ${packageVersion()}`,
            nowMs: ctx.io.now(),
            signal,
            onStart: (source) => info(ctx, `backup: copying ${source} ...`),
            onProgress: (done, total) => progress.update(done, `${fmt(done)} of ${fmt(total)} pages`),
          }).finally(() => progress.stop()),
        ),
      );
      info(
        ctx,
        [
          `${res.replaced ? 'replaced' : 'wrote'} ${res.file}: ${mb(res.bytes)} in ${res.seconds.toFixed(1)} s, integrity_check ok, ` +
            `schema ${schema(res.migrations)}`,
          `  ${await counted(res.counts)}`,
          `  ${PEPPER_NOTE[res.pepper]}`,
        ].join('\n'),
      );
      result(ctx, res.file, {
        file: res.file,
        bytes: res.bytes,
        seconds: Math.round(res.seconds * 1000) / 1000,
        made_at: res.madeAt,
        schema: schema(res.migrations),
        counts: res.counts,
        pepper: res.pepper === 'file' ? 'included' : res.pepper,
        replaced: res.replaced,
      });
    });

  program
    .command('restore')
    .description('put a backup made by `clinic-api backup` into an empty (or new) DATA_DIR; `clinic-api serve` then starts from it')
    .argument('<file>', 'the backup file')
    .action(async (file: string) => {
      refusePostgres(ctx, 'restore');
      const config = await ctx.config();
      const { restoreDatabase } = await import('../services/restore.js');
      const res = await interruptible('the restore', (signal) =>
        restoreDatabase({
          config,
          file,
          signal,
          onStart: (from) => info(ctx, `restore: copying ${from} into ${config.dataDir} and checking it ...`),
        }),
      );
      info(
        ctx,
        [
          `restored ${res.file} (made ${res.madeAt} by ${res.madeBy}) into ${res.dataDir}: ${mb(res.bytes)}, integrity_check ok, ` +
            `schema ${schema(res.migrations)}`,
          `  ${await counted(res.counts)}`,
          `  ${RESTORED_PEPPER_NOTE[res.pepper]}`,
          ...(res.pending.length > 0
            ? [`  the service applies the migrations the backup predates when it starts: ${res.pending.join(', ')}`]
            : []),
          `start the service on it: clinic-api serve (with DATA_DIR=${res.dataDir})`,
        ].join('\n'),
      );
      result(ctx, res.dataDir, {
        data_dir: res.dataDir,
        file: res.file,
        bytes: res.bytes,
        made_at: res.madeAt,
        made_by: res.madeBy,
        schema: schema(res.migrations),
        pending_migrations: res.pending,
        counts: res.counts,
        pepper: res.pepper,
      });
    });
}
