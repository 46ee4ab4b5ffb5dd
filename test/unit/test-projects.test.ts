// The split of the suite into vitest projects (vitest.config.ts, test/projects.ts) stays true:
// the `processes` project holds exactly the test files that start processes, directly (they
// import node:child_process or playwright-core) or through a test helper or tool they import.
// Reads the files' import lines; runs nothing.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROCESS_TESTS } from '../projects.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STARTS_PROCESSES = /^import\b[^;]*?\bfrom\s+'(?:(?:node:)?child_process|playwright-core)'/m;

/** Every test file, relative to the root, as vitest's include (test/projects.ts, ALL_TESTS) finds them. */
function testFiles(): string[] {
  const dirs = ['test', ...fs.readdirSync(path.join(ROOT, 'packages')).map((p) => `packages/${p}/test`)];
  return (
    dirs
      .filter((d) => fs.existsSync(path.join(ROOT, d)))
      .flatMap((d) => (fs.readdirSync(path.join(ROOT, d), { recursive: true }) as string[]).map((f) => path.join(d, f)))
      // As vitest's exclude: installed packages' own tests are not ours (the n8n package installs one into its test/).
      .filter((f) => f.endsWith('.test.ts') && !f.split(path.sep).includes('node_modules'))
      .sort()
  );
}

/**
 * The first file on the way from `file` (relative) to a module that starts processes, or null.
 * Imports of src/ are not followed: the service starts none.
 */
function startsProcesses(file: string, seen = new Set<string>()): string | null {
  if (seen.has(file)) return null;
  seen.add(file);
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  if (STARTS_PROCESSES.test(text)) return file;
  for (const m of text.matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'|\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g)) {
    const target = path
      .normalize(path.join(path.dirname(file), (m[1] ?? m[2])!))
      .replace(/\.js$/, '.ts')
      .replace(/\.mjs$/, '.mts');
    if (target.startsWith('src/') || !fs.existsSync(path.join(ROOT, target))) continue;
    const found = startsProcesses(target, seen);
    if (found) return found;
  }
  return null;
}

const listed = (file: string) => PROCESS_TESTS.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p));

describe('the vitest projects', () => {
  const files = testFiles();

  it('finds the test files, and every entry of the processes list names some', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(PROCESS_TESTS.filter((p) => !files.some((f) => (p.endsWith('/') ? f.startsWith(p) : f === p)))).toEqual([]);
  });

  it('a test file that starts processes is in the processes project', () => {
    const missing = files.filter((f) => !listed(f) && startsProcesses(f)).map((f) => `${f} (through ${startsProcesses(f)})`);
    expect(missing, 'add these to PROCESS_TESTS in test/projects.ts').toEqual([]);
  });

  it('a test file that starts none is in the fast project', () => {
    const extra = files.filter((f) => listed(f) && !startsProcesses(f));
    expect(extra, 'take these out of PROCESS_TESTS in test/projects.ts').toEqual([]);
  });
});
