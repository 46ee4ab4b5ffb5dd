// How far knowledge of the three collections spreads: the source files that name all three
// (cita, clienta and llamada, singular or plural, any case, as whole words: identifiers, strings
// and comments alike). Adding a collection means touching each of them, so their number is kept
// small; src/collections/ holds what makes each one. Migrations (history, never edited), the demo
// data and the dashboard's translations are left aside. Reads the files; runs nothing.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const ASIDE = [/^db\/migrations\//, /^demo\//, /^admin\/locales\//];
const WORDS = [/\bcitas?\b/i, /\bclientas?\b/i, /\bllamadas?\b/i];
/** The most files that may name all three. */
// 15: the client export (services/exports/clienta.ts) and its README text name her records of each kind.
const MAX = 15;

function sources(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sources(full) : e.name.endsWith('.ts') ? [path.relative(SRC, full)] : [];
  });
}

/** The files of src/ (those aside left out) that name every collection. */
function namingAll(): string[] {
  return sources()
    .filter((f) => !ASIDE.some((re) => re.test(f)))
    .filter((f) => {
      const text = fs.readFileSync(path.join(SRC, f), 'utf8');
      return WORDS.every((re) => re.test(text));
    })
    .sort();
}

describe('collection spread', () => {
  it(`at most ${MAX} source files name all three collections`, () => {
    const files = namingAll();
    expect(files.length, files.join('\n')).toBeLessThanOrEqual(MAX);
  });
});
