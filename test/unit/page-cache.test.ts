// The page cache's own rules (services/page-cache.ts): found only under its clinic and tag, bounded
// in bytes with the least recently used page out first, a page larger than the budget not kept,
// and nothing kept at all with a budget of 0.
import { describe, expect, it } from 'vitest';
import { PageCache } from '../../src/services/page-cache.js';

const page = (n: number, fill = 'x') => Buffer.alloc(n, fill);

describe('PageCache', () => {
  it('finds a page under its clinic and tag only, and counts hits and misses', () => {
    const c = new PageCache(1000);
    c.set('clinic-a', '"t1"', page(10, 'a'));
    expect(c.get('clinic-a', '"t1"')?.toString()).toBe('a'.repeat(10));
    expect(c.get('clinic-b', '"t1"')).toBeUndefined();
    expect(c.get('clinic-a', '"t2"')).toBeUndefined();
    expect(c.stats()).toEqual({ hits: 1, misses: 2, bytes: 10, entries: 1 });
  });

  it('holds at most its budget of bytes: the least recently used page goes first', () => {
    const c = new PageCache(300);
    c.set('c', '"1"', page(100));
    c.set('c', '"2"', page(100));
    c.set('c', '"3"', page(100));
    // Used now: "2" becomes the least recently used.
    expect(c.get('c', '"1"')).toBeDefined();
    c.set('c', '"4"', page(100));
    expect(c.get('c', '"2"')).toBeUndefined();
    for (const tag of ['"1"', '"3"', '"4"']) expect(c.get('c', tag), tag).toBeDefined();
    expect(c.stats().bytes).toBe(300);
  });

  it('does not keep a page larger than the whole budget, nor push the others out for it', () => {
    const c = new PageCache(300);
    c.set('c', '"small"', page(100));
    c.set('c', '"huge"', page(301));
    expect(c.get('c', '"huge"')).toBeUndefined();
    expect(c.get('c', '"small"')).toBeDefined();
    expect(c.stats().bytes).toBe(100);
  });

  it('with a budget of 0 keeps nothing and counts nothing', () => {
    const c = new PageCache(0);
    expect(c.enabled).toBe(false);
    c.set('c', '"1"', page(10));
    expect(c.get('c', '"1"')).toBeUndefined();
    expect(c.stats()).toEqual({ hits: 0, misses: 0, bytes: 0, entries: 0 });
  });
});
