// Throw-away Redis servers for the tests and the benchmark: the system's `redis-server` (Debian's
// package), on a free port of 127.0.0.1, nothing written to disk, and the faults the fleet tests
// need: stop it, kill it, start it again on the same port, freeze it (SIGSTOP) and thaw it.
//
// Like tools/postgres-server.ts, the server runs under a tiny sh watchdog that holds our stdin
// pipe: when this Node process exits for any reason (even SIGKILL) the pipe closes and the
// watchdog thaws and kills redis-server, so a crashed test worker never leaves a server behind.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './net.js';

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

const READY_RE = /Ready to accept connections/;
const START_TIMEOUT_MS = 20_000;
const PORT_ATTEMPTS = 5;

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

// `exec 3<&0`: keep our pipe as fd 3; redis-server gets /dev/null and writes its log to stderr,
// so stdout carries its pid alone. The background loop reads
// the pipe until it closes (we exited, or stop() closed it), then thaws and kills the server.
const WATCHDOG = `
exec 3<&0
"$@" </dev/null 3<&- 1>&2 &
rs=$!
echo "$rs"
( while read -r _; do :; done; kill -CONT "$rs" 2>/dev/null; kill -KILL "$rs" 2>/dev/null ) <&3 &
w=$!
exec 3<&-
wait "$rs"
code=$?
kill "$w" 2>/dev/null
wait "$w" 2>/dev/null
exit "$code"
`;

interface Running {
  child: ChildProcess;
  pid: number;
  exited: Promise<void>;
}

/** Starts redis-server on a free port; throws if there is no redis-server (see findRedisServer). */
export async function startRedisServer(opts: StartRedisOptions = {}): Promise<RedisServer> {
  const exe = findRedisServer();
  if (!exe) throw new Error('redis-server is not installed (Debian: apt-get install redis-server), or set REDIS_SERVER to its path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-api-redis-'));
  let port = 0;
  let current: Running | null = null;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      current = await launch(exe, dir, port, opts.log);
      break;
    } catch (err) {
      if (!(err instanceof PortInUseError) || attempt >= PORT_ATTEMPTS) {
        fs.rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
  let frozen = false;
  const signal = (sig: NodeJS.Signals) => {
    if (!current) return;
    try {
      process.kill(current.pid, sig);
    } catch {
      // already gone
    }
  };
  const end = async (sig: NodeJS.Signals) => {
    if (!current) return;
    const r = current;
    if (frozen) signal('SIGCONT');
    frozen = false;
    signal(sig);
    await r.exited;
    r.child.stdin?.end();
    current = null;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: () => current?.pid ?? -1,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    async start() {
      if (current) return;
      current = await launch(exe, dir, port, opts.log);
    },
    freeze() {
      signal('SIGSTOP');
      frozen = true;
    },
    thaw() {
      signal('SIGCONT');
      frozen = false;
    },
    async close() {
      await end('SIGTERM');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

class PortInUseError extends Error {}

async function launch(exe: string, dir: string, port: number, log?: (line: string) => void): Promise<Running> {
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
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'redis-watchdog', exe, ...args], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin?.on('error', () => {}); // EPIPE if the watchdog is already gone
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  let text = '';
  let pidText = '';
  let pid = 0;
  const ready = new Promise<void>((resolve) => {
    const check = () => {
      if (pid && READY_RE.test(text)) resolve();
    };
    child.stdout!.on('data', (chunk: Buffer) => {
      pidText += chunk.toString('utf8');
      const m = /^(\d+)\n/.exec(pidText);
      if (m) pid = Number(m[1]);
      check();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      const s = chunk.toString('utf8');
      text = (text + s).slice(-8192);
      if (log) s.split('\n').filter(Boolean).forEach(log);
      check();
    });
  });
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    ready.then(() => 'ready' as const),
    exited.then(() => 'exited' as const),
    new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), START_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
  if (outcome === 'ready') return { child, pid, exited };
  child.stdin?.end();
  if (pid) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await exited;
  if (/Address already in use/.test(text)) throw new PortInUseError(`port ${port} in use`);
  throw new Error(`redis-server on port ${port} ${outcome === 'timeout' ? 'did not become ready' : 'exited'}:\n${text.slice(-2000)}`);
}
