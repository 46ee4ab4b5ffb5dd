// The cache of search totals: a total is returned only at the version it was made at, entries
// are per clinic and filter, and the least recently used go first when the cache is full.
import { describe, expect, it } from 'vitest';
import type { SearchCounts } from '../../src/services/clientas-search/plan.js';
import { SEARCH_TOTALS_MAX_ENTRIES, SearchTotals, type SearchKey } from '../../src/services/clientas-search/totals.js';

const counts = (total: number): SearchCounts => ({ total, before: null, prefix: null, scope: 1000 });
const key = (over: Partial<SearchKey> = {}): SearchKey => ({ clinicId: 'c1', nameLike: 'mar', digitsLike: null, vip: null, ...over });

describe('SearchTotals', () => {
  it('returns a total at the version it was made at, and forgets it at any other', () => {
    const t = new SearchTotals();
    t.set(key(), 3, counts(120));
    expect(t.get(key(), 3)).toEqual(counts(120));
    expect(t.get(key(), 4)).toBeUndefined();
    // The stale entry is gone, not kept for its old version.
    expect(t.get(key(), 3)).toBeUndefined();
    expect(t.size).toBe(0);
  });

  it('keeps clinics, terms, phone digits and vip scopes apart', () => {
    const t = new SearchTotals();
    t.set(key(), 1, counts(10));
    t.set(key({ clinicId: 'c2' }), 1, counts(20));
    t.set(key({ vip: true }), 1, counts(30));
    t.set(key({ vip: false }), 1, counts(40));
    t.set(key({ nameLike: '600', digitsLike: '600' }), 1, counts(50));
    t.set(key({ nameLike: 'mar\u0000' }), 1, counts(60));
    expect(
      [
        key(),
        key({ clinicId: 'c2' }),
        key({ vip: true }),
        key({ vip: false }),
        key({ nameLike: '600', digitsLike: '600' }),
        key({ nameLike: 'mar\u0000' }),
      ].map((k) => t.get(k, 1)?.total),
    ).toEqual([10, 20, 30, 40, 50, 60]);
    expect(t.get(key({ nameLike: '600' }), 1)).toBeUndefined();
  });

  it(`keeps ${SEARCH_TOTALS_MAX_ENTRIES} searches at most, the least recently used going first`, () => {
    const t = new SearchTotals();
    t.set(key({ nameLike: 'first' }), 1, counts(1));
    t.set(key({ nameLike: 'second' }), 1, counts(2));
    for (let i = 0; i < SEARCH_TOTALS_MAX_ENTRIES - 2; i++) t.set(key({ nameLike: `n${i}` }), 1, counts(i));
    expect(t.get(key({ nameLike: 'first' }), 1)?.total).toBe(1); // now the most recent
    t.set(key({ nameLike: 'one more' }), 1, counts(3));
    expect(t.size).toBe(SEARCH_TOTALS_MAX_ENTRIES);
    expect(t.get(key({ nameLike: 'second' }), 1)).toBeUndefined();
    expect(t.get(key({ nameLike: 'first' }), 1)?.total).toBe(1);
    expect(t.get(key({ nameLike: 'one more' }), 1)?.total).toBe(3);
  });
});
