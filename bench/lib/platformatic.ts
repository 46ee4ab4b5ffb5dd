// The `platformatic` case's server: Platformatic DB, the version pinned in bench/.platformatic
// (package.json, its config platformatic.json and launcher start.mjs), on a
// copy of the data set's SQLite file. Installed there with `npm install` the first time the case runs,
// so it never enters the project's own install; that directory's node_modules is git-ignored.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { npmChildEnv, npmSaid } from '../../tools/npm-child.js';
import type { Dataset } from './dataset.js';
import { startServer, type ChildServer } from './processes.js';

const PACKAGE = '@platformatic/db';

function dependencies(file: string): Record<string, string> {
  try {
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {};
  } catch {
    return {};
  }
}

/**
 * Installs the pinned version (npm install; no lock file is kept: the bench/ directory holds code,
 * and Platformatic's own dependencies are its release's) unless it is in place for this Node (its SQLite driver is a
 * native add-on, built for one Node ABI); throws saying why it could not.
 */
function ensureInstalled(dir: string, log: (line: string) => void): void {
  const want = dependencies(path.join(dir, 'package.json'))[PACKAGE];
  if (!want) throw new Error(`case platformatic: ${dir}/package.json does not name ${PACKAGE}`);
  const marker = path.join(dir, 'node_modules', '.bench-installed');
  const stamp = `${PACKAGE}@${want} node-abi-${process.versions.modules}\n`;
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8') === stamp) return;
  log(`installing ${PACKAGE} ${want} into ${dir} (npm install, once per Node version: a few minutes) ...`);
  // The add-on is compiled by the node running the harness, against that node's own headers.
  const r = spawnSync('npm', ['install', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    env: npmChildEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 15 * 60_000,
  });
  if (r.status !== 0)
    throw new Error(
      `case platformatic: could not install ${PACKAGE} ${want} (\`npm install\` in ${dir} ` +
        `${r.error ? `failed: ${r.error.message}` : `exited with ${r.status ?? r.signal}`}); it needs the npm registry. ` +
        `The other cases run without it (--cases).\n${npmSaid(`${r.stdout ?? ''}${r.stderr ?? ''}`)}`,
    );
  fs.writeFileSync(marker, stamp);
}

/** A copy of the data set's database, for this run only: Platformatic reads a file that no other server writes. */
async function copyDatabase(ds: Dataset): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-api-bench-platformatic-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'clinic.db');
  const source = new BetterSqlite3(path.join(ds.dataDir, 'clinic.db'), { fileMustExist: true });
  try {
    await source.backup(file);
  } finally {
    source.close();
  }
  return file;
}

/** Platformatic DB listening on `port`, serving the data set's tables through its generated API. */
export async function startPlatformatic(root: string, ds: Dataset, port: number, log: (line: string) => void): Promise<ChildServer> {
  const dir = path.join(root, 'bench', '.platformatic');
  ensureInstalled(dir, log);
  const db = await copyDatabase(ds);
  return startServer({
    name: 'Platformatic DB',
    port,
    readyPath: '/',
    cwd: dir,
    args: [path.join(dir, 'start.mjs')],
    // Its config (platformatic.json) reads these two: PLT_-prefixed, as its placeholders require.
    env: { ...process.env, PLT_BENCH_PORT: String(port), PLT_BENCH_DB: db },
  });
}
