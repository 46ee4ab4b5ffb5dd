// The built SDK as it is (packages/sdk/dist, no bundler) in a real headless Chromium: a page
// imports it as an ES module (an import map says where its one dependency, openapi-fetch, is, as
// the SDK's README tells) and lists citas, pages through clientas and meets an error of a real
// server. The page and the SDK's files are served at the server's own origin (Playwright answers
// those paths from disk; every /api request reaches the server), as an app served beside the API
// would be: the API sends no CORS headers.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, chromiumPresent, launchChromium, SKIP_REASON } from '../../../test/browser/chromium.js';
import { listeningApp, type ListeningApp } from './helpers.js';

if (!chromiumPresent) process.stderr.write(`\n[SDK browser test] SKIPPED: ${SKIP_REASON}\n\n`);
const TITLE = chromiumPresent ? `the SDK in headless Chromium (${CHROMIUM_PATH})` : `the SDK in headless Chromium: SKIPPED, ${SKIP_REASON}`;
const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
const OPENAPI_FETCH = fileURLToPath(new URL('../../../node_modules/openapi-fetch/dist/index.mjs', import.meta.url));

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>SDK</title>
<script type="importmap">{"imports": {"openapi-fetch": "/sdk-test/openapi-fetch/index.mjs"}}</script>
<script type="module">
  import { ClinicApi, ClinicApiError } from '/sdk-test/dist/index.js';
  const params = new URLSearchParams(location.hash.slice(1));
  const api = new ClinicApi({ baseUrl: location.origin, apiKey: params.get('key') });
  try {
    const me = await api.me();
    const page = await api.citas.list({ desde: '2026-03-01', hasta: '2026-03-31', limit: 5 });
    const names = [];
    for await (const c of api.clientas.all({ limit: 2 })) names.push(c.nombre);
    let error = null;
    try {
      await api.citas.get('00000000-0000-4000-8000-000000000000');
    } catch (err) {
      error = { isClinicApiError: err instanceof ClinicApiError, code: err.code, status: err.status, requestId: typeof err.requestId };
    }
    window.__result = { clinic: me.clinica.nombre, citas: page.citas.map((c) => c.fecha_hora), total: page.total, names, error };
  } catch (err) {
    window.__result = { failed: String(err && err.stack || err) };
  }
</script>`;

describe.skipIf(!chromiumPresent)(TITLE, () => {
  let t: ListeningApp;
  let browser: Browser;
  beforeAll(async () => {
    t = await listeningApp('sqlite');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('imports the built ES module and reads a real server with it', async () => {
    const page = await browser.newPage();
    const requests: string[] = [];
    const errors: string[] = [];
    page.on('request', (r) => {
      requests.push(new URL(r.url()).pathname);
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.route('**/sdk-test/**', async (route) => {
      const p = new URL(route.request().url()).pathname.replace('/sdk-test/', '');
      if (p === 'index.html') return route.fulfill({ contentType: 'text/html; charset=utf-8', body: PAGE });
      if (p === 'openapi-fetch/index.mjs') {
        return route.fulfill({ contentType: 'text/javascript; charset=utf-8', body: fs.readFileSync(OPENAPI_FETCH, 'utf8') });
      }
      const file = path.join(DIST, p.replace(/^dist\//, ''));
      if (!file.startsWith(DIST) || !fs.existsSync(file)) return route.fulfill({ status: 404, body: 'not found' });
      return route.fulfill({ contentType: 'text/javascript; charset=utf-8', body: fs.readFileSync(file, 'utf8') });
    });
    await page.goto(`${t.baseUrl}/sdk-test/index.html#key=${t.keyA}`);
    await page.waitForFunction('window.__result !== undefined', undefined, { timeout: 20_000 });
    const result = (await page.evaluate('window.__result')) as Record<string, unknown>;
    expect(errors).toEqual([]);
    expect(result.failed).toBeUndefined();
    expect(result.clinic).toBe('Clínica Uno');
    expect((result.citas as string[]).length).toBeGreaterThan(0);
    for (const f of result.citas as string[]) expect(f).toMatch(/^2026-03-\d\dT/);
    expect([...(result.names as string[])].sort()).toEqual([
      'Ana 100%_Ruiz',
      'Mario Pérez',
      'María José Núñez',
      'maria lopez',
      'Ángela Ibáñez',
    ]);
    expect(result.error).toEqual({ isClinicApiError: true, code: 'not_found', status: 404, requestId: 'string' });
    // The SDK's own files (no bundler: what the package ships), then the API, three pages of clientas included.
    expect(requests.filter((p) => p.startsWith('/api/'))).toEqual([
      '/api/v1/me',
      '/api/v1/citas',
      '/api/v1/clientas',
      '/api/v1/clientas',
      '/api/v1/clientas',
      '/api/v1/citas/00000000-0000-4000-8000-000000000000',
    ]);
    expect(requests).toContain('/sdk-test/dist/transport.js');
    expect(requests).toContain('/sdk-test/openapi-fetch/index.mjs');
  });
});
