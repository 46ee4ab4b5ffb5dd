// Real `clinic-api serve` processes for the fleet tests: several instances of the service on one
// database and one Redis, as a deployment runs them. Each is loaded first and released on a word
// (test/cli/start-together.ts), so that several can start at the same instant.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withFirstRunFile } from './first-run-file.js';
import { builtEntry } from './built-sources.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DEMO_KEY_RE = /curl -H "Authorization: Bearer ([a-z][a-z0-9]{1,15}_[A-Za-z0-9_-]{43})"/;
export const DEMO_PASSWORD_RE = /sign in as (\S+) \/ (\S+)/;

export type LogLine = Record<string, unknown> & { msg?: string };

export interface Instance {
  name: string;
  pid: number;
  /** its DATA_DIR (the SQLite database when no DATABASE_URL is given) */
  dataDir: string;
  /** set once listening */
  baseUrl: string;
  output(): string;
  logs(): LogLine[];
  /**
   * Resolves with the first log line that matches, among the lines from index `since` on (0:
   * from the start), or rejects after `ms` or when the process exits.
   */
  waitForLog(match: (line: LogLine) => boolean, ms?: number, what?: string, since?: number): Promise<LogLine>;
  exited: Promise<number | null>;
  signal(sig: NodeJS.Signals): void;
  kill(): void;
}

interface Pending {
  instance: Instance;
  ready: Promise<void>;
  go(): void;
}

const children = new Set<ChildProcess>();
const dirs: string[] = [];

/** Loads `clinic-api serve` with `env`; it serves once go() is called. */
function load(name: string, env: Record<string, string>): Pending {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-fleet-'));
  dirs.push(dataDir);
  const proc = spawn(process.execPath, builtEntry('test/cli/start-together.ts'), {
    cwd: ROOT,
    // Overload shedding off, as for the in-process test apps (helpers/app.ts TEST_ENV): three
    // instances, a database, Redis and the test on two shared cores can go a second
    // without a turn of an instance's event loop; under-pressure then counts the delay as
    // infinite and the instance answers 503 for the next second. A full run failed four of
    // fleet.test.ts's tests that way (/me, the dashboard, the usage counts), though none of them is about
    // overload; a test may still turn it on in `env`.
    env: {
      PATH: process.env.PATH ?? '',
      TZ: 'UTC',
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(proc);
  let text = '';
  proc.stdout!.setEncoding('utf8');
  proc.stderr!.setEncoding('utf8');
  const listeners = new Set<() => void>();
  const onText = (s: string) => {
    text += s;
    for (const l of listeners) l();
  };
  proc.stdout!.on('data', onText);
  proc.stderr!.on('data', onText);
  let done = false;
  const exited = new Promise<number | null>((resolve) =>
    proc.on('exit', (code) => {
      done = true;
      children.delete(proc);
      for (const l of listeners) l();
      resolve(code);
    }),
  );
  const logs = () => parseLogLines(text);
  const waitForLog = (match: (line: LogLine) => boolean, ms = 30_000, what = 'a log line', since = 0) =>
    new Promise<LogLine>((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`${name}: no ${what} within ${ms} ms; output:\n${text.slice(-3000)}`)), ms);
      const check = () => {
        const hit = logs().slice(since).find(match);
        if (hit) finish(null, hit);
        else if (done) finish(new Error(`${name} exited before ${what}; output:\n${text.slice(-3000)}`));
      };
      function finish(err: Error | null, line?: LogLine) {
        clearTimeout(timer);
        listeners.delete(check);
        if (err) reject(err);
        else resolve(line!);
      }
      listeners.add(check);
      check();
    });
  const instance: Instance = {
    name,
    pid: proc.pid!,
    dataDir,
    baseUrl: '',
    output: () => withFirstRunFile(text),
    logs,
    waitForLog,
    exited,
    signal: (sig) => {
      if (!done) proc.kill(sig);
    },
    kill: () => {
      if (!done) proc.kill('SIGKILL');
    },
  };
  const ready = new Promise<void>((resolve, reject) => {
    const check = () => {
      if (text.startsWith('ready\n') || text.includes('\nready\n')) {
        listeners.delete(check);
        resolve();
      } else if (done) reject(new Error(`${name} exited while loading:\n${text.slice(-3000)}`));
    };
    listeners.add(check);
    check();
  });
  return { instance, ready, go: () => proc.stdin!.write('go\n') };
}

/**
 * Starts one instance per name, all released at the same moment once every one has loaded, and
 * resolves when all of them listen.
 */
export async function startInstances(names: string[], env: Record<string, string>): Promise<Instance[]> {
  const pending = names.map((n) => load(n, env));
  await Promise.all(pending.map((p) => p.ready));
  for (const p of pending) p.go();
  return Promise.all(
    pending.map(async ({ instance }) => {
      const line = await instance.waitForLog((l) => l.msg === 'clinic-api listening', 60_000, '"clinic-api listening"');
      instance.baseUrl = String(line.address);
      return instance;
    }),
  );
}

/** Kills every instance still running and removes their DATA_DIRs (afterAll). */
export async function stopAllInstances(): Promise<void> {
  for (const c of children) c.kill('SIGKILL');
  children.clear();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

export function parseLogLines(text: string): LogLine[] {
  const out: LogLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as LogLine);
    } catch {
      // a line still being written
    }
  }
  return out;
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One request over a keep-alive-free connection. `from` is the client's address (any 127.x.y.z
 * reaches a server on 127.0.0.1), so that tests of per-address limits do not spend each other's.
 */
export function request(
  url: string,
  opts: { key?: string; from?: string; method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    const req = http.request(url, { method: opts.method ?? 'GET', headers, localAddress: opts.from, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** How many of `answers` have each status, e.g. { 200: 100, 429: 50 }. */
export function statusCounts(answers: Answer[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const a of answers) out[a.status] = (out[a.status] ?? 0) + 1;
  return out;
}

/** Requests sent one after another by `concurrency` loops until stop(); their statuses kept. */
export class Traffic {
  readonly statuses: number[] = [];
  readonly failures: string[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly url: string,
    private readonly key: string,
    private readonly concurrency = 4,
  ) {}

  start(): void {
    this.running = true;
    this.loops = Array.from({ length: this.concurrency }, async () => {
      while (this.running) {
        try {
          this.statuses.push((await request(this.url, { key: this.key })).status);
        } catch (err) {
          this.failures.push((err as Error).message);
        }
        for (const l of this.listeners) l();
      }
    });
  }

  /** Resolves when `n` more requests have been answered (or have failed). */
  more(n: number, ms = 30_000): Promise<void> {
    const target = this.statuses.length + this.failures.length + n;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(
          new Error(
            `${n} more requests did not complete within ${ms} ms (${this.statuses.length + this.failures.length - target + n} did)`,
          ),
        );
      }, ms);
      const check = () => {
        if (this.statuses.length + this.failures.length < target) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
      check();
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }
}
