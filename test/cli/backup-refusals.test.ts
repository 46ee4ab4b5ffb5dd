// What `clinic-api backup` and `clinic-api restore` refuse (docs/cli.md; docs/operations.md,
// "Backups and restore"), each as its own process: the message names the problem and the fix,
// the exit code is 2 for bad usage and 1 for a file that is not an intact backup, and nothing
// changes: the backup's FILE, DATA_DIR (absent stays absent, a non-empty one keeps every byte).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { cliProcess } from './backup-helpers.js';
import { runCli, tempDirs } from './in-process.js';

const PEPPER = 'backup-refusals-pepper-0123456789abcdefghij';
const dirs = tempDirs('clinic-backup-refusals-');
let dataDir: string;
/** A real backup of a demo clinic, made with DATA_DIR's generated pepper. */
let good: string;
/** A real backup made with API_KEY_PEPPER set, and that clinic's API key. */
let withEnvPepper: { file: string; key: string };
const env = () => ({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });

/** Every file under `dir` with a hash of its bytes (null when `dir` does not exist). */
function snapshot(dir: string): Record<string, string> | null {
  if (!fs.existsSync(dir)) return null;
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const full = path.join(dir, name);
    out[name] = fs.statSync(full).isDirectory() ? 'dir' : createHash('sha256').update(fs.readFileSync(full)).digest('hex');
  }
  return out;
}

/** A copy of the good backup, changed by `change`. */
function variant(name: string, change: (file: string) => void): string {
  const file = path.join(dirs.make(), name);
  fs.copyFileSync(good, file);
  change(file);
  return file;
}

beforeAll(async () => {
  dataDir = dirs.make();
  expect((await runCli(['demo'], { dataDir })).code).toBe(0);
  good = path.join(dirs.make(), 'good.db');
  const made = await cliProcess(['backup', good], env());
  expect(made.code, made.stderr).toBe(0);

  const envDir = dirs.make();
  const demo = await runCli(['--json', 'demo'], { dataDir: envDir, env: { API_KEY_PEPPER: PEPPER } });
  expect(demo.code, demo.stderr).toBe(0);
  withEnvPepper = {
    file: path.join(dirs.make(), 'env-pepper.db'),
    key: (JSON.parse(demo.stdout) as { key: { key: string } }[])[0]!.key.key,
  };
  const r = await cliProcess(['backup', withEnvPepper.file], { DATA_DIR: envDir, LOG_LEVEL: 'silent', API_KEY_PEPPER: PEPPER });
  expect(r.code, r.stderr).toBe(0);
  // It says the backup does not hold the variable, and never shows it.
  expect(r.stderr).toMatch(/API_KEY_PEPPER is set: the backup does not hold it\. Keep that variable/);
  expect(r.stderr + r.stdout).not.toContain(PEPPER);
}, 120_000);

afterAll(() => dirs.cleanup());

describe('restore refuses, changing nothing', () => {
  /** Runs restore of `file` into `target` (absent or as it is) and checks that target did not change. */
  async function refused(file: string, target: string, extraEnv: Record<string, string> = {}) {
    const before = snapshot(target);
    const r = await cliProcess(['restore', file], { DATA_DIR: target, LOG_LEVEL: 'silent', ...extraEnv });
    expect(snapshot(target)).toEqual(before);
    expect(r.stdout).toBe('');
    return r;
  }
  const absent = () => path.join(dirs.make(), 'data', 'here');

  it('a DATA_DIR that is not empty: exit 2, naming what it holds and what to do', async () => {
    const target = dirs.make();
    fs.writeFileSync(path.join(target, 'notes.txt'), 'keep me');
    const r = await refused(good, target);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/DATA_DIR \(.+\) is not empty \(it holds notes\.txt\): restore only into an empty or new directory/);
    expect(r.stderr).toMatch(/nothing was changed/);
    // The service's own DATA_DIR, too.
    const live = await refused(good, dataDir);
    expect(live.code).toBe(2);
    expect(live.stderr).toMatch(/it holds .*clinic\.db/);
  });

  it('a truncated backup, a garbage file, a damaged page, a plain database, a newer schema: exit 1, saying which', async () => {
    const cases: [string, string, RegExp][] = [
      [
        'truncated',
        variant('truncated.db', (f) => fs.truncateSync(f, Math.floor(fs.statSync(f).size / 2))),
        /is not an intact backup: it is truncated: \d+ bytes, where its header says \d+; nothing was changed\. Restore another backup/,
      ],
      [
        'garbage',
        (() => {
          const f = path.join(dirs.make(), 'garbage.db');
          fs.writeFileSync(f, Buffer.alloc(50_000, 'not a database '));
          return f;
        })(),
        /is not an intact backup: it is not a SQLite database; nothing was changed/,
      ],
      [
        'damaged page',
        variant('damaged.db', (f) => {
          const db = new BetterSqlite3(f, { readonly: true });
          const root = Number(db.prepare(`select rootpage from sqlite_schema where name = 'citas'`).pluck().get());
          const pageSize = Number(db.pragma('page_size', { simple: true }));
          db.close();
          const fd = fs.openSync(f, 'r+');
          fs.writeSync(fd, Buffer.alloc(64, 0xff), 0, 64, (root - 1) * pageSize + 8);
          fs.closeSync(fd);
        }),
        /is not an intact backup: it is damaged \(SQLite's integrity_check: .+\); nothing was changed/,
      ],
      [
        'plain database',
        variant('plain.db', (f) => {
          const db = new BetterSqlite3(f);
          db.exec('drop table clinic_api_backup');
          db.close();
        }),
        /is a SQLite database but not a backup made by `clinic-api backup`/,
      ],
      [
        'newer schema',
        variant('newer.db', (f) => {
          const db = new BetterSqlite3(f);
          db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('999-from-the-future', '2099-01-01T00:00:00.000Z');
          db.close();
        }),
        /holds a newer schema than this clinic-api knows \(migration 999-from-the-future; made by clinic-api .+\): restore it with that version or a newer one/,
      ],
    ];
    await Promise.all(
      cases.map(async ([what, file, message]) => {
        const target = absent();
        const r = await refused(file, target);
        expect(r.code, what).toBe(1);
        expect(r.stderr, what).toMatch(message);
        // Absent stays absent: not even the parent it would have made.
        expect(fs.existsSync(path.dirname(target)), what).toBe(false);
        // An empty DATA_DIR stays empty.
        const empty = dirs.make();
        expect((await refused(file, empty)).code, what).toBe(1);
        expect(fs.readdirSync(empty), what).toEqual([]);
      }),
    );
  });

  it('a file that does not exist: exit 2', async () => {
    const r = await refused(path.join(dirs.make(), 'nope.db'), absent());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot read .*nope\.db: no such file/);
  });

  it('a backup made with API_KEY_PEPPER set needs that variable, with that value; then the keys work', async () => {
    const missing = await refused(withEnvPepper.file, absent());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /was made by a service with API_KEY_PEPPER set.*set API_KEY_PEPPER to the value the backed-up service had/,
    );
    const wrong = await refused(withEnvPepper.file, absent(), { API_KEY_PEPPER: `${PEPPER}-not-the-same` });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/API_KEY_PEPPER is not the secret .* was made with: the restored service would refuse every API key/);
    // And the other way: a backup that carries its pepper, with another one in API_KEY_PEPPER.
    const other = await refused(good, absent(), { API_KEY_PEPPER: PEPPER });
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/API_KEY_PEPPER is set, to another secret than the pepper of/);

    const target = absent();
    const ok = await cliProcess(['restore', withEnvPepper.file], { DATA_DIR: target, LOG_LEVEL: 'silent', API_KEY_PEPPER: PEPPER });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toMatch(/API_KEY_PEPPER is the backup's pepper: serve with the same value/);
    expect(fs.readdirSync(target)).toEqual(['clinic.db']);
    const rt = await openRuntime(loadConfig({ DATA_DIR: target, LOG_LEVEL: 'silent', API_KEY_PEPPER: PEPPER }));
    try {
      expect(await rt.keys.verify(withEnvPepper.key)).not.toBeNull();
    } finally {
      await rt.close();
    }
  });
});

describe('backup refuses, changing nothing', () => {
  it('a FILE that exists (unless --force), in a directory that does not exist, inside DATA_DIR, or no database: exit 2', async () => {
    const dir = dirs.make();
    const existing = path.join(dir, 'existing.db');
    fs.writeFileSync(existing, 'an older backup');
    const cases: [string[], Record<string, string>, RegExp][] = [
      [
        ['backup', existing],
        env(),
        /existing\.db exists already: give a new name \(e\.g\. with the date in it\), or --force to replace it/,
      ],
      [
        ['backup', path.join(dir, 'no', 'such', 'dir', 'x.db')],
        env(),
        /the directory .*no\/such\/dir does not exist: create it first \(mkdir -p .*\), or give FILE in a directory that exists/,
      ],
      [['backup', path.join(dataDir, 'inside.db')], env(), /inside\.db is inside DATA_DIR .*: keep backups elsewhere/],
      [['backup', dir], env(), /is a directory: give the backup's file name/],
      [
        ['backup', path.join(dir, 'x.db')],
        { DATA_DIR: dirs.make(), LOG_LEVEL: 'silent' },
        /holds no database \(clinic\.db\): nothing to back up/,
      ],
    ];
    const before = { dir: snapshot(dir), data: snapshot(dataDir) };
    const runs = await Promise.all(cases.map(([args, e]) => cliProcess(args, e)));
    runs.forEach((r, i) => {
      const [args, , message] = cases[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    });
    expect({ dir: snapshot(dir), data: snapshot(dataDir) }).toEqual(before);
    // --force replaces it, whole.
    const forced = await cliProcess(['backup', existing, '--force'], env());
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toMatch(/^replaced .*existing\.db: [\d.]+ MB in [\d.]+ s, integrity_check ok/m);
    expect(fs.readdirSync(dir)).toEqual(['existing.db']);
    expect(fs.readFileSync(existing).subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0');
  });
});

describe('with DATABASE_URL, both commands point to PostgreSQL tools (exit 2) and touch nothing', () => {
  it('backup and restore', async () => {
    const pg = { DATABASE_URL: 'postgres://clinic@127.0.0.1:5432/clinic', API_KEY_PEPPER: PEPPER, LOG_LEVEL: 'silent' };
    const out = path.join(dirs.make(), 'pg.db');
    const b = await cliProcess(['backup', out], { ...pg, DATA_DIR: dataDir });
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/backup: DATABASE_URL is set, so the data is in PostgreSQL.*pg_dump -Fc.*pg_restore.*continuous archiving/);
    expect(fs.existsSync(out)).toBe(false);
    const target = path.join(dirs.make(), 'data');
    const r = await cliProcess(['restore', good], { ...pg, DATA_DIR: target });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/restore: DATABASE_URL is set.*pg_restore --no-owner/);
    expect(fs.existsSync(target)).toBe(false);
    // Even without API_KEY_PEPPER (which DATABASE_URL otherwise requires): the answer is the same.
    const bare = await cliProcess(['backup', out], { DATABASE_URL: pg.DATABASE_URL, DATA_DIR: dataDir });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/pg_dump/);
  });
});
