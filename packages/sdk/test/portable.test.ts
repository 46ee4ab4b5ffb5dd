// The built SDK (packages/sdk/dist, what the package ships) runs outside Node: its core imports
// nothing but its own files and `openapi-fetch` (which imports nothing), its webhooks entry only
// `standardwebhooks` (whose code, and its dependencies', requires no Node module either), and no
// file names a Node-only global. The browser test (browser.test.ts) runs the core in Chromium.
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PKG = fileURLToPath(new URL('..', import.meta.url));
const DIST = path.join(PKG, 'dist');
const ROOT_MODULES = fileURLToPath(new URL('../../../node_modules/', import.meta.url));

function jsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? jsFiles(full) : e.name.endsWith('.js') ? [full] : [];
  });
}

/** Every module specifier a file imports or requires (static, dynamic, re-exports). */
function specifiers(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(
    /\b(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*['"]([^'"]+)['"]|\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  )) {
    out.push((m[1] ?? m[2] ?? m[3])!);
  }
  return out;
}

const isBuiltin = (s: string) => s.startsWith('node:') || builtinModules.includes(s.split('/')[0]!);
/** Code, without comments (a comment may say "process"). */
const code = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

describe('the built SDK', () => {
  const files = jsFiles(DIST);

  it('is built (npm test builds the packages first)', () => {
    expect(files.map((f) => path.relative(DIST, f))).toEqual(
      expect.arrayContaining(['index.js', 'client.js', 'transport.js', 'webhooks.js']),
    );
  });

  it('imports no Node built-in module; the core imports only its own files and openapi-fetch', () => {
    const bare: Record<string, string[]> = {};
    for (const file of files) {
      for (const s of specifiers(file)) {
        expect(isBuiltin(s), `${path.relative(DIST, file)} imports ${s}`).toBe(false);
        if (!s.startsWith('.')) (bare[path.relative(DIST, file)] ??= []).push(s);
      }
    }
    expect(bare).toEqual({ 'transport.js': ['openapi-fetch'], 'webhooks.js': ['standardwebhooks'] });
  });

  it('openapi-fetch, as an ES module (what browsers and bundlers load), imports nothing and needs no Node global', () => {
    const file = path.join(ROOT_MODULES, 'openapi-fetch/dist/index.mjs');
    expect(specifiers(file)).toEqual([]);
    // its one mention of `process` is guarded by `typeof process === "object"`
    expect(code(file).replace(/typeof process === "object" && [^;]*/g, '')).not.toMatch(/\b(process|Buffer|require|__dirname)\b/);
  });

  it('names no Node-only global (process, Buffer, require, __dirname, global, setImmediate)', () => {
    for (const file of files) {
      // used as a value: `process.env`, `Buffer.from`, `require(...)`, `typeof process` ...
      expect(code(file), path.relative(DIST, file)).not.toMatch(
        /\b(process|Buffer|global|__dirname|__filename)\s*[.[]|\b(require|setImmediate)\s*\(|\btypeof\s+(process|Buffer|global|require)\b|[(,=]\s*(__dirname|__filename)\b/,
      );
    }
  });

  it('standardwebhooks and its dependencies require no Node module', () => {
    const seen = new Set<string>();
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const s of specifiers(file)) {
        expect(isBuiltin(s), `${path.relative(ROOT_MODULES, file)} requires ${s}`).toBe(false);
        const next = s.startsWith('.') ? path.resolve(path.dirname(file), s) : path.join(ROOT_MODULES, s);
        const pkgMain = fs.existsSync(path.join(next, 'package.json'))
          ? path.join(next, (JSON.parse(fs.readFileSync(path.join(next, 'package.json'), 'utf8')) as { main?: string }).main ?? 'index.js')
          : next;
        walk(pkgMain.endsWith('.js') ? pkgMain : `${pkgMain}.js`);
      }
    };
    walk(path.join(ROOT_MODULES, 'standardwebhooks/dist/index.js'));
    expect([...seen].map((f) => path.relative(ROOT_MODULES, f)).sort()).toEqual([
      '@stablelib/base64/lib/base64.js',
      'fast-sha256/sha256.js',
      'standardwebhooks/dist/index.js',
      'standardwebhooks/dist/timing_safe_equal.js',
    ]);
  });
});
