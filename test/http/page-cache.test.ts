// The page cache (PAGE_CACHE_MB, services/page-cache.ts): a list page asked again while nothing
// changed is sent from the bytes kept under its ETag, and those are exactly the bytes of a built
// page; a change of data is seen at once; one clinic's kept page never answers another's request.
// Hits and misses are read from /metrics, as an operator reads them.
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importJsonLines } from '../../src/services/import.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A } from '../helpers/fixtures.js';
import { call, JSON_UTF8, PATHS, scrapeMetrics } from './helpers.js';

const TOKEN = 'page-cache-metrics-token-0123456789';

/** Every list, with and without parameters, as integrations ask for them. */
const URLS = [
  ...PATHS,
  '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31&limit=5',
  '/api/v1/clientas?q=mar',
  '/api/v1/llamadas?desde=2026-03-01&offset=1',
];

describe.each(dialects())('the page cache on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: { METRICS_TOKEN: TOKEN }, processMetrics: true });
  });
  afterAll(async () => {
    await t.close();
  });

  async function lookups(): Promise<{ hit: number; miss: number }> {
    const text = (await scrapeMetrics(t, TOKEN)).body;
    const count = (result: string) =>
      Number(new RegExp(`^page_cache_lookups_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    return { hit: count('hit'), miss: count('miss') };
  }

  it.each(URLS)('%s asked twice: built once, then sent as kept, byte for byte with the same headers', async (url) => {
    const before = await lookups();
    const first = await call(t, url);
    expect(first.statusCode, first.body).toBe(200);
    const second = await call(t, url);
    expect(second.statusCode).toBe(200);
    expect(second.rawPayload.equals(first.rawPayload)).toBe(true);
    for (const h of ['content-type', 'etag', 'content-length']) expect(second.headers[h], h).toBe(first.headers[h]);
    expect(second.headers['content-type']).toBe(JSON_UTF8);
    expect(await lookups()).toEqual({ hit: before.hit + 1, miss: before.miss + 1 });
  });

  it('a kept page is compressed like a built one, and HEAD answers its headers without the body', async () => {
    const url = '/api/v1/citas?desde=2026-01-01&hasta=2026-12-31';
    const plain = await call(t, url);
    expect(plain.rawPayload.length).toBeGreaterThan(1024);
    const gz = await call(t, url, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true);
    const head = await call(t, url, { method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers.etag).toBe(plain.headers.etag);
  });

  it('a change of data is in the next answer: the kept page of the old data is never sent again', async () => {
    const url = '/api/v1/citas';
    const before = await call(t, url);
    expect(before.body).toContain('Mario Pérez');
    expect((await call(t, url)).rawPayload.equals(before.rawPayload)).toBe(true);
    // A client's new name shows in her appointments (cliente_nombre): a write to clientas only.
    const line = JSON.stringify({
      type: 'clienta',
      id: A.mario,
      nombre: 'Mario Pérez Gil',
      telefono: '+34611222333',
      email: null,
      idioma: 'en',
      vip: false,
      cliente_desde: '2024-05-10',
      created_at: '2024-05-10T10:00:00+02:00',
    });
    expect((await importJsonLines(t.database, t.clinicA.id, Readable.from([line]), { now: () => t.clock.now })).changed).toBe(true);
    const after = await call(t, url);
    expect(after.statusCode).toBe(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(after.body).toContain('Mario Pérez Gil');
    expect((await call(t, url)).body).toContain('Mario Pérez Gil');
  });

  it("one clinic's kept page never answers another clinic's request for the same URL", async () => {
    for (const url of URLS) {
      const a = await call(t, url);
      const b = await call(t, url, { key: t.keyB });
      expect(b.statusCode).toBe(200);
      expect(b.headers.etag).not.toBe(a.headers.etag);
      // The page's records: citas, clientas or llamadas.
      const idsOfA = (Object.values(a.json() as object).find(Array.isArray) as { id: string }[]).map((r) => r.id);
      expect(idsOfA.length, url).toBeGreaterThan(0);
      for (const id of idsOfA) expect(b.body, url).not.toContain(id);
      // And B's page, now kept, is B's on the next request too.
      expect((await call(t, url, { key: t.keyB })).rawPayload.equals(b.rawPayload)).toBe(true);
    }
  });
});

describe('PAGE_CACHE_MB=0', () => {
  let off: TestApp;
  let on: TestApp;
  beforeAll(async () => {
    off = await buildTestApp('sqlite', { env: { PAGE_CACHE_MB: '0', METRICS_TOKEN: TOKEN }, processMetrics: true });
    on = await buildTestApp('sqlite');
  });
  afterAll(async () => {
    await Promise.all([off.close(), on.close()]);
  });

  it('builds every page, counts no lookup, and sends the same bytes as the cache does', async () => {
    for (const url of URLS) {
      const built = await call(off, url);
      expect(built.statusCode).toBe(200);
      await call(on, url);
      const kept = await call(on, url);
      expect(kept.rawPayload.equals(built.rawPayload), url).toBe(true);
      expect(kept.headers['content-type']).toBe(built.headers['content-type']);
    }
    const text = (await scrapeMetrics(off, TOKEN)).body;
    expect(text).not.toMatch(/^page_cache_lookups_total\{/m);
    expect(text).toMatch(/^page_cache_bytes 0$/m);
  });
});
