// Settings > API > Webhooks in a real headless Chromium against a listening server whose delivery
// worker runs, with a real receiver: an owner adds an endpoint for one event type, copies the
// secret shown once, an import's event arrives and shows among the deliveries, then a test event,
// resend, disable/enable and delete, all by clicking; staff see the page without its forms.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboardApp, EMAILS, PASSWORD, type DashboardApp } from '../admin/helpers.js';
import { seedRecords } from '../helpers/app.js';
import { citaRecord, clientaRecord } from '../helpers/fixtures.js';
import { startReceiver, until, type Receiver } from '../helpers/receiver.js';
import { CHROMIUM_PATH, chromiumPresent, launchChromium, SKIP_REASON } from './chromium.js';

if (!chromiumPresent) process.stderr.write(`\n[browser tests] SKIPPED: ${SKIP_REASON}\n\n`);
const TITLE = chromiumPresent
  ? `webhook pages in headless Chromium (${CHROMIUM_PATH})`
  : `webhook pages in headless Chromium: SKIPPED, ${SKIP_REASON}`;

describe.skipIf(!chromiumPresent)(TITLE, () => {
  let t: DashboardApp;
  let base: string;
  let browser: Browser;
  let r: Receiver;
  let status = 200;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    t = await buildDashboardApp('sqlite', { env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '20' } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    await t.app.webhookWorker.start();
    browser = await launchChromium();
    r = await startReceiver('/hook', () => ({ status }));
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await t?.close();
    await r?.close();
  });

  async function signedIn(email: string): Promise<Page> {
    const ctx = await browser.newContext({ locale: 'es-ES', viewport: { width: 1280, height: 900 } });
    contexts.push(ctx);
    const page = await ctx.newPage();
    await page.goto(`${base}/dashboard`);
    await page.getByLabel('Correo electrónico').fill(email);
    await page.getByLabel('Contraseña').fill(PASSWORD);
    await page.getByRole('button', { name: 'Entrar' }).click();
    await page.waitForURL(`${base}/dashboard/settings/api`);
    return page;
  }

  it('owner: adds an endpoint, copies its secret once, sees deliveries, tests, resends, disables, enables, deletes', async () => {
    const page = await signedIn(EMAILS.ownerA);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL(`${base}/dashboard/settings/api/webhooks`);
    await page.getByLabel('URL', { exact: true }).fill(r.url);
    await page.getByLabel('cita.creada').check();
    await page.getByRole('button', { name: 'Añadir destino' }).click();

    const input = page.getByLabel('Secreto de firma', { exact: true });
    await input.waitFor();
    const secret = await input.inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('new-secret');
    await page.getByRole('button', { name: 'Copiar' }).click();
    await expect.poll(() => page.locator('#copy-status').textContent()).not.toBe('');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);

    await page.getByRole('link', { name: 'Ya lo he copiado' }).click();
    await page.waitForURL(/\/webhooks\/[0-9a-f-]{36}$/);
    const endpointUrl = page.url();
    expect(await page.content()).not.toContain(secret);

    // An import's cita.creada is delivered by the worker (the clienta.creada is not chosen).
    const c = '0d000001-0000-4000-8000-000000000001';
    await seedRecords(
      t.database,
      t.clinicA,
      [
        clientaRecord(c, 'Browser Test', '+34600999888'),
        citaRecord('0d000002-0000-4000-8000-000000000001', c, '2026-04-01T10:00:00+02:00'),
      ],
      t.clock.now,
    );
    await until(() => r.received.some((x) => x.tipo === 'cita.creada'), 'the cita.creada delivery');
    const ev = r.received.find((x) => x.tipo === 'cita.creada')!;
    expect(new Webhook(secret).verify(ev.body, ev.headers as Record<string, string>)).toMatchObject({ tipo: 'cita.creada' });
    await expect
      .poll(async () => {
        await page.reload();
        return page.locator('tr[data-outcome="delivered"] code', { hasText: 'cita.creada' }).count();
      })
      .toBe(1);
    expect(r.received.map((x) => x.tipo)).toEqual(['cita.creada']);

    await page.getByRole('button', { name: 'Enviar evento de prueba' }).click();
    await expect.poll(() => page.locator('#webhook-notice').textContent()).toContain('El evento de prueba se ha entregado (HTTP 200).');
    expect(r.received.at(-1)!.tipo).toBe('ping');

    status = 500;
    await page.getByRole('button', { name: /^Reenviar cita\.creada/ }).click();
    await expect.poll(() => page.locator('#webhook-notice').textContent()).toContain('Reenviado: cita.creada: HTTP 500.');
    expect(r.received.at(-1)!.id).toBe(ev.id);
    expect(await page.locator('tr[data-outcome="failed"]').count()).toBe(1);
    status = 200;

    await page.getByRole('button', { name: 'Desactivar' }).click();
    await expect.poll(() => page.locator('#endpoint-status').textContent()).toBe('Desactivado');
    await page.getByRole('button', { name: 'Activar' }).click();
    await expect.poll(() => page.locator('#endpoint-status').textContent()).toBe('Activo');

    await page.getByRole('link', { name: 'Borrar' }).click();
    await page.getByRole('button', { name: 'Borrar destino' }).click();
    await page.waitForURL(`${base}/dashboard/settings/api/webhooks`);
    expect(await page.locator('#webhook-notice').textContent()).toContain('Se ha borrado el destino');
    expect(await page.locator('tr[data-endpoint-id]').count()).toBe(0);
    expect((await page.goto(endpointUrl))!.status()).toBe(404);
    expect(violations).toEqual([]);
  });

  it('staff: sees the endpoints and their deliveries, no form and no buttons', async () => {
    const { endpoint } = await t.app.webhooks.create({ clinicId: t.clinicA.id, url: r.url, eventTypes: null, createdBy: null });
    const page = await signedIn(EMAILS.staffA);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await expect.poll(() => page.getByText('Solo la persona titular de la clínica puede añadir').isVisible()).toBe(true);
    expect(await page.getByLabel('URL', { exact: true }).count()).toBe(0);
    await page.getByRole('link', { name: `Detalles de ${r.url}` }).click();
    await page.waitForURL(`${base}/dashboard/settings/api/webhooks/${endpoint.id}`);
    expect(
      await page
        .getByRole('button')
        .filter({ hasText: /Enviar evento|Desactivar|Reenviar/ })
        .count(),
    ).toBe(0);
  });
});
