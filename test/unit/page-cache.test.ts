// The page cache's own rules (services/page-cache.ts): found only under its clinic and tag, bounded
// in bytes (each page's bytes, its key and a fixed overhead) with the least recently used page out
// first, a page larger than the budget not kept, kept bytes that hold no shared memory, a page's
// headers kept and counted with it, and nothing kept at all with a budget of 0.
import { describe, expect, it } from 'vitest';
import { ENTRY_OVERHEAD_BYTES, PageCache } from '../../src/services/page-cache.js';

const page = (n: number, fill = 'x') => fill.repeat(n);
/** What an entry of `n` bytes under clinic `c` and tag `t` counts against the budget. */
const cost = (c: string, t: string, n: number) => n + 2 * `${c} ${t}`.length + ENTRY_OVERHEAD_BYTES;

describe('PageCache', () => {
  it('finds a page under its clinic and tag only, and counts hits and misses', () => {
    const c = new PageCache(10_000);
    c.set('clinic-a', '"t1"', page(10, 'a'));
    expect(c.get('clinic-a', '"t1"')?.body.toString()).toBe('a'.repeat(10));
    expect(c.get('clinic-b', '"t1"')).toBeUndefined();
    expect(c.get('clinic-a', '"t2"')).toBeUndefined();
    expect(c.stats()).toEqual({ hits: 1, misses: 2, bytes: cost('clinic-a', '"t1"', 10), entries: 1 });
  });

  it('keeps UTF-8 bytes in memory of their own: a small page holds no block of the shared buffer pool', () => {
    const c = new PageCache(10_000);
    const json = '{"nombre":"Ángela Ibáñez"}';
    const sent = c.set('c', '"1"', json);
    const kept = c.get('c', '"1"')!;
    expect(kept.body.toString('utf8')).toBe(json);
    expect(kept.body.length).toBe(Buffer.byteLength(json));
    expect(kept.body.buffer.byteLength).toBe(kept.body.length);
    expect(sent).toBe(kept);
  });

  it("keeps a page's headers with it (a CSV page's total and next link), and counts them against the budget", () => {
    const c = new PageCache(10_000);
    const headers = { 'x-total-count': '78', link: '</api/v1/citas?limit=1&offset=1>; rel="next"' };
    c.set('c', '"csv"', 'id\r\n', headers);
    expect(c.get('c', '"csv"')).toMatchObject({ body: Buffer.from('id\r\n'), headers });
    const headerBytes = 2 * Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length, 0);
    expect(c.stats().bytes).toBe(cost('c', '"csv"', 4) + headerBytes);
    // a JSON page has none
    c.set('c', '"json"', '{}');
    expect(c.get('c', '"json"')!.headers).toEqual({});
  });

  it('holds at most its budget: the least recently used page goes first, keys and overhead counted', () => {
    const one = cost('c', '"1"', 100);
    const c = new PageCache(3 * one);
    c.set('c', '"1"', page(100));
    c.set('c', '"2"', page(100));
    c.set('c', '"3"', page(100));
    // Used now: "2" becomes the least recently used.
    expect(c.get('c', '"1"')).toBeDefined();
    c.set('c', '"4"', page(100));
    expect(c.get('c', '"2"')).toBeUndefined();
    for (const tag of ['"1"', '"3"', '"4"']) expect(c.get('c', tag), tag).toBeDefined();
    expect(c.stats().bytes).toBe(3 * one);
  });

  it('bounds many small pages by what they cost, not by their bytes alone', () => {
    const c = new PageCache(100_000);
    for (let i = 0; i < 10_000; i++) c.set('clinic', `"${i}"`, page(80));
    // 80-byte pages: with the key and the overhead counted, far fewer than 100,000 / 80 fit.
    expect(c.stats().entries).toBeLessThan(100_000 / (80 + ENTRY_OVERHEAD_BYTES) + 1);
    expect(c.stats().bytes).toBeLessThanOrEqual(100_000);
  });

  it('does not keep a page larger than the whole budget, nor push the others out for it', () => {
    const c = new PageCache(1_000);
    c.set('c', '"small"', page(100));
    c.set('c', '"huge"', page(1_001));
    expect(c.get('c', '"huge"')).toBeUndefined();
    expect(c.get('c', '"small"')).toBeDefined();
    expect(c.stats().bytes).toBe(cost('c', '"small"', 100));
  });

  it('with a budget of 0 keeps nothing and counts nothing, and still gives the bytes to send', () => {
    const c = new PageCache(0);
    expect(c.set('c', '"1"', page(10)).body.toString()).toBe(page(10));
    expect(c.get('c', '"1"')).toBeUndefined();
    expect(c.stats()).toEqual({ hits: 0, misses: 0, bytes: 0, entries: 0 });
  });
});
