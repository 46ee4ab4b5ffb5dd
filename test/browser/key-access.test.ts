// The key's permissions, addresses and life in a real headless Chromium against a listening
// server, as a clinic owner meets them: ticking permissions and typing addresses when creating a
// key, an expiry date, a refused form that keeps what was typed, editing a key, rolling it; in
// Spanish and in English. The API is asked over HTTP after each step.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboardApp, EMAILS, PASSWORD, type DashboardApp } from '../admin/helpers.js';
import { CHROMIUM_PATH, chromiumPresent, launchChromium, SKIP_REASON } from './chromium.js';

if (!chromiumPresent) process.stderr.write(`\n[browser tests] SKIPPED: ${SKIP_REASON}\n\n`);

const TITLE = chromiumPresent
  ? `key permissions, addresses, expiry, edit and roll in headless Chromium (${CHROMIUM_PATH})`
  : `key permissions in headless Chromium: SKIPPED, ${SKIP_REASON}`;

describe.skipIf(!chromiumPresent)(TITLE, () => {
  let t: DashboardApp;
  let base: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    t = await buildDashboardApp('sqlite');
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await t?.close();
  });

  async function signedIn(email: string, locale: string): Promise<Page> {
    const ctx = await browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
    contexts.push(ctx);
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${base}/dashboard`);
    await page.locator('#email').fill(email);
    await page.locator('#password').fill(PASSWORD);
    await page.locator('#password').press('Enter');
    await page.waitForURL(`${base}/dashboard/settings/api`);
    return page;
  }

  const me = async (key: string) => {
    const res = await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    return {
      status: res.status,
      body: (await res.json()) as { api_key?: { scopes: string[]; expires_at: string | null }; error?: { code: string } },
    };
  };
  const status = async (key: string, path: string) =>
    (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } })).status;

  it('es: a refused form keeps what was typed; then a key with the permissions ticked, the addresses typed and a date', async () => {
    const page = await signedIn(EMAILS.ownerA, 'es-ES');
    await page.getByLabel('Nombre', { exact: true }).fill('Asistente de IA');
    for (const name of [/^Citas/, /^Clientas/, /^Llamadas/, /^Cambios/, /^Datos de contacto/])
      await page.getByRole('checkbox', { name }).uncheck();
    await page.getByLabel('Direcciones permitidas (opcional)').fill('127.0.0.1, 203.0.113.0/33');
    await page.getByRole('button', { name: 'Crear clave' }).click();

    // refused: both errors shown, what was typed kept, focus on the first field in error
    await expect.poll(() => page.getByText('Marca al menos un permiso de la lista.').isVisible()).toBe(true);
    expect(await page.getByText('«203.0.113.0/33» no es una dirección IPv4 o IPv6 ni un rango CIDR').isVisible()).toBe(true);
    expect(await page.getByLabel('Nombre', { exact: true }).inputValue()).toBe('Asistente de IA');
    expect(await page.getByLabel('Direcciones permitidas (opcional)').inputValue()).toBe('127.0.0.1, 203.0.113.0/33');
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('scope-citas-read');
    expect((await t.keys.list(t.clinicA.id)).some((k) => k.name === 'Asistente de IA')).toBe(false);

    for (const name of [/^Citas/, /^Clientas/, /^Llamadas/]) await page.getByRole('checkbox', { name }).check();
    await page.getByLabel('Direcciones permitidas (opcional)').fill('127.0.0.1');
    await page.getByLabel('Caduca', { exact: true }).selectOption('date');
    await page.getByLabel('Fecha de caducidad').fill('2026-04-07');
    await page.getByRole('button', { name: 'Crear clave' }).click();
    const key = await page.getByLabel('Nueva clave de API').inputValue();

    const answer = await me(key);
    expect(answer.body.api_key).toMatchObject({
      scopes: ['citas:read', 'clientas:read', 'llamadas:read'],
      expires_at: '2026-04-08T00:00:00+02:00',
    });
    expect(await status(key, '/api/v1/citas')).toBe(200);
    expect(await status(key, '/api/v1/eventos')).toBe(403);

    await page.reload();
    const row = page.locator('tr', { hasText: 'Asistente de IA' });
    expect(await row.getByText('Solo desde 127.0.0.1').isVisible()).toBe(true);
    expect(await row.getByText('Caduca en 10 días').isVisible()).toBe(true);
    expect(await row.locator('.chips li').allTextContents()).toEqual(['Citas', 'Clientas', 'Llamadas']);
  });

  it('es: edit a key’s permissions and addresses; the API reads the change at once', async () => {
    const page = await signedIn(EMAILS.ownerA, 'es-ES');
    await page.getByLabel('Nombre', { exact: true }).fill('Panel de reservas');
    for (const name of [/^Clientas/, /^Llamadas/, /^Cambios/, /^Datos de contacto/]) await page.getByRole('checkbox', { name }).uncheck();
    await page.getByRole('button', { name: 'Crear clave' }).click();
    const key = await page.getByLabel('Nueva clave de API').inputValue();
    expect(await status(key, '/api/v1/clientas')).toBe(403);

    await page.getByRole('link', { name: 'Ya la he copiado' }).click();
    await page.getByRole('link', { name: 'Editar la clave «Panel de reservas»' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Editar la clave «Panel de reservas»' }).isVisible()).toBe(true);
    expect(await page.getByRole('checkbox', { name: /^Citas/ }).isChecked()).toBe(true);
    expect(await page.getByRole('checkbox', { name: /^Clientas/ }).isChecked()).toBe(false);
    await page.getByRole('checkbox', { name: /^Clientas/ }).check();
    await page.getByLabel('Direcciones permitidas (opcional)').fill('198.51.100.0/24');
    await page.getByRole('button', { name: 'Guardar cambios' }).click();
    await expect.poll(() => page.getByText('Se guardaron los cambios de la clave «Panel de reservas».').isVisible()).toBe(true);

    // the test calls from 127.0.0.1, now outside the key's addresses
    const refused = await me(key);
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'ip_not_allowed']);
    await page.getByRole('link', { name: 'Editar la clave «Panel de reservas»' }).click();
    await page.getByLabel('Direcciones permitidas (opcional)').fill('');
    await page.getByRole('button', { name: 'Guardar cambios' }).click();
    await expect.poll(() => page.getByText('Se guardaron los cambios').isVisible()).toBe(true);
    expect((await me(key)).body.api_key?.scopes).toEqual(['citas:read', 'clientas:read']);
    expect(await status(key, '/api/v1/clientas')).toBe(200);
  });

  it('en: roll a key at once; the new one is shown once and works, the old one is refused; keys due soon are marked', async () => {
    const page = await signedIn(EMAILS.ownerB, 'en-GB');
    await page.getByLabel('Name', { exact: true }).fill('Reminders');
    await page.getByLabel('Expires', { exact: true }).selectOption('date');
    await page.getByLabel('Expiry date').fill('2026-03-30');
    await page.getByRole('button', { name: 'Create key' }).click();
    const old = await page.getByLabel('New API key').inputValue();
    await page.getByRole('link', { name: 'I have copied it' }).click();
    expect(await page.locator('tr', { hasText: 'Reminders' }).getByText('Expires in 2 days').isVisible()).toBe(true);

    await page.getByRole('link', { name: 'Roll the key “Reminders”' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Roll the key “Reminders”?' }).isVisible()).toBe(true);
    expect(await page.getByLabel('The old key keeps working').inputValue()).toBe('86400');
    await page.getByLabel('The old key keeps working').selectOption({ label: 'No: it stops working now' });
    await page.getByRole('button', { name: 'Make the new key' }).click();
    const fresh = await page.getByLabel('New API key').inputValue();
    expect(fresh).not.toBe(old);
    expect(await page.getByText('The old key no longer works.').isVisible()).toBe(true);
    expect((await me(old)).status).toBe(401);
    expect((await me(fresh)).status).toBe(200);

    await page.reload();
    expect(await page.locator('#new-key').count()).toBe(0);
    const rows = page.locator('tr', { hasText: 'Reminders' });
    expect(await rows.count()).toBe(2);
    expect(await rows.getByText('Expired').count()).toBe(1);
    expect(await rows.getByText('Active').count()).toBe(1);
  });
});
