// The CLI run in-process through main(argv, io), as bin/clinic-api.js runs it, with captured
// stdout/stderr and a DATA_DIR of the test's (the embedded SQLite database). Not a test file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  dataDir: string;
  stdin?: string;
  env?: Record<string, string>;
  /** The command's clock (ms). */
  now?: number;
}

/** Runs `clinic-api ...argv`; LOG_LEVEL silent unless env says otherwise. */
export async function runCli(argv: string[], opts: RunOptions): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const out = new PassThrough();
  const err = new PassThrough();
  out.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  err.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const code = await main(argv, {
    stdout: out,
    stderr: err,
    stdin: Readable.from(opts.stdin === undefined ? [] : [Buffer.from(opts.stdin)]),
    env: { DATA_DIR: opts.dataDir, LOG_LEVEL: 'silent', ...opts.env },
    now: () => opts.now ?? Date.now(),
  });
  return { code, stdout, stderr };
}

/** A runtime on the same DATA_DIR, to look at what the commands did. */
export async function withRuntimeAt<T>(dataDir: string, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const rt = await openRuntime(loadConfig({ DATA_DIR: dataDir }), { logTo: false });
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}

/** Temporary directories, removed by cleanup(). */
export function tempDirs(prefix: string) {
  const made: string[] = [];
  return {
    make(): string {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    cleanup(): void {
      for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
