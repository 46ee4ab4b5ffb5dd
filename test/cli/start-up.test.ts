// Start-up failures name their cause and their fix (README, "Start-up"): an unreachable database
// names DATABASE_URL (never its password), a taken port names PORT, an unwritable data directory
// names DATA_DIR; the process exits non-zero with one line on stderr and no stack trace. A start
// that works prints where the dashboard and the API docs are. Real processes (`clinic-api serve`
// from the sources, as `npm start` runs it), a real occupied port, a real closed port, real files
// in the way; plus the same errors from other commands in-process, and from a real PostgreSQL.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { runCli, tempDirs } from './in-process.js';
import { builtEntry } from '../helpers/built-sources.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PEPPER = 'start-up-test-pepper-0123456789abcdefghij';
const PASSWORD = 'S3cret-p@ss/w:rd';
const STACK_RE = /^\s+at .+:\d+(:\d+)?\)?$/m;

const dirs = tempDirs('clinic-start-up-');
afterAll(() => dirs.cleanup());

/** A port that was free a moment ago; nothing listens on it now. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Proc {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Resolves when stdout holds `text`; rejects if the process exits first. */
  printed: (text: string) => Promise<void>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** `clinic-api serve` as its own process, with only the variables given (and PATH). */
function serve(env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [...builtEntry('test/cli/run-cli.ts'), 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const printed = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (out.includes(text)) resolve();
      };
      child.stdout!.on('data', check);
      check();
      void exited.then((code) => reject(new Error(`serve exited with ${code} before printing "${text}":\n${out}\n${err}`)));
    });
  return { child, stdout: () => out, stderr: () => err, exited, printed };
}

/** A failed start: exit code 1, nothing but one line on stderr, no stack anywhere. */
async function failedStart(p: Proc): Promise<string> {
  expect(await p.exited).toBe(1);
  const stderr = p.stderr();
  expect(stderr.split('\n').filter(Boolean), stderr).toHaveLength(1);
  expect(stderr).toMatch(/^clinic-api: /);
  expect(stderr + p.stdout()).not.toMatch(STACK_RE);
  expect(p.stdout()).not.toMatch(/First run|svc_/);
  return stderr;
}

describe('the database cannot be reached', () => {
  it('serve names DATABASE_URL, where it points and what to do, never the password', async () => {
    const port = await closedPort();
    const url = `postgres://clinic:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/clinic`;
    const stderr = await failedStart(serve({ DATABASE_URL: url, API_KEY_PEPPER: PEPPER, PORT: '0', DATA_DIR: dirs.make() }));
    expect(stderr).toContain(`DATABASE_URL (postgres://clinic:***@127.0.0.1:${port}/clinic)`);
    expect(stderr).toContain(`connection refused: nothing listens on 127.0.0.1:${port}`);
    expect(stderr).toMatch(/Start PostgreSQL, or correct the host and port in DATABASE_URL/);
    for (const secret of [PASSWORD, encodeURIComponent(PASSWORD), 'S3cret']) expect(stderr).not.toContain(secret);
  });

  it('so do the other commands (in-process), with exit code 1', async () => {
    const port = await closedPort();
    const url = `postgresql://clinic:${encodeURIComponent(PASSWORD)}@localhost:${port}/clinic?sslmode=disable`;
    for (const argv of [['migrate'], ['clinics', 'list'], ['keys', 'list', '--clinic', 'x']]) {
      const r = await runCli(argv, { dataDir: dirs.make(), env: { DATABASE_URL: url, API_KEY_PEPPER: PEPPER } });
      expect(r.code, argv.join(' ')).toBe(1);
      expect(r.stderr).toContain(`DATABASE_URL (postgresql://clinic:***@localhost:${port}/clinic?…)`);
      expect(r.stderr).toContain('connection refused');
      expect(r.stderr).not.toContain('S3cret');
      expect(r.stdout).toBe('');
    }
  });
});

describe.each(dialects().filter((d) => d === 'postgres'))('a real %s server that refuses', () => {
  const admin = () => new URL(inject('pgAdminUrl')!);

  it('a database that does not exist is named, with how to create it', async () => {
    const url = admin();
    url.pathname = '/no_such_clinic_db';
    const r = await runCli(['migrate'], { dataDir: dirs.make(), env: { DATABASE_URL: url.href, API_KEY_PEPPER: PEPPER } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /DATABASE_URL \(postgres:\/\/[^:]+:\*\*\*@127\.0\.0\.1:\d+\/no_such_clinic_db\): the database "no_such_clinic_db" does not exist\. Create it \(e\.g\. createdb no_such_clinic_db\)/,
    );
    expect(r.stderr).not.toContain(decodeURIComponent(admin().password));
  });

  it('a wrong password is called so, and neither password is shown', async () => {
    const url = admin();
    url.password = encodeURIComponent(PASSWORD);
    const r = await runCli(['migrate'], { dataDir: dirs.make(), env: { DATABASE_URL: url.href, API_KEY_PEPPER: PEPPER } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the server refused user "[^"]+" \(wrong user name or password/);
    expect(r.stderr).toMatch(/Correct the user name and password in DATABASE_URL/);
    expect(r.stderr).not.toContain('S3cret');
    expect(r.stderr).not.toContain(decodeURIComponent(admin().password));
  });
});

describe('the port is taken', () => {
  it('serve names PORT and exits 1 before making the demo; once the port is free, the next start makes it and prints it', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    const dataDir = dirs.make();
    try {
      const stderr = await failedStart(serve({ PORT: String(port), DATA_DIR: dataDir }));
      expect(stderr).toContain(`PORT ${port} is already in use on 127.0.0.1`);
      expect(stderr).toMatch(/Stop it, or set PORT to a free port/);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }

    // The demo was not made (its key and password would have been shown to no one): this start makes it.
    const p = serve({ PORT: String(port), DATA_DIR: dataDir });
    await p.printed('OpenAPI document:');
    expect(p.stdout()).toMatch(/First run: created the demo clinic/);
    // Standard output is a pipe here, not a terminal: the key and password are in a file of DATA_DIR.
    expect(p.stdout()).not.toContain('svc_');
    const credentials = fs.readFileSync(path.join(dataDir, 'first-run-credentials.txt'), 'utf8');
    expect(credentials).toMatch(/Your demo API key .*\n {2}svc_/);
    expect(credentials).toMatch(/sign in as owner@demo\.clinic \/ \S+ {2}\(shown only now/);
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);

    // Every later start says where the dashboard and the docs are, and those addresses answer.
    const later = serve({ PORT: String(port), DATA_DIR: dataDir });
    await later.printed('OpenAPI document:');
    const base = `http://127.0.0.1:${port}`;
    expect(later.stdout()).toContain(`Dashboard (Settings > API):  ${base}/dashboard\n`);
    expect(later.stdout()).toContain(`API reference:               ${base}/docs\n`);
    expect(later.stdout()).toContain(`OpenAPI document:            ${base}/api/v1/openapi.json\n`);
    expect(later.stdout()).not.toMatch(/First run|svc_/);
    const dashboard = await fetch(`${base}/dashboard`);
    expect(dashboard.status).toBe(200);
    expect(dashboard.url).toBe(`${base}/dashboard/sign-in`);
    expect((await fetch(`${base}/api/v1/openapi.json`)).status).toBe(200);
    later.child.kill('SIGTERM');
    expect(await later.exited).toBe(0);
  });
});

describe('an error the start-up does not explain', () => {
  it('is one line with its code, never a stack (a damaged database file)', async () => {
    const dir = dirs.make();
    fs.writeFileSync(path.join(dir, 'clinic.db'), 'this is not a SQLite database, and it is long enough to have a header\n'.repeat(10));
    const r = await runCli(['clinics', 'list'], { dataDir: dir, env: { API_KEY_PEPPER: PEPPER } });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe('clinic-api: unexpected error: file is not a database (SQLITE_NOTADB)\n');
    expect(r.stderr).not.toMatch(STACK_RE);
    expect(r.stdout).toBe('');
  });
});

describe('DATA_DIR cannot be written', () => {
  // Tests run as root, which ignores permission bits: a file where the directory should be (or
  // above it) is what no user can write through.
  it('serve names DATA_DIR and the path when DATA_DIR is a file', async () => {
    const file = path.join(dirs.make(), 'data');
    fs.writeFileSync(file, 'not a directory\n');
    const stderr = await failedStart(serve({ PORT: '0', DATA_DIR: file }));
    expect(stderr).toContain(`DATA_DIR (${file}) cannot be written`);
    expect(stderr).toMatch(/Set DATA_DIR to a directory this user may write/);
  });

  it('and when a file is in the way above it, whether the pepper or the database meets it first (in-process)', async () => {
    const file = path.join(dirs.make(), 'occupied');
    fs.writeFileSync(file, 'x');
    const under = path.join(file, 'data');
    for (const env of [{}, { API_KEY_PEPPER: PEPPER }] as Record<string, string>[]) {
      for (const argv of [['serve'], ['migrate'], ['clinics', 'list']]) {
        const r = await runCli(argv, { dataDir: under, env });
        expect(r.code, `${argv.join(' ')} ${JSON.stringify(env)}: ${r.stderr}`).toBe(1);
        expect(r.stderr).toContain(`DATA_DIR (${under}) cannot be written: a file is in the way`);
        expect(r.stdout).toBe('');
      }
    }
    expect(fs.readFileSync(file, 'utf8')).toBe('x');
  });
});
