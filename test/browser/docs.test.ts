// The API reference at /docs in a real headless Chromium against a real listening server: the
// page renders every operation from the OpenAPI document, its examples, and "Try it out" calls
// this server; it loads nothing from any other origin (every request counted: 0) and violates
// its Content-Security-Policy nowhere (violations counted: 0).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { CHROMIUM_PATH, chromiumPresent, launchChromium, SKIP_REASON } from './chromium.js';

if (!chromiumPresent) process.stderr.write(`\n[browser tests] SKIPPED: ${SKIP_REASON}\n\n`);

const TITLE = chromiumPresent ? `/docs in headless Chromium (${CHROMIUM_PATH})` : `/docs in headless Chromium: SKIPPED, ${SKIP_REASON}`;

interface Watched {
  page: Page;
  /** every request the page made, by URL */
  requests: string[];
  /** CSP violations, from the page's securitypolicyviolation events and Chromium's console */
  violations: string[];
}

describe.skipIf(!chromiumPresent)(TITLE, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  // One page for the tests below, in order: Swagger UI's bundle is large, and loaded once.
  let w: Watched;

  beforeAll(async () => {
    t = await buildTestApp('sqlite');
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    w = await open('/docs');
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function open(path: string): Promise<Watched> {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // before the page's own scripts (as a string: the suite's TypeScript has no DOM types)
    await ctx.addInitScript(`
      window.__csp = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
    `);
    const page = await ctx.newPage();
    const w: Watched = { page, requests: [], violations: [] };
    page.on('request', (r) => {
      w.requests.push(r.url());
    });
    page.on('console', (m) => {
      if (/Content.Security.Policy/i.test(m.text())) w.violations.push(m.text());
    });
    await page.goto(`${base}${path}`);
    return w;
  }

  async function settle(w: Watched): Promise<{ outside: string[]; violations: string[] }> {
    await w.page.waitForLoadState('networkidle');
    const inPage = await w.page.evaluate<string[]>('window.__csp');
    const outside = w.requests.filter((u) => !u.startsWith(`${base}/`) && !/^(data|blob):/.test(u));
    return { outside, violations: [...w.violations, ...inPage] };
  }

  it('renders every operation from the OpenAPI document, with its examples, and loads nothing from elsewhere', async () => {
    const { page } = w;
    await page.locator('.opblock').first().waitFor();
    expect(await page.title()).toBe('Clinic Integration API reference');
    await expect
      .poll(() => page.locator('.opblock-summary-path').allTextContents())
      .toEqual([
        '/api/v1/citas',
        '/api/v1/citas/{id}',
        '/api/v1/clientas',
        '/api/v1/clientas/{id}',
        '/api/v1/llamadas',
        '/api/v1/llamadas/{id}',
        '/api/v1/eventos',
        '/api/v1/me',
        '/api/v1/webhooks',
        '/api/v1/webhooks',
        '/api/v1/webhooks/{id}',
        '/api/v1/webhooks/{id}',
      ]);
    for (const tag of ['citas', 'clientas', 'llamadas', 'me', 'webhooks'])
      expect(await page.locator(`#operations-tag-${tag}`).count(), tag).toBe(1);
    expect(await page.getByText('Proprietary: all rights reserved').count()).toBe(1);

    // an operation opened: its description's examples in the three languages
    await page.locator('#operations-citas-listCitas .opblock-summary').click();
    const description = page.locator('#operations-citas-listCitas .opblock-description-wrapper');
    await description.waitFor();
    const text = await description.innerText();
    expect(text).toContain('curl -H "Authorization: Bearer $CLINIC_API_KEY" "$CLINIC_API_URL/api/v1/citas?estado=confirmada"');
    expect(text).toContain('const res = await fetch(');
    expect(text).toContain('urllib.request.urlopen(req)');

    // the named schemas, listed by name; one opened in full
    await page.locator('section.models .models-control').click();
    const models = page.locator('section.models .json-schema-2020-12__title');
    await expect.poll(() => models.allInnerTexts()).toEqual(expect.arrayContaining(['Cita', 'CitasList', 'Me', 'ErrorResponse']));
    const citasList = page
      .locator('section.models article')
      .filter({ has: page.locator('.json-schema-2020-12__title', { hasText: /^CitasList$/ }) });
    await citasList.getByRole('button', { name: 'Expand all' }).click();
    await expect.poll(() => citasList.innerText()).toContain('fecha_hora');

    const { outside, violations } = await settle(w);
    expect(w.requests.some((u) => u.endsWith('/docs/json'))).toBe(true);
    expect(outside).toEqual([]);
    expect(violations).toEqual([]);
  });

  it('"Try it out" calls this server with the key and shows the answer', async () => {
    const { page } = w;
    await page.getByRole('button', { name: 'Authorize' }).first().click();
    await page.locator('#auth-bearer-value').fill(t.keyA);
    await page.getByRole('button', { name: 'Apply credentials' }).click();
    await page.locator('.auth-btn-wrapper').getByRole('button', { name: 'Close' }).click();

    // opened, it is ready to try (tryItOutEnabled)
    const op = page.locator('#operations-me-getMe');
    await op.locator('.opblock-summary').click();
    await op.getByRole('button', { name: 'Execute' }).waitFor();
    const answered = page.waitForResponse((r) => r.url() === `${base}/api/v1/me`);
    await op.getByRole('button', { name: 'Execute' }).click();
    const res = await answered;
    expect(res.status()).toBe(200);
    expect(res.request().headers()['authorization']).toBe(`Bearer ${t.keyA}`);
    await expect.poll(() => op.locator('.live-responses-table').innerText()).toContain('Clínica Uno');
    // the curl of the request just made
    expect(await op.locator('.curl-command').innerText()).toContain(`${base}/api/v1/me`);

    const { outside, violations } = await settle(w);
    expect(outside).toEqual([]);
    expect(violations).toEqual([]);
    // the key is not kept in the browser's storage
    expect(await page.evaluate<string>('JSON.stringify(localStorage)')).not.toContain(t.keyA);
  });

  // An example of a parameter is what Swagger UI fills its box with, and "Execute" sends it: an
  // updated_since there turned the appointments list into its updated-since mode.
  it('"Try it out" on the appointments list sends no parameter that was not typed: the default window, as documented', async () => {
    const { page } = w;
    const op = page.locator('#operations-citas-listCitas');
    // opened by the first test (else open it here); ready to try (tryItOutEnabled)
    await op.locator('.opblock-summary').waitFor();
    if (!(await op.getByRole('button', { name: 'Execute' }).isVisible())) await op.locator('.opblock-summary').click();
    await op.getByRole('button', { name: 'Execute' }).waitFor();
    for (const name of ['desde', 'hasta', 'updated_since', 'limit', 'offset']) {
      const box = op.locator(`tr[data-param-name="${name}"] input`);
      const value = await box.inputValue();
      // limit and offset may show their defaults: sent or not, they change nothing
      if (name === 'limit') expect(['', '100'], name).toContain(value);
      else if (name === 'offset') expect(['', '0'], name).toContain(value);
      else expect(value, name).toBe('');
    }
    const answered = page.waitForResponse((r) => r.url().startsWith(`${base}/api/v1/citas`));
    await op.getByRole('button', { name: 'Execute' }).click();
    const res = await answered;
    const sent = new URL(res.url()).searchParams;
    expect(sent.has('updated_since')).toBe(false);
    expect(res.status()).toBe(200);
    // the answer is the default window's: today to today + 30 days
    const body = (await res.json()) as { rango: { desde: string | null; hasta: string | null } };
    expect(body.rango.desde).not.toBeNull();
    expect(body.rango.hasta).not.toBeNull();
  });

  it("would see an outside request: the page's CSP blocks it, and the watch counts it", async () => {
    const { page } = w;
    await page.evaluate(`fetch('http://203.0.113.7/probe').catch(() => {}); new Image().src = 'https://fonts.example.net/x.png';`);
    await expect.poll(async () => (await settle(w)).violations.join('\n')).toMatch(/connect-src[\s\S]*img-src|img-src[\s\S]*connect-src/);
  });

  it('sends a Content-Security-Policy that names no other origin', async () => {
    const res = await fetch(`${base}/docs`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:|\*|unsafe-/);
    // and the page's own scripts are files of this server, not inline
    expect(await res.text()).not.toMatch(/<script>(?!\s*<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/);
  });
});
