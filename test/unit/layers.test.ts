// The layering of docs/architecture.md, checked on the sources: every import of src/ points down
// (or stays in its layer), http/ and admin/ never import each other, only the CLI's serve command
// imports server.ts, and nothing imports bin/. Reads the files' import lines; runs nothing.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Bottom first: a file may import its own layer and those below it. */
const LAYERS: [number, RegExp][] = [
  [0, /^(config|errors|time|memo|metrics|startup-errors|spans)\.ts$|^(config|domain|demo|collections)\//],
  [1, /^(db|redis)\//],
  [2, /^repos\//],
  [3, /^services\//],
  [4, /^(http|admin)\//],
  [5, /^(app|runtime|logger)\.ts$/],
  [6, /^server\.ts$|^telemetry\//],
  [7, /^cli\//],
];

function layerOf(file: string): number {
  const hit = LAYERS.find(([, re]) => re.test(file));
  if (!hit) throw new Error(`${file} belongs to no layer: add it to docs/architecture.md and to this test`);
  return hit[0];
}

function sources(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sources(full) : e.name.endsWith('.ts') ? [path.relative(SRC, full)] : [];
  });
}

/** The src/ files `file` imports (type-only and dynamic imports included: they are dependencies too). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(SRC, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/gms)) {
    const target = path.normalize(path.join(path.dirname(file), (m[1] ?? m[2])!.replace(/\.js$/, '.ts')));
    out.push(target);
  }
  return out;
}

describe('layers', () => {
  const files = sources();
  const edges = files.flatMap((from) => importsOf(from).map((to) => ({ from, to })));

  it('finds the sources and their imports', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(edges.length).toBeGreaterThan(100);
  });

  it('every import points to the same layer or one below', () => {
    const up = edges.filter((e) => layerOf(e.to) > layerOf(e.from)).map((e) => `${e.from} -> ${e.to}`);
    expect(up).toEqual([]);
  });

  it('http/ and admin/ are siblings: neither imports the other', () => {
    const across = edges.filter(
      (e) => (e.from.startsWith('http/') && e.to.startsWith('admin/')) || (e.from.startsWith('admin/') && e.to.startsWith('http/')),
    );
    expect(across).toEqual([]);
  });

  it('the dashboard and the CLI reach data through services, never repositories', () => {
    const direct = edges.filter((e) => /^(admin|cli)\//.test(e.from) && e.to.startsWith('repos/')).map((e) => `${e.from} -> ${e.to}`);
    expect(direct).toEqual([]);
  });

  it("only the CLI's serve command imports server.ts; nothing imports bin/", () => {
    expect(edges.filter((e) => e.to === 'server.ts').map((e) => e.from)).toEqual(['cli/server.ts']);
    expect(edges.filter((e) => e.to.startsWith('..'))).toEqual([]);
  });
});
