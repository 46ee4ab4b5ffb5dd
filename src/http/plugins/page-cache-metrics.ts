// The page cache (services/page-cache.ts) in /metrics: how many list pages were sent as kept and
// how many were built, and the bytes held. Read from the cache's own counts at scrape time:
// nothing added to the request path.
import { Counter, Gauge } from 'prom-client';
import fp from 'fastify-plugin';
import { COLLECTION_NAMES } from '../../collections/index.js';
import type { PageCache } from '../../services/page-cache.js';

export const pageCacheMetrics = fp(
  async (app, opts: { pages: PageCache }) => {
    const { pages } = opts;
    const registers = [app.metrics.registry];
    new Counter({
      name: 'page_cache_lookups_total',
      help:
        `List pages (${COLLECTION_NAMES.join(', ')}) looked up in the page cache by their ETag: hit (sent as kept) or miss (built, then ` +
        'kept); none while PAGE_CACHE_MB is 0',
      labelNames: ['result'] as const,
      registers,
      collect() {
        // The cache's own totals, which only grow, as the counter's values (a result appears once counted).
        const s = pages.stats();
        this.reset();
        for (const [result, total] of [
          ['hit', s.hits],
          ['miss', s.misses],
        ] as const)
          if (total > 0) this.inc({ result }, total);
      },
    });
    new Gauge({
      name: 'page_cache_bytes',
      help: 'Bytes of list pages held by the page cache (at most PAGE_CACHE_MB)',
      registers,
      collect() {
        this.set(pages.stats().bytes);
      },
    });
  },
  { name: 'page-cache-metrics', dependencies: ['metrics'] },
);
