// Node 20 (and any version outside package.json's engines) is refused by `npm install` at once,
// with a message naming the supported versions: engines plus engine-strict in .npmrc. Run with
// the npm on PATH, in a copy of the project's package files, as each Node version (the running
// Node, made to report that version); --dry-run and --offline, so nothing is fetched or written.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDirs } from './in-process.js';
import { NODE_VERSIONS, pretendNode } from './node-versions.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENGINES = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
const dirs = tempDirs('clinic-engines-');
afterAll(() => dirs.cleanup());

/** npm's own script (npm-cli.js) behind the `npm` on PATH. */
function npmCli(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'npm');
    if (!fs.existsSync(candidate)) continue;
    const real = fs.realpathSync(candidate);
    if (real.endsWith('.js')) return real;
    const beside = path.join(path.dirname(real), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
    if (fs.existsSync(beside)) return beside;
  }
  throw new Error('no npm on PATH (this test runs npm install --dry-run)');
}

describe('npm install on each Node version', () => {
  let project: string;
  let npm: string;
  beforeAll(() => {
    project = dirs.make();
    for (const file of ['package.json', 'package-lock.json', '.npmrc']) fs.copyFileSync(path.join(ROOT, file), path.join(project, file));
    for (const pkg of fs.readdirSync(path.join(ROOT, 'packages'))) {
      fs.mkdirSync(path.join(project, 'packages', pkg), { recursive: true });
      fs.copyFileSync(path.join(ROOT, 'packages', pkg, 'package.json'), path.join(project, 'packages', pkg, 'package.json'));
    }
    npm = npmCli();
  });

  it('engines and engine-strict are what the table assumes', () => {
    expect(ENGINES).toBe('^22.12.0 || >=24.0.0');
    expect(fs.readFileSync(path.join(ROOT, '.npmrc'), 'utf8')).toMatch(/^engine-strict=true$/m);
  });

  it.each(NODE_VERSIONS)('Node %s: supported %s', (version, supported) => {
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
    const r = spawnSync(
      process.execPath,
      ['--import', pretendNode(version), npm, 'install', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'],
      {
        cwd: project,
        env,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    const output = `${r.stdout}${r.stderr}`;
    if (supported) {
      expect(r.status, output).toBe(0);
      expect(output).not.toMatch(/EBADENGINE/);
    } else {
      expect(r.status, output).not.toBe(0);
      expect(output).toMatch(/EBADENGINE/);
      expect(output).toContain(`Required: {"node":"${ENGINES}"}`);
      expect(output).toContain(`"node":"v${version}"`);
    }
    expect(fs.readdirSync(project).sort()).toEqual(['.npmrc', 'package-lock.json', 'package.json', 'packages']);
  });
});
