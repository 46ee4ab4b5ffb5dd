// Settings > API > Logs in a real headless Chromium against a listening server: requests made
// over HTTP with the clinic's key are written by the log's writer; an owner opens the Logs tab,
// filters to the client errors, opens one (addressed by its request id) and reads its error body,
// finds that request again by the id typed in the search box, then finds a clienta by name and
// sees the requests that disclosed her data. Keyboard and clicks only, no CSP violation.
import { Readable } from 'node:stream';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importJsonLines } from '../../src/services/import.js';
import { buildDashboardApp, EMAILS, PASSWORD, type DashboardApp } from '../admin/helpers.js';
import { CHROMIUM_PATH, chromiumPresent, launchChromium, SKIP_REASON } from './chromium.js';

if (!chromiumPresent) process.stderr.write(`\n[browser tests] SKIPPED: ${SKIP_REASON}\n\n`);
const TITLE = chromiumPresent
  ? `request log pages in headless Chromium (${CHROMIUM_PATH})`
  : `request log pages in headless Chromium: SKIPPED, ${SKIP_REASON}`;

const ANA = '0a000001-0000-4000-8000-000000000001';

describe.skipIf(!chromiumPresent)(TITLE, () => {
  let t: DashboardApp;
  let base: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  /** the request id of each request made, by its path */
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await buildDashboardApp('sqlite');
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    const line = JSON.stringify({
      type: 'clienta',
      id: ANA,
      nombre: 'Ana Ruiz',
      telefono: '+34600000001',
      vip: false,
      cliente_desde: '2025-01-01',
      created_at: '2025-01-01T10:00:00+01:00',
    });
    await importJsonLines(t.database, t.clinicA.id, Readable.from([line + '\n']));
    const { key } = await t.keys.create({ clinicId: t.clinicA.id, name: 'Zapier', expiresAt: null, createdBy: null });
    for (const p of ['/api/v1/clientas', '/api/v1/citas?desde=nope', '/api/v1/me']) {
      const res = await fetch(`${base}${p}`, { headers: { authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      ids[p] = res.headers.get('x-request-id')!;
    }
    await t.rt.requestLog!.flush();
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await t?.close();
  });

  it('owner: filters to the errors, reads one error body, finds a clienta and the requests that disclosed her', async () => {
    const ctx = await browser.newContext({ locale: 'es-ES', viewport: { width: 1280, height: 900 } });
    contexts.push(ctx);
    const page = await ctx.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(`${base}/dashboard`);
    await page.getByLabel('Correo electrónico').fill(EMAILS.ownerA);
    await page.getByLabel('Contraseña').fill(PASSWORD);
    await page.getByRole('button', { name: 'Entrar' }).click();
    await page.waitForURL(`${base}/dashboard/settings/api`);

    await page.getByRole('link', { name: 'Registro', exact: true }).click();
    await page.waitForURL(`${base}/dashboard/settings/api/logs`);
    await expect.poll(() => page.locator('table.request-log tbody tr').count()).toBe(3);

    await page.getByLabel('Resultado').selectOption('4xx');
    await page.getByRole('button', { name: 'Filtrar' }).click();
    await page.waitForURL(/status=4xx/);
    const rows = page.locator('table.request-log tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('GET /api/v1/citas?desde=nope');

    await rows
      .first()
      .getByRole('link', { name: /Detalles/ })
      .click();
    const bad = ids['/api/v1/citas?desde=nope']!;
    await page.waitForURL(`${base}/dashboard/settings/api/logs/${bad}`);
    expect(await page.locator('#error-body').textContent()).toContain('"code": "invalid_parameter"');
    expect(await page.locator('#request-facts').textContent()).toContain('Zapier');

    await page.getByRole('link', { name: 'Volver al registro de peticiones' }).click();
    await page.getByLabel('Id de la petición').fill(bad);
    await page.getByLabel('Id de la petición').press('Enter');
    await page.waitForURL(/request_id=/);
    expect(await rows.count()).toBe(1);
    expect(await rows.first().getAttribute('data-request-id')).toBe(bad);
    await page.getByRole('link', { name: 'Quitar filtros' }).click();
    await page.getByLabel('Nombre de la clienta').fill('ana');
    await page.getByLabel('Nombre de la clienta').press('Enter');
    await page.waitForURL(/\/logs\/access\?q=ana/);
    await page.getByRole('link', { name: 'Ver accesos' }).click();
    await page.waitForURL(new RegExp(`clienta=${ANA}`));
    expect(await page.getByRole('heading', { level: 2, name: /Ana Ruiz/ }).count()).toBe(1);
    const access = page.locator('table.access-record tbody tr');
    expect(await access.count()).toBe(1);
    expect(await access.first().textContent()).toContain('GET /api/v1/clientas');
    expect(violations).toEqual([]);
  });
});
