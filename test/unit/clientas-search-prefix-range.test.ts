// The prefix range of a search term: [lo, hi) holds exactly the keys that start with the term in
// code-point order (the order of SQLite's BINARY collation and PostgreSQL's COLLATE "C"), and a
// page is served from it only when the kept counts place the whole page inside it.
import { describe, expect, it } from 'vitest';
import { prefixRange, prefixRangeOffset } from '../../src/services/clientas-search/plan.js';

/** Code-point order, as the databases compare (JS's < compares UTF-16 code units). */
const cmp = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
const inRange = (s: string, r: { lo: string; hi: string }) => cmp(s, r.lo) >= 0 && cmp(s, r.hi) < 0;

describe('prefixRange', () => {
  it('holds the keys that start with the term and no other', () => {
    const keys = [
      'mar',
      'mari',
      'maria',
      'maria',
      'maria jose',
      'mariaz',
      'maria\u{10ffff}',
      'maria😀',
      'marib',
      'marib a',
      'mariá',
      'maría',
      'ana maria',
      'zoe',
      '',
    ];
    for (const needle of ['maria', 'mar', 'a', 'ñandú', 'z\u{d7ff}', 'x😀', 'maria jose']) {
      const r = prefixRange(needle)!;
      for (const k of [...keys, `${needle}`, `${needle} x`, `${needle}\u{10ffff}`])
        expect(inRange(k, r), `${JSON.stringify(k)} in ${JSON.stringify(needle)}`).toBe(k.startsWith(needle));
    }
  });

  it('steps over the surrogate block and has no range for the last code point or a lone surrogate', () => {
    expect(prefixRange('a\u{d7ff}')).toEqual({ lo: 'a\u{d7ff}', hi: 'a\u{e000}' });
    expect(prefixRange('a\u{10ffff}')).toBeNull();
    expect(prefixRange('a\ud800')).toBeNull();
    expect(prefixRange('')).toBeNull();
  });
});

describe('prefixRangeOffset', () => {
  // 10 matches before the term, 50 that start with it, 40 after: 100 in all.
  const known = { total: 100, before: 10, prefix: 50 };

  it('serves a page that lies inside the range, from its offset in the range', () => {
    expect(prefixRangeOffset(known, 10, 25)).toBe(0);
    expect(prefixRangeOffset(known, 35, 25)).toBe(25);
    expect(prefixRangeOffset({ total: 50, before: 0, prefix: 50 }, 0, 100)).toBe(0);
  });

  it('leaves pages that reach the other runs to the other paths', () => {
    expect(prefixRangeOffset(known, 0, 25)).toBeNull(); // starts before the range
    expect(prefixRangeOffset(known, 40, 25)).toBeNull(); // runs past it into the matches after
    expect(prefixRangeOffset(known, 60, 10)).toBeNull(); // after it
    expect(prefixRangeOffset({ total: 100, before: null, prefix: null }, 10, 25)).toBeNull(); // not counted
    expect(prefixRangeOffset({ total: 100, before: 0, prefix: 0 }, 0, 25)).toBeNull();
  });

  it('serves the last page when nothing comes after the range', () => {
    expect(prefixRangeOffset({ total: 60, before: 10, prefix: 50 }, 40, 25)).toBe(30);
  });
});
