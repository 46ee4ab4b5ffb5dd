// The `clinic-api` command from this checkout's sources, for the tests that start it as a process.
// test/global-setup.ts compiles src/ and the test entries below once per vitest run (esbuild, file
// by file, as tsx would at every start) into .cache/test-build/, so a process starts in the time
// `node bin/clinic-api.js` takes: under tsx, every start paid 0.3-0.6 s more on two cores for its
// loader, and the processes project starts some 130 of them.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where the build goes: one level below .cache as src/ is below the root, for src/'s `../../package.json`. */
export const BUILD_DIR = path.join(ROOT, '.cache', 'test-build');

/** The scripts the tests start, compiled with the service (src/). */
const TEST_ENTRIES = ['test/cli/run-cli.ts', 'test/cli/start-together.ts'] as const;

/**
 * Node's arguments for a compiled test entry: `[...builtEntry('test/cli/run-cli.ts'), 'serve']`. Source
 * maps on, so a stack trace names the .ts line, as under tsx.
 */
export function builtEntry(source: (typeof TEST_ENTRIES)[number]): string[] {
  return ['--enable-source-maps', path.join(BUILD_DIR, source.replace(/\.ts$/, '.js'))];
}

/**
 * Compiles src/ and TEST_ENTRIES into BUILD_DIR. Each file is written under a temporary name and renamed, so a
 * process started by another run meanwhile reads a whole file; files no longer built are removed.
 */
export async function buildSources(): Promise<void> {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ['src/**/*.ts', ...TEST_ENTRIES],
    outbase: '.',
    outdir: BUILD_DIR,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    sourcemap: 'inline',
    write: false,
    logLevel: 'error',
  });
  const files = [
    ...out.outputFiles.map((f) => ({ path: f.path, contents: f.contents })),
    // The root's, where src/'s modules read the version (two and three levels up) and Node the module type.
    { path: path.join(BUILD_DIR, 'package.json'), contents: fs.readFileSync(path.join(ROOT, 'package.json')) },
  ];
  const written = new Set<string>();
  for (const file of files) {
    fs.mkdirSync(path.dirname(file.path), { recursive: true });
    const temp = `${file.path}.${process.pid}.tmp`;
    fs.writeFileSync(temp, file.contents);
    fs.renameSync(temp, file.path);
    written.add(file.path);
  }
  for (const name of fs.readdirSync(BUILD_DIR, { recursive: true }) as string[]) {
    const file = path.join(BUILD_DIR, name);
    if (!written.has(file) && fs.statSync(file).isFile()) fs.rmSync(file);
  }
}
