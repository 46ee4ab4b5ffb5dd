// The dashboard in a real headless Chromium against a real listening server: the key lifecycle
// end to end, roles, the plan gate, CSRF and sign-in throttling, as a clinic owner would meet them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboardApp, EMAILS, PASSWORD, type DashboardApp } from '../admin/helpers.js';
import { CHROMIUM_PATH, chromiumPresent, launchChromium, SKIP_REASON } from './chromium.js';

if (!chromiumPresent) process.stderr.write(`\n[browser tests] SKIPPED: ${SKIP_REASON}\n\n`);

const TITLE = chromiumPresent
  ? `dashboard in headless Chromium (${CHROMIUM_PATH})`
  : `dashboard in headless Chromium: SKIPPED, ${SKIP_REASON}`;

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

  async function newPage(opts: { javaScriptEnabled?: boolean; locale?: string } = {}): Promise<Page> {
    const ctx = await browser.newContext({ locale: 'es-ES', viewport: { width: 1280, height: 900 }, ...opts });
    contexts.push(ctx);
    return ctx.newPage();
  }

  async function signIn(page: Page, email: string, password = PASSWORD) {
    await page.goto(`${base}/dashboard`);
    await page.getByLabel('Correo electrónico').fill(email);
    await page.getByLabel('Contraseña').fill(password);
    await page.getByRole('button', { name: 'Entrar' }).click();
  }

  const api = (key: string) => fetch(`${base}/api/v1/citas`, { headers: { authorization: `Bearer ${key}` } });

  it('owner: signs in with the keyboard, creates a key, sees it once, uses it, revokes it', async () => {
    const page = await newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.goto(`${base}/dashboard`);
    expect(page.url()).toBe(`${base}/dashboard/sign-in`);
    // keyboard only: the e-mail field has focus, Tab moves on, Enter submits
    await expect.poll(() => page.evaluate<string | undefined>('document.activeElement?.id')).toBe('email');
    await page.keyboard.type(EMAILS.ownerA);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}/dashboard/settings/api`);
    await expect.poll(() => page.getByRole('heading', { name: 'Claves de API' }).isVisible()).toBe(true);

    await page.getByLabel('Nombre', { exact: true }).fill('Reservas web');
    await page.getByLabel('Caduca').selectOption('90');
    await page.getByRole('button', { name: 'Crear clave' }).click();

    const input = page.getByLabel('Nueva clave de API');
    await input.waitFor();
    const key = await input.inputValue();
    expect(key).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    expect(await page.getByText('No volverás a verla').isVisible()).toBe(true);
    // the new key has focus, and the copy button (the page's only script) copies it
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('new-key');
    await page.getByRole('button', { name: 'Copiar' }).click();
    await expect.poll(() => page.locator('#copy-status').textContent()).toBe('Copiada al portapapeles.');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key);

    expect((await api(key)).status).toBe(200);

    await page.reload();
    expect(await page.locator('#new-key').count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    const row = page.locator('tr', { hasText: 'Reservas web' });
    expect(await row.getByText(`svc_…${key.slice(-4)}`).isVisible()).toBe(true);
    expect(await row.getByText('Activa').isVisible()).toBe(true);

    await row.getByRole('link', { name: 'Revocar la clave «Reservas web»' }).click();
    await expect.poll(() => page.getByRole('heading', { name: '¿Revocar la clave «Reservas web»?' }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Revocar clave' }).click();
    await expect.poll(() => page.getByText('La clave «Reservas web» está revocada.').isVisible()).toBe(true);
    expect(await page.locator('tr', { hasText: 'Reservas web' }).getByText('Revocada').isVisible()).toBe(true);

    const refused = await api(key);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');

    await page.getByRole('button', { name: 'Cerrar sesión' }).click();
    await expect.poll(() => page.getByText('Has cerrado la sesión.').isVisible()).toBe(true);
  });

  it('works without JavaScript: the key is still shown once, only the copy button is missing', async () => {
    const page = await newPage({ javaScriptEnabled: false });
    await signIn(page, EMAILS.ownerA);
    await page.getByLabel('Nombre', { exact: true }).fill('Sin JavaScript');
    await page.getByRole('button', { name: 'Crear clave' }).click();
    const key = await page.getByLabel('Nueva clave de API').inputValue();
    expect(key).toMatch(/^svc_/);
    expect(await page.getByRole('button', { name: 'Copiar' }).count()).toBe(0);
    expect((await api(key)).status).toBe(200);
  });

  it('staff: sees the keys and why they cannot create one', async () => {
    const page = await newPage();
    await signIn(page, EMAILS.staffA);
    await page.waitForURL(`${base}/dashboard/settings/api`);
    expect(await page.getByText('Solo la persona titular de la clínica puede crear o revocar claves de API.').isVisible()).toBe(true);
    expect(await page.getByText(EMAILS.ownerA, { exact: false }).first().isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Crear clave' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: /^Revocar/ }).count()).toBe(0);
  });

  it('a clinic on a lower plan sees that the API needs an upgrade, and cannot create', async () => {
    const page = await newPage();
    await signIn(page, EMAILS.ownerLow);
    await page.waitForURL(`${base}/dashboard/settings/api`);
    expect(await page.getByText('La API no está incluida en el plan Pro.').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Crear clave' }).count()).toBe(0);
  });

  it('refuses a POST without the CSRF token, and a forged form from another site', async () => {
    const page = await newPage();
    await signIn(page, EMAILS.ownerA);
    await page.waitForURL(`${base}/dashboard/settings/api`);
    const before = (await t.keys.list(t.clinicA.id)).length;

    // the real create form, with its CSRF field taken out
    await page.locator('form.create input[name="_csrf"]').evaluate((el) => el.remove());
    await page.getByLabel('Nombre', { exact: true }).fill('Forged');
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/dashboard/settings/api/keys') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Crear clave' }).click(),
    ]);
    expect(response.status()).toBe(403);
    await expect.poll(() => page.getByText('Este formulario ha caducado').isVisible()).toBe(true);

    // the page allows no script-initiated requests at all (CSP connect-src falls back to 'none')
    const fetched = await page.evaluate<string>(
      `fetch('/dashboard/settings/api/keys', { method: 'POST', body: 'name=x' }).then(() => 'sent', () => 'blocked')`,
    );
    expect(fetched).toBe('blocked');

    // another site (localhost is a different site from 127.0.0.1) posts a form at the dashboard
    const attacker = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<form id="f" method="post" action="${base}/dashboard/settings/api/keys">
        <input name="_csrf" value="guess"><input name="name" value="Evil"><input name="expires" value="never"></form>
        <script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const port = (attacker.address() as AddressInfo).port;
      await page.goto(`http://localhost:${port}/`);
      await page.waitForURL((u) => u.toString().startsWith(base));
      expect(await page.content()).not.toContain('Nueva clave de API');
    } finally {
      attacker.close();
    }
    expect((await t.keys.list(t.clinicA.id)).length).toBe(before);
  });

  it('language: English chosen on the sign-in page stays after a reload and after signing in to a Spanish clinic', async () => {
    const page = await newPage(); // a Spanish browser (Accept-Language: es-ES)
    const lang = () => page.locator('html').getAttribute('lang');
    await page.goto(`${base}/dashboard/sign-in`);
    expect(await lang()).toBe('es');
    await page.getByRole('navigation', { name: 'Idioma' }).getByRole('button', { name: 'English' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).isVisible()).toBe(true);
    expect(page.url()).toBe(`${base}/dashboard/sign-in`);

    await page.reload();
    expect(await lang()).toBe('en');
    expect(await page.getByRole('navigation', { name: 'Language' }).getByText('English').getAttribute('aria-current')).toBe('true');
    const cookie = (await page.context().cookies()).find((c) => c.name === 'clinic_lang');
    expect(cookie).toMatchObject({ value: 'en', path: '/dashboard', sameSite: 'Lax', httpOnly: true });
    expect(cookie!.expires).toBeGreaterThan(Date.now() / 1000 + 300 * 86_400); // kept across browser restarts

    await page.getByLabel('E-mail').fill(EMAILS.ownerA); // Clínica Uno speaks Spanish
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/dashboard/settings/api`);
    await expect.poll(() => page.getByRole('heading', { name: 'API keys' }).isVisible()).toBe(true);
    expect(await lang()).toBe('en');

    // and back to Spanish from the top bar, with the keyboard
    await page.getByRole('navigation', { name: 'Language' }).getByRole('button', { name: 'Español' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('heading', { name: 'Claves de API' }).isVisible()).toBe(true);
    expect(page.url()).toBe(`${base}/dashboard/settings/api`);
  });

  it('language: an English browser’s sign-in page stays English after signing in to a Spanish clinic, until switched', async () => {
    const page = await newPage({ locale: 'en-GB' }); // Accept-Language: en-GB; no choice made
    const lang = () => page.locator('html').getAttribute('lang');
    await page.goto(`${base}/dashboard`);
    expect(await lang()).toBe('en');
    await page.getByLabel('E-mail').fill(EMAILS.staffA); // Clínica Uno speaks Spanish
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/dashboard/settings/api`);
    await expect.poll(() => page.getByRole('heading', { name: 'API keys', exact: true }).isVisible()).toBe(true);
    expect(await lang()).toBe('en');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Webhooks', exact: true }).isVisible()).toBe(true);
    expect(await lang()).toBe('en');
    expect((await page.context().cookies()).some((c) => c.name === 'clinic_lang')).toBe(false);

    // switching wins over the session's language
    await page.getByRole('navigation', { name: 'Language' }).getByRole('button', { name: 'Español' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Webhooks', exact: true }).isVisible()).toBe(true);
    await expect.poll(lang).toBe('es');
  });

  it('throttles wrong passwords: after five failures the account must wait', async () => {
    const page = await newPage();
    for (let i = 1; i <= 5; i++) {
      await signIn(page, EMAILS.ownerB, `wrong password ${i}`);
      await expect.poll(() => page.getByText('El correo o la contraseña no son correctos.').isVisible()).toBe(true);
    }
    await signIn(page, EMAILS.ownerB, PASSWORD);
    await expect.poll(() => page.getByText(/Demasiados intentos fallidos/).isVisible()).toBe(true);
    expect(page.url()).toBe(`${base}/dashboard/sign-in`);
  });
});
