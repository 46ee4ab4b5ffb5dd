// The `clinic-api` command from this checkout's sources, for the tests that start it as a process.
// test/global-setup.ts compiles src/ and the test entries below once per vitest run (esbuild, file
// by file, as tsx would at every start) into .cache/test-build/, so a process starts in the time
// `node bin/clinic-api.js` takes: under tsx, every start paid about half a second more on two cores
// for its loader, and the processes project starts some 130 of them.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where the build goes: one level below .cache as src/ is below the root, for src/'s `../../package.json`. */
export const BUILD_DIR = path.join(ROOT, '.cache', 'test-build');

/** What is compiled: the service, and the entries the tests start (run-cli.ts, start-together.ts). */
const ENTRIES = ['src/**/*.ts', 'test/cli/run-cli.ts', 'test/cli/start-together.ts'];

/**
 * Node's arguments for a compiled test entry: `[...builtEntry('test/cli/run-cli.ts'), 'serve']`. Source
 * maps on, so a stack trace names the .ts line, as under tsx.
 */
export function builtEntry(source: 'test/cli/run-cli.ts' | 'test/cli/start-together.ts'): string[] {
  return ['--enable-source-maps', path.join(BUILD_DIR, source.replace(/\.ts$/, '.js'))];
}

/**
 * Compiles ENTRIES into BUILD_DIR. Each file is written under a temporary name and renamed, so a
 * process started by another run meanwhile reads a whole file; files no longer built are removed.
 */
export async function buildSources(): Promise<void> {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ENTRIES,
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
    // src/'s modules read the version from the package.json two and three levels up.
    { path: path.join(BUILD_DIR, 'package.json'), contents: Buffer.from(packageJson()) },
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

/** The root's package.json as far as the service reads it: its version, and ES modules. */
function packageJson(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  return `${JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module', private: true }, null, 2)}\n`;
}
