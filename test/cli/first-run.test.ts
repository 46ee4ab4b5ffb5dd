// First run (the issue: "`npm start` on an empty DATA_DIR migrates, creates a demo clinic with
// realistic Spanish data, creates one demo key and prints a ready-to-paste curl line. Later
// starts never print a key again."). serve() runs for real on a free port; requests go over TCP.
// The key and the demo owner's password are printed to a terminal only: when standard output is
// not one (Docker, systemd, a pipe: a log that is kept), they go to DATA_DIR/first-run-credentials.txt,
// mode 0600, and standard output says where.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ESTADOS, RESULTADOS } from '../../src/domain/records.js';
import { openRuntime } from '../../src/runtime.js';
import { serve } from '../../src/server.js';
import { dialects, newPgDatabaseUrl } from '../helpers/db.js';
import { freePort } from '../../tools/net.js';
import { builtEntry } from '../helpers/built-sources.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CURL_RE = /curl -H "Authorization: Bearer (svc_[A-Za-z0-9_-]{43})" "(http:\/\/127\.0\.0\.1:(\d+)\/api\/v1\/citas\?limit=5)"/;
const WIDE = 'desde=2000-01-01&hasta=2099-12-31';

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-first-run-'));
  tempDirs.push(dir);
  return dir;
}

interface Started {
  output: () => string;
  close: () => Promise<void>;
}

const running: Started[] = [];
const signalListeners = { SIGTERM: process.listeners('SIGTERM'), SIGINT: process.listeners('SIGINT') };

/** serve() with captured output (a terminal's unless `terminal` is false); closed (and its signal handlers removed) after each test. */
async function start(env: Record<string, string>, terminal = true): Promise<Started> {
  let text = '';
  const out = Object.assign(new PassThrough(), { isTTY: terminal });
  out.on('data', (c: Buffer) => {
    text += c.toString();
  });
  const close = await serve(loadConfig({ HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env }), out);
  const started = { output: () => text, close };
  running.push(started);
  return started;
}

afterEach(async () => {
  for (const s of running.splice(0)) await s.close();
  // serve() installs process.once handlers for SIGTERM/SIGINT; drop the ones it added.
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    for (const l of process.listeners(sig)) if (!signalListeners[sig].includes(l)) process.removeListener(sig, l);
  }
});
afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function get(url: string, key?: string) {
  const res = await fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

describe('first run through serve()', () => {
  let dataDir: string;
  let key: string;
  let firstOutput: string;

  beforeAll(() => {
    dataDir = tempDir();
  });

  it('on an empty DATA_DIR: demo clinic, one key, and a curl line that works against the real port', async () => {
    const s = await start({ PORT: '0', DATA_DIR: dataDir });
    firstOutput = s.output();
    const m = CURL_RE.exec(firstOutput);
    expect(m, firstOutput).not.toBeNull();
    key = m![1]!;
    const url = m![2]!;
    expect(Number(m![3])).toBeGreaterThan(0);
    expect(firstOutput).toContain(`\n  ${key}\n`); // the key on its own line, to copy
    expect(firstOutput).toMatch(/First run: created the demo clinic "[^"]+" \(200 clientas, 1000 citas, 500 llamadas\)/);
    expect(firstOutput).toMatch(/shown only now/);

    // What the curl line does, with fetch.
    const res = await get(url, key);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const citas = res.body.citas as { fecha_hora: string; moneda: string; estado: string }[];
    expect(citas).toHaveLength(5);
    expect(res.body.total as number).toBeGreaterThan(5); // there are appointments in the next 30 days
    for (const c of citas) {
      expect(c.fecha_hora).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0[12]:00$/);
      expect(c.moneda).toBe('EUR');
    }
    // And without the key, nothing.
    expect((await get(url)).status).toBe(401);

    // The key is stored only as HMAC(pepper, key), the pepper generated into DATA_DIR with mode 0600.
    const pepperFile = path.join(dataDir, 'api-key-pepper');
    expect(fs.statSync(pepperFile).mode & 0o777).toBe(0o600);
    const pepper = fs.readFileSync(pepperFile, 'utf8').trim();
    expect(pepper.length).toBeGreaterThanOrEqual(32);
    const rt = await openRuntime(loadConfig({ DATA_DIR: dataDir }), { logTo: false });
    try {
      const rows = await rt.database.db.selectFrom('api_keys').selectAll().execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.key_hash).toBe(createHmac('sha256', pepper).update(key).digest('hex'));
      expect(JSON.stringify(rows)).not.toContain(key);
      expect(await rt.database.db.selectFrom('clinics').select(['name', 'timezone', 'currency', 'plan']).execute()).toEqual([
        expect.objectContaining({ timezone: 'Europe/Madrid', currency: 'EUR' }),
      ]);
    } finally {
      await rt.close();
    }

    // Realistic data: every estado and resultado, VIPs and non-VIPs, unknown callers, Spanish names and phones.
    const base = url.replace(/\/api\/v1\/citas.*$/, '');
    for (const estado of ESTADOS) {
      const r = await get(`${base}/api/v1/citas?${WIDE}&estado=${estado}&limit=1`, key);
      expect(r.status).toBe(200);
      expect(r.body.total as number, estado).toBeGreaterThan(0);
    }
    for (const resultado of RESULTADOS) {
      const r = await get(`${base}/api/v1/llamadas?${WIDE}&resultado=${resultado}&limit=1`, key);
      expect(r.body.total as number, resultado).toBeGreaterThan(0);
    }
    expect((await get(`${base}/api/v1/clientas?vip=true&limit=1`, key)).body.total as number).toBeGreaterThan(0);
    expect((await get(`${base}/api/v1/clientas?vip=false&limit=1`, key)).body.total as number).toBeGreaterThan(0);
    const calls = (await get(`${base}/api/v1/llamadas?${WIDE}&limit=500`, key)).body.llamadas as { cliente_nombre: string | null }[];
    expect(calls.some((c) => c.cliente_nombre === null)).toBe(true);
    expect(calls.some((c) => c.cliente_nombre !== null)).toBe(true);
    const clientas = (await get(`${base}/api/v1/clientas?limit=500`, key)).body.clientas as { nombre: string; telefono: string }[];
    expect(clientas).toHaveLength(200);
    expect(clientas.some((c) => /[áéíóúñÁÉÍÓÚÑ]/.test(c.nombre))).toBe(true);
    expect(clientas.filter((c) => c.telefono.startsWith('+34')).length).toBeGreaterThan(100);
    // Data around today: some appointments already past, some still to come.
    const past = await get(
      `${base}/api/v1/citas?desde=2000-01-01&hasta=${new Date(Date.now() - 86_400_000 * 2).toISOString().slice(0, 10)}&limit=1`,
      key,
    );
    expect(past.body.total as number).toBeGreaterThan(0);
  });

  it('a later start on the same DATA_DIR prints no key, keeps the pepper, and the first key still works', async () => {
    expect(key).toBeDefined();
    const pepperBefore = fs.readFileSync(path.join(dataDir, 'api-key-pepper'), 'utf8');
    const port = await freePort();
    const s = await start({ PORT: String(port), DATA_DIR: dataDir });
    // Where things are, and nothing secret (test/cli/start-up.test.ts follows the URLs).
    const base = `http://127.0.0.1:${port}`;
    expect(s.output()).toBe(
      [
        `clinic-api is serving ${base}`,
        `  Dashboard (Settings > API):  ${base}/dashboard`,
        `  API reference:               ${base}/docs`,
        `  OpenAPI document:            ${base}/api/v1/openapi.json`,
        `  MCP server (AI assistants):  ${base}/mcp`,
        '',
      ].join('\n'),
    );
    expect(s.output()).not.toContain('svc_');
    expect(fs.readFileSync(path.join(dataDir, 'api-key-pepper'), 'utf8')).toBe(pepperBefore);
    const res = await get(`http://127.0.0.1:${port}/api/v1/clientas?limit=1`, key);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(200); // no second demo clinic's data, no duplicates
    await s.close();
    running.splice(running.indexOf(s), 1);
    // Closed means closed: nothing listens on the port any more.
    await expect(fetch(`http://127.0.0.1:${port}/api/v1/clientas`)).rejects.toThrow();
  });

  it('not on a terminal: the key and the password go to a file only this user can read, and stdout says where, never them', async () => {
    const dir = tempDir();
    const s = await start({ PORT: '0', DATA_DIR: dir }, false);
    const file = path.join(dir, 'first-run-credentials.txt');
    const printed = s.output();
    expect(printed).toMatch(/First run: created the demo clinic "[^"]+" \(200 clientas, 1000 citas, 500 llamadas\)/);
    expect(printed).toContain(`are in ${file},`);
    expect(printed).toContain('Dashboard (Settings > API):  http://127.0.0.1:');
    expect(printed).toMatch(/MCP server \(AI assistants\): {2}http:\/\/127\.0\.0\.1:\d+\/mcp\n/);
    // the clinic's id, which every CLI command asks for, is no secret
    const clinicId = /Its clinic id \(the CLI's --clinic\): ([0-9a-f-]{36})\n/.exec(printed)?.[1];
    expect(clinicId).toBeDefined();
    expect(fs.readFileSync(file, 'utf8')).toContain(`Its clinic id (the CLI's --clinic): ${clinicId}\n`);
    expect(printed).not.toContain('svc_');
    expect(printed).not.toMatch(/sign in as/);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const credentials = fs.readFileSync(file, 'utf8');
    const m = CURL_RE.exec(credentials);
    expect(m, credentials).not.toBeNull();
    expect(credentials).toMatch(/sign in as owner@demo\.clinic \/ (\S+) {2}\(shown only now/);
    const password = /sign in as owner@demo\.clinic \/ (\S+)/.exec(credentials)![1]!;
    expect(printed).not.toContain(password);
    expect((await get(m![2]!, m![1]!)).status).toBe(200);
  });

  it('with API_KEY_PEPPER set, no pepper file is written and the printed key works', async () => {
    const dir = tempDir();
    const s = await start({ PORT: '0', DATA_DIR: dir, API_KEY_PEPPER: 'operator-pepper-0123456789abcdefghijklmnop' });
    const m = CURL_RE.exec(s.output());
    expect(m).not.toBeNull();
    expect(fs.existsSync(path.join(dir, 'api-key-pepper'))).toBe(false);
    expect((await get(m![2]!, m![1]!)).status).toBe(200);
  });
});

describe('first run as a process (what `npm start` does)', () => {
  let child: ChildProcess | null = null;

  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    child = null;
  });

  it('stdout a pipe: says where the key is, never prints it; the file (mode 0600) holds the curl line; exits 0 on SIGTERM', async () => {
    const dir = tempDir();
    const proc = spawn(process.execPath, [...builtEntry('test/cli/run-cli.ts'), 'serve'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    let stdout = '';
    let stderr = '';
    proc.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    await new Promise<void>((resolve, reject) => {
      proc.stdout!.on('data', (c: Buffer) => {
        stdout += c.toString();
        if (stdout.includes('OpenAPI document:')) resolve();
      });
      void exited.then((code) => reject(new Error(`serve exited with ${code} before printing where to go:\n${stdout}\n${stderr}`)));
    });
    const file = path.join(dir, 'first-run-credentials.txt');
    expect(stdout).toContain(file);
    expect(stdout).not.toContain('svc_');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const m = CURL_RE.exec(fs.readFileSync(file, 'utf8'))!;
    expect(m).not.toBeNull();
    const res = await get(m[2]!, m[1]!);
    expect(res.status).toBe(200);
    expect((res.body.citas as unknown[]).length).toBe(5);
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

describe("the first start's log lines (LOG_FORMAT)", () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  /** `clinic-api serve` on an empty DATA_DIR; its stdout once it has said it listens, and its exit code after SIGTERM. */
  async function firstStart(env: Record<string, string>): Promise<{ stdout: string; code: number | null }> {
    const proc = spawn(process.execPath, [...builtEntry('test/cli/run-cli.ts'), 'serve'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: tempDir(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(proc);
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    let stdout = '';
    let stderr = '';
    proc.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    await new Promise<void>((resolve, reject) => {
      proc.stdout!.on('data', (c: Buffer) => {
        stdout += c.toString();
        if (stdout.includes('clinic-api listening')) resolve();
      });
      void exited.then((code) => reject(new Error(`serve exited with ${code} before listening:\n${stdout}\n${stderr}`)));
    });
    proc.kill('SIGTERM');
    return { stdout, code: await exited };
  }

  it('pretty (what a terminal gets): the generated-pepper warning reads like the banner around it, no JSON anywhere', async () => {
    const { stdout, code } = await firstStart({ LOG_FORMAT: 'pretty' });
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines.filter((l) => l.trimStart().startsWith('{'))).toEqual([]);
    const warning = lines.findIndex((l) => l.includes('API_KEY_PEPPER is not set'));
    expect(lines[warning]).toMatch(
      /^\d\d:\d\d:\d\d warn {2}API_KEY_PEPPER is not set: generated one into DATA_DIR\/api-key-pepper; back it up/,
    );
    // Before the banner, which follows unchanged.
    expect(lines.findIndex((l) => l.startsWith('First run: created the demo clinic'))).toBeGreaterThan(warning);
    expect(lines.find((l) => l.includes('clinic-api listening'))).toMatch(/^\d\d:\d\d:\d\d info {2}clinic-api listening {2}database=/);
    // One line says where it listens (not Fastify's own "Server listening at" beside it).
    expect(lines.filter((l) => /listening/i.test(l))).toHaveLength(1);
  });

  it('auto without a terminal (a container, a pipe): every log line is one JSON object, as collectors read them', async () => {
    const { stdout, code } = await firstStart({});
    expect(code).toBe(0);
    const logLines = stdout.split('\n').filter((l) => l.startsWith('{'));
    const warning = logLines.map((l) => JSON.parse(l) as { level: number; msg: string }).find((o) => o.msg.includes('API_KEY_PEPPER'));
    expect(warning).toMatchObject({ level: 40, msg: expect.stringMatching(/^API_KEY_PEPPER is not set/) });
    expect(stdout).not.toMatch(/^\d\d:\d\d:\d\d warn/m);
  });
});

describe.each(dialects())('several instances starting at once on one empty %s database', (dialect) => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  /** An instance that has loaded everything and waits for the word (start-together.ts). */
  function instance(env: Record<string, string>) {
    const proc = spawn(process.execPath, builtEntry('test/cli/start-together.ts'), {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(proc);
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
    });
    proc.stderr!.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    const seen = (text: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (out.includes(text)) resolve();
        };
        proc.stdout!.on('data', check);
        check();
        void exited.then((code) => reject(new Error(`instance exited with ${code} before "${text}":\n${out}`)));
      });
    return { proc, exited, output: () => out, ready: seen('ready\n'), listening: () => seen('clinic-api listening') };
  }

  it('make exactly one demo clinic, owner and key, print one banner, and all serve', async () => {
    // SQLite: the instances share DATA_DIR (clinic.db and the generated pepper). The start-up lock
    // (Database.exclusive) makes them migrate and check for clinics one at a time: SQLite's single
    // writer alone would not, since each checks before it writes. PostgreSQL: an advisory lock.
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      DATA_DIR: tempDir(),
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    };
    if (dialect === 'postgres') {
      env.DATABASE_URL = await newPgDatabaseUrl();
      env.API_KEY_PEPPER = 'several-instances-pepper-0123456789abcdef';
    }
    const all = [instance(env), instance(env), instance(env)];
    await Promise.all(all.map((i) => i.ready));
    for (const i of all) i.proc.stdin!.write('go\n');
    await Promise.all(all.map((i) => i.listening()));

    const banners = all.filter((i) => i.output().includes('First run: created the demo clinic'));
    expect(banners, all.map((i) => i.output()).join('\n---\n')).toHaveLength(1);
    // Their stdout is a pipe: the key is in the file the banner names.
    for (const i of all) expect(i.output()).not.toContain('svc_');
    const key = CURL_RE.exec(fs.readFileSync(path.join(env.DATA_DIR!, 'first-run-credentials.txt'), 'utf8'))![1]!;
    for (const i of all) i.proc.kill('SIGTERM');
    expect(await Promise.all(all.map((i) => i.exited))).toEqual([0, 0, 0]);

    const rt = await openRuntime(loadConfig(env), { logTo: false });
    try {
      const count = async (table: 'clinics' | 'users' | 'api_keys') =>
        Number(
          (
            await rt.database.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      expect([await count('clinics'), await count('users'), await count('api_keys')]).toEqual([1, 1, 1]);
      expect(await rt.keys.verify(key)).not.toBeNull();
    } finally {
      await rt.close();
    }
  });
});
