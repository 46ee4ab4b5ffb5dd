// Built list pages, kept by their strong ETag (services/conditional.ts).
//
// Integrations poll: a Zapier or Make trigger, a spreadsheet's refresh, a CRM's sync read the same
// page again and again while nothing changed, most without sending If-None-Match. A page of 100
// appointments costs about 1.5 ms of CPU to build (the query, the shaping, the JSON); its tag costs
// one primary-key read. A strong tag names one representation, byte for byte, and it is made from
// everything the page depends on: the clinic (and its zone and currency), its data version (bumped
// in the transaction of every write), the request's parameters with their defaults resolved, and
// what moves with time alone. So the bytes sent once under a tag are the bytes of every later
// answer under it, and a request whose tag is kept is answered with them, at once. The version is
// read from the database by every request, so no instance of a fleet serves a page older than the
// data it reads, and nothing has to be told to forget anything: an entry whose tag no request
// makes any more is simply the least recently used, and goes.
//
// Bounded in bytes (PAGE_CACHE_MB; 0 turns it off), least recently used first out. Keyed by the
// clinic and the tag, so an entry is only ever found by a request of its own clinic. Only the
// uncompressed JSON is kept; compression (http/plugins/compression.ts) runs on it as on any page.
import { LRUCache } from 'lru-cache';

export interface PageCacheStats {
  hits: number;
  misses: number;
  bytes: number;
  entries: number;
}

/**
 * What an entry costs besides its page's bytes: the key (two bytes a character at most), the
 * Buffer object and its backing store's header, lru-cache's slots. An estimate on the high side,
 * so that a budget of many small pages (an empty page of `updated_since` is 80 bytes) still
 * bounds the memory they take.
 */
export const ENTRY_OVERHEAD_BYTES = 256;

/**
 * The page's UTF-8 bytes in memory of their own. Buffer.from(string) puts a string shorter than
 * half of Buffer.poolSize (8 KiB on Node 22, 64 KiB on Node 24) into a slice of Node's shared pool, and a kept
 * slice holds its whole pool block for as long as it is kept: thousands of small pages would take
 * many times the bytes counted.
 */
function ownBytes(json: string): Buffer {
  const body = Buffer.allocUnsafeSlow(Buffer.byteLength(json));
  body.write(json);
  return body;
}

export class PageCache {
  private readonly lru: LRUCache<string, Buffer> | null;
  private hits = 0;
  private misses = 0;

  /** `maxBytes` 0: nothing is kept, every page is built. */
  constructor(readonly maxBytes: number) {
    // A page larger than the whole budget is not kept (lru-cache refuses it: maxEntrySize).
    this.lru =
      maxBytes > 0
        ? new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (b, key) => b.length + 2 * key.length + ENTRY_OVERHEAD_BYTES })
        : null;
  }

  get enabled(): boolean {
    return this.lru !== null;
  }

  private static key(clinicId: string, etag: string): string {
    return `${clinicId} ${etag}`;
  }

  /** The page's bytes sent earlier under this clinic's tag, or undefined (counted as a hit or a miss). */
  get(clinicId: string, etag: string): Buffer | undefined {
    if (this.lru === null) return undefined;
    const body = this.lru.get(PageCache.key(clinicId, etag));
    if (body === undefined) this.misses++;
    else this.hits++;
    return body;
  }

  /** Keeps the page's JSON as UTF-8 bytes of their own, and returns them (to be sent). */
  set(clinicId: string, etag: string, json: string): Buffer {
    const body = ownBytes(json);
    this.lru?.set(PageCache.key(clinicId, etag), body);
    return body;
  }

  /** bytes: what the bound counts (the pages, their keys, ENTRY_OVERHEAD_BYTES each). */
  stats(): PageCacheStats {
    return { hits: this.hits, misses: this.misses, bytes: this.lru?.calculatedSize ?? 0, entries: this.lru?.size ?? 0 };
  }
}
