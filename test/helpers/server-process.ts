// `clinic-api serve` as a real process (from the sources, through test/cli/run-cli.ts as
// built-sources.ts compiled it for the run), for the tests that need what only a process has:
// signals, exit codes, sockets, its real log output.
// It starts on an empty database, so the first run prints the demo key, which is read here; or on
// a DATA_DIR (or DATABASE_URL) the test prepared, with the key the test made there.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withFirstRunFile } from './first-run-file.js';
import { pause } from './wait.js';
import { builtEntry } from './built-sources.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KEY_RE = /Authorization: Bearer ([a-z][a-z0-9]{1,15}_[A-Za-z0-9_-]{43})"/;
/** Printed by every start, first or not. */
const PORT_RE = /Dashboard \(Settings > API\): +http:\/\/[^:]+:(\d+)\//;

export interface ServerProcess {
  pid: number;
  port: number;
  baseUrl: string;
  /** The demo clinic's key, from the first run's banner (or the one the test passed). */
  key: string;
  /** Its DATA_DIR (the embedded database is clinic.db in it). */
  dataDir: string;
  /** Everything the process wrote so far (stdout and stderr), as text, and the first run's credentials file it names. */
  output(): string;
  /** The JSON log lines written so far, parsed. */
  logs(): Record<string, unknown>[];
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
  signal(sig: NodeJS.Signals): void;
  /** SIGKILL if still running, and removes its DATA_DIR (unless the test passed its own). */
  kill(): Promise<void>;
}

export interface StartServerOptions {
  /** Variables beyond the defaults (a fresh DATA_DIR, PORT 0, 127.0.0.1, LOG_LEVEL info). */
  env?: Record<string, string>;
  readyTimeoutMs?: number;
  /**
   * A database the test prepared (DATA_DIR in `env`, or DATABASE_URL) and a key it made there
   * (any string if it needs none): no first run, so no banner with a key. A DATA_DIR given in
   * `env` is the test's, and stays.
   */
  key?: string;
  /** Node options before the CLI's, e.g. `--import` of test/cli/record-loads.mjs. */
  nodeArgs?: string[];
}

export async function startServerProcess(opts: StartServerOptions = {}): Promise<ServerProcess> {
  const ownDataDir = opts.env?.DATA_DIR === undefined;
  const dataDir = opts.env?.DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-server-'));
  const env = { PATH: process.env.PATH ?? '', TZ: 'UTC', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...opts.env };
  const child: ChildProcess = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...builtEntry('test/cli/run-cli.ts'), 'serve'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (s: string) => {
    text += s;
  });
  child.stderr!.on('data', (s: string) => {
    text += s;
  });
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  const kill = async () => {
    if (!done) {
      child.kill('SIGKILL');
      await exited;
    }
    if (ownDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  for (;;) {
    const key = opts.key ?? KEY_RE.exec(withFirstRunFile(text))?.[1];
    const portMatch = PORT_RE.exec(text);
    if (key && portMatch && text.includes('clinic-api listening')) {
      const port = Number(portMatch[1]);
      return {
        pid: child.pid!,
        port,
        baseUrl: `http://127.0.0.1:${port}`,
        key,
        dataDir,
        output: () => withFirstRunFile(text),
        logs: () => parseLogLines(text),
        exited,
        alive: () => !done,
        signal: (sig) => {
          if (!done) child.kill(sig);
        },
        kill,
      };
    }
    if (done || Date.now() > deadline) {
      await kill();
      throw new Error(`clinic-api serve ${done ? 'exited' : 'did not start'} before it was ready:\n${text.slice(-4000)}`);
    }
    await pause(50); // the poll's pace
  }
}

export function parseLogLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line cut in the middle (still being written)
    }
  }
  return out;
}
