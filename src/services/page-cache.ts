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
// uncompressed page is kept (its JSON, or its CSV under the CSV's own tag, with the headers that
// belong to it); compression (http/plugins/compression.ts) runs on it as on any page.
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
function ownBytes(text: string): Buffer {
  const body = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  body.write(text);
  return body;
}

/** A kept page: its bytes, the headers that belong to them (a CSV page's total and next link), and what it discloses. */
export interface KeptPage {
  body: Buffer;
  headers: Readonly<Record<string, string>>;
  /** records on the page, and the ids of the clientas whose data it holds (the request log's access record) */
  disclosed: PageDisclosure;
}

/** What a page discloses: a page sent again from the cache discloses the same clientas. */
export interface PageDisclosure {
  records: number;
  clientas: readonly string[];
}

const NOTHING: PageDisclosure = Object.freeze({ records: 0, clientas: Object.freeze([]) as readonly string[] });

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** UTF-16 code units of the headers' names and values: two bytes each, like the key. */
function headerChars(headers: Readonly<Record<string, string>>): number {
  let n = 0;
  for (const name in headers) n += name.length + headers[name]!.length;
  return n;
}

export class PageCache {
  private readonly lru: LRUCache<string, KeptPage> | null;
  private hits = 0;
  private misses = 0;

  /** `maxBytes` 0: nothing is kept, every page is built. */
  constructor(readonly maxBytes: number) {
    // A page larger than the whole budget is not kept (lru-cache refuses it: maxEntrySize).
    this.lru =
      maxBytes > 0
        ? new LRUCache<string, KeptPage>({
            maxSize: maxBytes,
            // The clientas' ids: 36 characters each, with their array's slot.
            sizeCalculation: (p, key) =>
              p.body.length + 2 * (key.length + headerChars(p.headers)) + 80 * p.disclosed.clientas.length + ENTRY_OVERHEAD_BYTES,
          })
        : null;
  }

  private static key(clinicId: string, etag: string): string {
    return `${clinicId} ${etag}`;
  }

  /** The page sent earlier under this clinic's tag, or undefined (counted as a hit or a miss). */
  get(clinicId: string, etag: string): KeptPage | undefined {
    if (this.lru === null) return undefined;
    const page = this.lru.get(PageCache.key(clinicId, etag));
    if (page === undefined) this.misses++;
    else this.hits++;
    return page;
  }

  /**
   * Keeps the page's text as UTF-8 bytes of their own, with its headers, and returns them (to be
   * sent); with the cache off (PAGE_CACHE_MB=0), only returns them.
   */
  set(
    clinicId: string,
    etag: string,
    text: string,
    headers: Readonly<Record<string, string>> = NO_HEADERS,
    disclosed: PageDisclosure = NOTHING,
  ): KeptPage {
    const page = { body: ownBytes(text), headers, disclosed };
    this.lru?.set(PageCache.key(clinicId, etag), page);
    return page;
  }

  /** bytes: what the bound counts (the pages, their keys and headers, ENTRY_OVERHEAD_BYTES each). */
  stats(): PageCacheStats {
    return { hits: this.hits, misses: this.misses, bytes: this.lru?.calculatedSize ?? 0, entries: this.lru?.size ?? 0 };
  }
}
