// The live OpenAPI document passes Redocly CLI (recommended) and Spectral (spectral:oas) with no
// error and no warning, with OAuth off and on (OAUTH_ISSUER adds the oauth2 scheme). Each CLI
// starts once per document (they are slow to start), both at the same time, from node_modules;
// their full output is printed when they find anything.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveOpenApiDocument } from '../../tools/openapi-client.js';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

function binOf(pkg: string, bin: string): string {
  const manifest = require(`${pkg}/package.json`) as { bin: Record<string, string> };
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), manifest.bin[bin]!);
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function runNode(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [script, ...args],
      { env: { ...process.env, ...env }, timeout: 60_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
          stdout,
          stderr: stderr + (err && typeof err.code !== 'number' ? String(err) : ''),
        });
      },
    );
  });
}

const show = (name: string, r: Run) => `${name} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

const VARIANTS: { name: string; env: Record<string, string> }[] = [
  { name: 'OAuth off', env: {} },
  { name: 'OAuth on', env: { OAUTH_ISSUER: 'https://api.example.com' } },
];

describe.each(VARIANTS)('the OpenAPI document passes the linters ($name)', ({ env }) => {
  let dir: string;
  let redocly: Run;
  let spectral: Run;
  let spectralJson: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clinic-api-openapi-'));
    const file = path.join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(await liveOpenApiDocument('localhost', env), null, 2));
    [redocly, spectral] = await Promise.all([
      // no telemetry, no update check: CI has no internet, and neither is the test's business
      runNode(binOf('@redocly/cli', 'redocly'), ['lint', '--config', path.join(here, 'redocly.yaml'), '--format', 'json', file], {
        REDOCLY_TELEMETRY: 'off',
        REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      }),
      // its JSON to a file: on stdout Spectral adds a sentence after it
      runNode(binOf('@stoplight/spectral-cli', 'spectral'), [
        'lint',
        '--ruleset',
        path.join(here, 'spectral.yaml'),
        '--format',
        'json',
        '--output',
        path.join(dir, 'spectral.json'),
        '--fail-severity',
        'hint',
        file,
      ]),
    ]);
    try {
      spectralJson = readFileSync(path.join(dir, 'spectral.json'), 'utf8');
    } catch {
      spectralJson = '';
    }
  }, 120_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('Redocly CLI, recommended ruleset: 0 errors, 0 warnings', () => {
    let report: { totals: { errors: number; warnings: number }; problems: unknown[] };
    try {
      report = JSON.parse(redocly.stdout);
    } catch {
      throw new Error(show('redocly', redocly));
    }
    expect(report.problems, show('redocly', redocly)).toEqual([]);
    expect(report.totals, show('redocly', redocly)).toMatchObject({ errors: 0, warnings: 0 });
    expect(redocly.code, show('redocly', redocly)).toBe(0);
  });

  it('Spectral, spectral:oas: no finding of any severity', () => {
    let results: unknown[];
    try {
      results = JSON.parse(spectralJson);
    } catch {
      throw new Error(show('spectral', spectral));
    }
    expect(results, `${show('spectral', spectral)}\n--- results\n${spectralJson}`).toEqual([]);
    expect(spectral.code, show('spectral', spectral)).toBe(0);
  });
});
