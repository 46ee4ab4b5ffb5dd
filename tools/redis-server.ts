// Throw-away Redis servers for the tests and the benchmark: the system's `redis-server` (Debian's
// package), on a free port of 127.0.0.1, nothing written to disk, and the faults the fleet tests
// need: stop it, kill it, start it again on the same port, freeze it (SIGSTOP) and thaw it.
//
// Like postgres, the server runs under the sh watchdog of tools/watchdog.ts: when this Node process
// exits for any reason (even SIGKILL) our pipe closes and the watchdog thaws and kills
// redis-server and deletes its temp dir, so a crashed test worker never leaves a server behind.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onFreePort } from './net.js';
import { LogTail, signal, startWatched, type Watched, type WatchdogSpec } from './watchdog.js';

export interface RedisServer {
  /** redis://127.0.0.1:PORT */
  url: string;
  port: number;
  /** redis-server's pid (changes when it is started again) */
  pid(): number;
  /** Stops it (SIGTERM; thawed first if frozen). Its port stays reserved for start(). */
  stop(): Promise<void>;
  /** Kills it at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty (nothing is persisted). */
  start(): Promise<void>;
  /** SIGSTOP: the process stays, its sockets stay open, nothing is answered. */
  freeze(): void;
  /** SIGCONT after freeze(). */
  thaw(): void;
  /** Stops it for good. */
  close(): Promise<void>;
}

export interface StartRedisOptions {
  /** Receives every line the server writes. Without it nothing is printed. */
  log?: (line: string) => void;
}

/**
 * The redis-server executable (REDIS_SERVER, else `redis-server` on PATH, else Debian's
 * /usr/bin/redis-server), or null when there is none: the caller says so and skips.
 */
export function findRedisServer(): string | null {
  const candidates = [
    process.env['REDIS_SERVER'],
    ...(process.env['PATH'] ?? '')
      .split(':')
      .filter(Boolean)
      .map((d) => path.join(d, 'redis-server')),
    '/usr/bin/redis-server',
  ];
  for (const c of candidates) {
    if (!c) continue;
    try {
      fs.accessSync(c, fs.constants.X_OK);
      if (spawnSync(c, ['--version'], { encoding: 'utf8' }).status === 0) return c;
    } catch {
      // not there
    }
  }
  return null;
}

/**
 * The service's rate-limit script's calls in Redis' `INFO commandstats` text: every script call
 * (EVALSHA, or EVAL after NOSCRIPT) but the fleet's heartbeats (src/redis/scripts.ts), which run
 * one ZCARD each, and nothing else does (Redis counts the commands scripts run).
 */
export function gcraCalls(commandstats: string): number {
  const calls = (re: RegExp) => [...commandstats.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
  return calls(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm) - calls(/^cmdstat_zcard:calls=(\d+)/gm);
}

/** Starts redis-server on a free port; throws if there is no redis-server (see findRedisServer). */
export async function startRedisServer(opts: StartRedisOptions = {}): Promise<RedisServer> {
  const exe = findRedisServer();
  if (!exe) throw new Error('redis-server is not installed (Debian: apt-get install redis-server), or set REDIS_SERVER to its path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-api-redis-'));
  const log = new LogTail(opts.log);
  let port = 0;
  let current: Watched | null = null;
  try {
    current = await onFreePort((p) => launch(exe, dir, (port = p), log));
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  let frozen = false;
  const end = async (sig: NodeJS.Signals) => {
    if (!current) return;
    const r = current;
    if (frozen) signal(r.pid(), 'SIGCONT');
    frozen = false;
    signal(r.pid(), sig);
    await r.exited;
    current = null;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: () => current?.pid() ?? -1,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    async start() {
      if (current) return;
      current = await launch(exe, dir, port, log);
    },
    freeze() {
      signal(current?.pid(), 'SIGSTOP');
      frozen = true;
    },
    thaw() {
      signal(current?.pid(), 'SIGCONT');
      frozen = false;
    },
    async close() {
      await end('SIGTERM');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function launch(exe: string, dir: string, port: number, log: LogTail): Promise<Watched> {
  // No persistence (no RDB snapshots, no AOF), loopback only, logs on stdout.
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--logfile',
    '',
    '--loglevel',
    'notice',
    '--protected-mode',
    'yes',
  ];
  const spec: WatchdogSpec = {
    name: 'redis-watchdog',
    command: [exe, ...args],
    dir,
    stopSignal: 'KILL',
    ready: /Ready to accept connections/,
    portInUse: /Address already in use/,
    startTimeoutMs: 20_000,
    what: `redis-server (port ${port})`,
    log,
    options: { cwd: dir },
  };
  // Not by closing the pipe: the watchdog would delete the dir, which another port's attempt reuses.
  return startWatched(spec, async (server) => {
    server.killAll();
    await server.exited;
  });
}
