// The README runs as written: every curl line of "Try it" returns data on the demo of a fresh
// first start. Once for real (`clinic-api serve` on an empty DATA_DIR, the lines run by /bin/sh
// with the machine's `date` and curl, only KEY and the port filled in), and once for each day of
// a week at various hours (the demo in-process at that instant, the shell's dates computed as
// `date` would print them there), because the demo's data moves with today. The examples start
// from a BASE variable, never a hard-coded address. Also: the README
// says which Node to install, and nothing in it or docs/ points outside the repository.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { firstRun } from '../../src/services/first-run.js';
import { addDays, todayIn } from '../../src/time.js';
import { tempDirs } from '../cli/in-process.js';
import { appFor } from '../helpers/app.js';
import { testRuntime } from '../helpers/runtime.js';
import { builtEntry } from '../helpers/built-sources.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
/** The examples' own variable for the service's address (README "Try it" sets it first). */
const BASE_VAR = '$BASE';
const LIST_FIELD: Record<string, string> = { citas: 'citas', clientas: 'clientas', llamadas: 'llamadas' };

/** The ```sh block of the "Try it" section. */
function tryItBlock(): string[] {
  const section = README.slice(README.indexOf('## Try it'));
  const m = /```sh\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('README.md: no ```sh block under "## Try it"');
  return m[1]!.split('\n').filter((l) => l.trim() !== '');
}

const lines = tryItBlock();
const curls = lines.filter((l) => l.startsWith('curl '));
/** The shell functions the lines use (`pretty`, which indents JSON): defined as printed. */
const functions = lines.filter((l) => /^[a-z_]+\(\) \{/.test(l));
/** The shell lines that set the date variables (BASE and KEY are filled in by the test). */
const assignments = lines.filter(
  (l) => !l.startsWith('curl ') && !l.startsWith('KEY=') && !l.startsWith('BASE=') && !functions.includes(l),
);

/** The quoted URL of a curl line. */
function urlOf(line: string): string {
  const m = /"(\$BASE\/[^"]+)"/.exec(line);
  if (!m) throw new Error(`no quoted URL in: ${line}`);
  return m[1]!;
}

/** Each date variable as a day offset from today, read from both forms of its line (BSD -v, GNU -d), which must agree. */
function dateOffsets(): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of assignments) {
    const m = /^([A-Z_0-9]+)=\$\((.*)\)\s*$/.exec(line);
    if (!m) throw new Error(`README "Try it": not a VAR=$(date ...) line: ${line}`);
    const [, name, command] = m;
    if (command === 'date +%F') {
      out.set(name!, 0);
      continue;
    }
    const bsd = /^date -v([+-]\d+)d \+%F 2>\/dev\/null \|\| date -d '([+-]\d+) days' \+%F$/.exec(command!);
    if (!bsd) throw new Error(`README "Try it": ${name} is not "date -v±Nd +%F 2>/dev/null || date -d '±N days' +%F"`);
    expect(Number(bsd[1]), `${name}: BSD and GNU forms differ`).toBe(Number(bsd[2]));
    out.set(name!, Number(bsd[1]));
  }
  return out;
}

/** What a response must hold to count as data. */
function expectData(url: string, status: number, body: string): void {
  expect(status, `${url}: ${body.slice(0, 300)}`).toBe(200);
  const resource = /\/api\/v1\/(\w+)/.exec(url)![1]!;
  if (resource === 'openapi' && !body.trimStart().startsWith('{')) {
    // the README's line prints the document's paths, one a line
    expect(body.split('\n'), url).toContain('/api/v1/citas');
    return;
  }
  const json = JSON.parse(body) as Record<string, unknown>;
  if (resource === 'openapi') {
    expect(Object.keys(json.paths as object).length, url).toBeGreaterThan(0);
    return;
  }
  const list = json[LIST_FIELD[resource]!] as unknown[];
  expect(list.length, `${url} returned no ${resource}: ${body.slice(0, 300)}`).toBeGreaterThan(0);
}

describe('README "Try it"', () => {
  it('has the examples this test expects: curl lines on each resource, from $BASE, dates relative to today', () => {
    expect(curls.length).toBeGreaterThanOrEqual(6);
    expect(lines[0]).toMatch(/^BASE=http:\/\/127\.0\.0\.1:3000 +# /);
    for (const c of curls) expect(urlOf(c), c).toMatch(/^\$BASE\/api\/v1\//);
    // nowhere in the README an address with a path written out: every example starts from $BASE
    expect(README).not.toMatch(/https?:\/\/(127\.0\.0\.1|localhost):\d+\//);
    for (const resource of ['citas', 'clientas', 'llamadas', 'openapi.json'])
      expect(
        curls.some((c) => urlOf(c).includes(`/api/v1/${resource}`)),
        resource,
      ).toBe(true);
    expect(curls.filter((c) => /\$[A-Z_]/.test(urlOf(c))).length).toBeGreaterThanOrEqual(2);
    // No fixed calendar date anywhere in the lines that are run.
    for (const line of lines) expect(line, 'a fixed date in a README example').not.toMatch(/\b(19|20)\d\d-\d\d-\d\d\b/);
    expect([...dateOffsets().keys()].sort()).toEqual(assignments.map((a) => a.split('=')[0]).sort());
  });
});

describe('README "Try it", run by the shell against a fresh `clinic-api serve`', () => {
  const dirs = tempDirs('clinic-readme-');
  let child: ChildProcess | null = null;
  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  afterAll(() => dirs.cleanup());

  it('every line answers with data', async () => {
    const proc = spawn(process.execPath, [...builtEntry('test/cli/run-cli.ts'), 'serve'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dirs.make(), PORT: '0', LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    let stdout = '';
    await new Promise<void>((resolve, reject) => {
      proc.stdout!.on('data', (c: Buffer) => {
        stdout += c.toString();
        if (stdout.includes('OpenAPI document:')) resolve();
      });
      void exited.then((code) => reject(new Error(`serve exited with ${code}:\n${stdout}`)));
    });
    // Standard output is a pipe, not a terminal: the demo's key is in the file it names.
    const file = /are in (\S+first-run-credentials\.txt),/.exec(stdout)?.[1];
    expect(file, stdout).toBeDefined();
    const m = /curl -H "Authorization: Bearer (\S+)" "(http:\/\/127\.0\.0\.1:\d+)\//.exec(fs.readFileSync(file!, 'utf8'));
    expect(m).not.toBeNull();
    const [, key, base] = m!;

    for (const line of curls) {
      // As written, but for the address; KEY as the reader would have set it.
      const script = [`BASE=${base!}`, ...functions, ...assignments, line].join('\n');
      const r = spawnSync('/bin/sh', ['-c', script], {
        env: { PATH: process.env.PATH ?? '', KEY: key! },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status, `${line}\n${r.stderr}`).toBe(0);
      expectData(line, 200, r.stdout);
    }
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

describe('README "Try it" on the demo made at other instants (in-process)', () => {
  // A week (every weekday: the demo's calendar shifts with it), at hours from just after midnight
  // to just before the next, across the switch to summer time (2027-03-28 in Europe/Madrid).
  const instants = [
    '2027-03-24T23:10:00Z',
    '2027-03-25T05:00:00Z',
    '2027-03-26T11:00:00Z',
    '2027-03-27T16:30:00Z',
    '2027-03-28T21:55:00Z',
    '2027-03-29T22:50:00Z',
    '2027-03-30T08:00:00Z',
  ].map((s) => Date.parse(s));
  const offsets = dateOffsets();

  it.each(instants.map((ms) => [new Date(ms).toISOString(), ms] as const))('at %s every line answers with data', async (_label, nowMs) => {
    const rt = await testRuntime('sqlite', {
      nowMs,
      env: { RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000', AUTH_FAIL_RPS: '1000', AUTH_FAIL_BURST: '1000' },
    });
    try {
      const demo = (await firstRun(rt.database, rt.keys, nowMs))!;
      const app = await appFor(rt);
      try {
        // `date +%F` on a machine in the clinic's zone.
        const today = todayIn('Europe/Madrid', nowMs);
        for (const line of curls) {
          const url = urlOf(line)
            .slice(BASE_VAR.length)
            .replace(/\$([A-Z_0-9]+)/g, (_m, name: string) => addDays(today, offsets.get(name)!));
          const res = await app.inject({
            method: 'GET',
            url,
            headers: line.includes('$KEY') ? { authorization: `Bearer ${demo.key}` } : {},
          });
          expectData(url, res.statusCode, res.body);
        }
      } finally {
        await app.close();
      }
    } finally {
      await rt.close();
    }
  });
});

describe('README and docs/', () => {
  const docs = fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f));

  it("say in the README's first lines which Node to install and how, as package.json's engines do", () => {
    const engines = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines).toBe('^22.15.0 || >=24.0.0');
    const line = README.split('\n')
      .slice(0, 15)
      .find((l) => l.startsWith('Install Node.js'));
    expect(line).toMatch(/Node\.js 24 LTS \(or 22\.15 and later\)/);
    expect(line).toMatch(/nvm install 24/);
  });

  it('point at nothing outside the repository: every relative link resolves inside it', () => {
    for (const file of ['README.md', ...docs]) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      expect(text, file).not.toMatch(/CONTRACT|\.\.\/shared|\/work\//);
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:|#)/.test(target!)) continue;
        const resolved = path.resolve(ROOT, path.dirname(file), target!.split('#')[0]!);
        expect(resolved.startsWith(ROOT), `${file}: ${target}`).toBe(true);
        expect(fs.existsSync(resolved), `${file}: ${target} does not exist`).toBe(true);
      }
    }
  });
});
