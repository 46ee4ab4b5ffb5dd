// The SDK's If-None-Match cache (option `cache`): the last answer of each URL with its ETag, the
// least recently used URL out first past `maxEntries`. Kept as text, parsed on each hit, so that a
// caller who changes a returned object does not change the kept one.
export class EtagCache {
  private readonly entries = new Map<string, { etag: string; text: string }>();

  constructor(private readonly maxEntries: number) {
    if (!(maxEntries >= 1)) throw new TypeError(`ClinicApi: cache.maxEntries must be at least 1 (got ${String(maxEntries)})`);
  }

  get(url: string): { etag: string; text: string } | undefined {
    const hit = this.entries.get(url);
    if (hit) {
      // most recently used last
      this.entries.delete(url);
      this.entries.set(url, hit);
    }
    return hit;
  }

  set(url: string, etag: string, text: string): void {
    this.entries.delete(url);
    this.entries.set(url, { etag, text });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
