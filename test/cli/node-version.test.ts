// Node 20 (and any version outside package.json's engines) is refused by `npm install` at once,
// with a message naming the supported versions: engines plus engine-strict in .npmrc. Run with
// the npm on PATH, in a copy of the project's package files (each workspace's package.json
// included: without them npm would leave the workspaces' dependencies out, and their engines
// unchecked), as each Node version (the running Node, made to report that version); --dry-run
// and --offline, so nothing is fetched or written.
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
/** packages/<name>/package.json of each workspace (package.json "workspaces": ["packages/*"]). */
const WORKSPACE_MANIFESTS = fs
  .readdirSync(path.join(ROOT, 'packages'))
  .map((name) => path.join('packages', name, 'package.json'))
  .filter((file) => fs.existsSync(path.join(ROOT, file)));
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
    for (const file of ['package.json', 'package-lock.json', '.npmrc', ...WORKSPACE_MANIFESTS]) {
      fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
      fs.copyFileSync(path.join(ROOT, file), path.join(project, file));
    }
    npm = npmCli();
  });

  it('installs every workspace: the dependencies of each package are in the tree whose engines are checked', () => {
    for (const name of ['sdk', 'n8n-nodes-clinic-api']) expect(WORKSPACE_MANIFESTS).toContain(path.join('packages', name, 'package.json'));
    const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    for (const manifest of WORKSPACE_MANIFESTS) expect(lock.packages, manifest).toHaveProperty([path.dirname(manifest)]);
  });

  it('engines and engine-strict are what the table assumes', () => {
    expect(ENGINES).toBe('^22.15.0 || >=24.0.0');
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
