// Totals of client searches (`q`), kept per clinic until its clientas change.
//
// `total` is the exact number of matches, and counting every match of a common term is
// O(matches): a clinic with a million clients holds 160,000 names with "mar", 50 ms of work per
// count, while the page itself (a walk of the name index that stops at 100 hits) stays below a
// millisecond. Integrations repeat searches (paging through a result, polling
// the same term), so the count is made once and kept, keyed by clinic and filter, with the version
// of the clinic's clientas it was made at (clinic_data_versions, bumped by every import and demo
// write in its transaction). A search reads that version (one primary-key look-up) and re-counts
// only when it moved: a cached total is never stale, on this instance or any other.
//
// Besides the total it keeps where the matches lie in name order and the size of the filter's
// scope (SearchCounts), which plan every page of the search (plan.ts).
//
// The cache is per process and bounded (lru-cache: least recently used entries go first); it
// holds clinic ids, normalised search terms and numbers, nothing a request could read across clinics.
import { LRUCache } from 'lru-cache';
import type { SearchCounts } from './plan.js';

export interface SearchKey {
  clinicId: string;
  nameLike: string | null;
  digitsLike: string | null;
  vip: boolean | null;
}

interface Entry {
  version: number;
  counts: SearchCounts;
}

export const SEARCH_TOTALS_MAX_ENTRIES = 10_000;

export class SearchTotals {
  private readonly entries = new LRUCache<string, Entry>({ max: SEARCH_TOTALS_MAX_ENTRIES });

  private static key(k: SearchKey): string {
    // JSON of the parts: unambiguous whatever characters a search term holds.
    return JSON.stringify([k.clinicId, k.vip, k.nameLike, k.digitsLike]);
  }

  /** The counts made at `version`, or undefined (never made, evicted, or made at another version). */
  get(k: SearchKey, version: number): SearchCounts | undefined {
    const key = SearchTotals.key(k);
    const e = this.entries.get(key);
    if (e === undefined || e.version === version) return e?.counts;
    this.entries.delete(key);
    return undefined;
  }

  set(k: SearchKey, version: number, counts: SearchCounts): void {
    this.entries.set(SearchTotals.key(k), { version, counts });
  }

  get size(): number {
    return this.entries.size;
  }
}
