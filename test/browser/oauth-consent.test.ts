// An app's "Connect" in a real headless Chromium against a listening server: the app registers
// (RFC 7591) and runs the flow with a real OAuth client library (oauth4webapi); its redirect URI is
// a real HTTP server on 127.0.0.1 that records what the browser brings back. The owner signs in,
// reads the consent page (the app's name, where she returns, the scopes in plain words, in her
// language), unticks one scope and allows: the app's token lacks it. A deny brings access_denied
// back; staff are refused; the request log names the app and filters by it; Connected apps
// lists the grant and Disconnect ends it. An invalid request shows the error page in the
// browser's language and sends nothing to the app. Clicks and keyboard only, and no Content
// Security Policy violation (the form's redirect to the app included).
import { createServer, type Server } from 'node:http';
import * as oauth from 'oauth4webapi';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { App, EMAILS, startOAuthServer, type OAuthServer } from '../oauth/helpers.js';
import { PASSWORD } from '../admin/helpers.js';
import { CHROMIUM_PATH, chromiumPresent, launchChromium, SKIP_REASON } from './chromium.js';

if (!chromiumPresent) process.stderr.write(`\n[browser tests] SKIPPED: ${SKIP_REASON}\n\n`);
const TITLE = chromiumPresent
  ? `the OAuth consent page and Connected apps in headless Chromium (${CHROMIUM_PATH})`
  : `the OAuth consent page in headless Chromium: SKIPPED, ${SKIP_REASON}`;

/** The app's redirect URI: a real server that answers every callback and keeps its URL. */
async function callbackServer(): Promise<{ server: Server; url: string; received: URL[] }> {
  const received: URL[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    // Chromium also asks the page's host for /favicon.ico: only the callback counts.
    if (url.pathname === '/callback') received.push(url);
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('the app got the answer');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}/callback`, received };
}

describe.skipIf(!chromiumPresent)(TITLE, () => {
  let s: OAuthServer;
  let browser: Browser;
  let cb: Awaited<ReturnType<typeof callbackServer>>;
  let app: App;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    s = await startOAuthServer('sqlite');
    cb = await callbackServer();
    browser = await launchChromium();
    app = await App.register(s.origin, `${s.origin}/api/v1`, 'Agenda Partner', cb.url);
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await new Promise((resolve) => cb?.server.close(resolve));
    await s?.close();
  });

  async function newPage(locale: string): Promise<{ page: Page; violations: string[] }> {
    const ctx = await browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
    contexts.push(ctx);
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    return { page, violations };
  }

  async function signIn(page: Page, email: string) {
    await page.locator('#email').fill(email);
    await page.locator('#password').fill(PASSWORD);
    await page.locator('#password').press('Enter');
  }

  /** The callback the browser brought back to the app (the last one the server received), once it has. */
  async function callbackAfter(page: Page, before: number): Promise<URL> {
    await page.waitForURL((u) => u.href.startsWith(cb.url));
    await expect.poll(() => cb.received.length).toBe(before + 1);
    return cb.received[before]!;
  }

  const api = (token: string, path = '/api/v1/me') => fetch(`${s.origin}${path}`, { headers: { authorization: `Bearer ${token}` } });

  it('es: signs in from the app, reads the consent page, unticks a scope and allows; then Connected apps and Disconnect', async () => {
    const { page, violations } = await newPage('es-ES');
    const { url, verifier, state } = await app.authorizationUrl({ scope: 'citas:read clientas:read contacto:read' });
    await page.goto(url.href);
    // Signed out: the sign-in page first, which comes back to the consent page.
    await page.waitForURL(/\/dashboard\/sign-in\?/);
    await signIn(page, EMAILS.ownerA);
    await page.waitForURL(/\/dashboard\/oauth\/consent\?uid=/);

    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('«Agenda Partner» quiere acceder a los datos de tu clínica');
    expect(await page.locator('#consent-app').textContent()).toBe('Agenda Partner');
    // The name is the app's own choice: said so next to it.
    expect(await page.locator('#consent-app-unverified').textContent()).toBe(
      'Es el nombre que la aplicación se ha dado a sí misma; nadie lo ha verificado.',
    );
    expect(await page.locator('#consent-redirect').textContent()).toBe(new URL(cb.url).host);
    expect(await page.locator('#consent-clinic').textContent()).toBe('Clínica Uno');
    // One clinic is shown, not chosen: no label pointing at something that is not a control.
    expect(await page.locator('label[for="consent-clinic"]').count()).toBe(0);
    // Only what the app asked for, in plain words, each one ticked to start with; then test mode, unticked.
    const boxes = page.getByRole('checkbox');
    expect(await boxes.count()).toBe(4);
    expect(await page.getByRole('checkbox', { name: /^Modo de prueba/ }).isChecked()).toBe(false);
    expect(await page.locator('#consent .scope-name').allTextContents()).toEqual(['Citas', 'Clientas', 'Datos de contacto']);
    expect(await page.locator('#consent .scope-what').first().textContent()).toContain('Fecha y hora, servicio, precio');
    for (const name of [/^Citas/, /^Clientas/, /^Datos de contacto/])
      expect(await page.getByRole('checkbox', { name }).isChecked()).toBe(true);

    await page.getByRole('checkbox', { name: /^Clientas/ }).uncheck();
    const before = cb.received.length;
    await page.getByRole('button', { name: 'Permitir' }).click();
    const callback = await callbackAfter(page, before);
    expect(callback.searchParams.get('code')).toBeTruthy();

    const tokens = await app.exchange({ callback, verifier, state });
    expect(tokens.scope!.split(' ').sort()).toEqual(['citas:read', 'contacto:read']);
    expect((await api(tokens.access_token)).status).toBe(200);
    expect((await api(tokens.access_token, '/api/v1/citas')).status).toBe(200);
    const refused = await api(tokens.access_token, '/api/v1/clientas');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { scope: string } }).error.scope).toBe('clientas:read');

    // Settings > API > Logs: the app's requests under its name, and the filter by app.
    await s.rt.requestLog!.flush();
    await page.goto(`${s.origin}/dashboard/settings/api/logs`);
    await page.getByLabel('Aplicación', { exact: true }).selectOption({ label: 'Agenda Partner' });
    await page.getByRole('button', { name: 'Filtrar' }).click();
    await page.waitForURL(/app=/);
    const logged = page.locator('table.request-log tbody tr');
    expect(await logged.count()).toBe(3);
    expect(await logged.first().textContent()).toContain('Agenda Partner');
    await logged
      .first()
      .getByRole('link', { name: /Detalles/ })
      .click();
    await page.waitForURL(/\/logs\/[0-9a-f-]{36}$/); // addressed by its request id
    expect(await page.locator('#request-app').textContent()).toContain('Agenda Partner');

    // Settings > API > Connected apps: the grant, its scopes in words, who granted it.
    await page.goto(`${s.origin}/dashboard/settings/api`);
    await page.getByRole('link', { name: 'Apps conectadas', exact: true }).click();
    await page.waitForURL(`${s.origin}/dashboard/settings/api/apps`);
    const row = page.locator('#apps tbody tr', { hasText: 'Agenda Partner' });
    expect(await row.count()).toBe(1);
    expect(await row.locator('td').nth(1).textContent()).toBe('Citas, Datos de contacto');
    expect(await row.getByText(EMAILS.ownerA).isVisible()).toBe(true);
    expect(await row.getByText('Conectada', { exact: true }).isVisible()).toBe(true);

    await row.getByRole('link', { name: 'Desconectar' }).click();
    await expect.poll(() => page.getByRole('heading', { name: '¿Desconectar Agenda Partner?' }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Sí, desconectar' }).click();
    await expect.poll(() => page.locator('#apps-notice').textContent()).toContain('Agenda Partner se ha desconectado.');
    expect(await row.getByText('Desconectada', { exact: true }).isVisible()).toBe(true);
    expect(await row.getByRole('link', { name: 'Desconectar' }).count()).toBe(0);
    // The token and its refresh token are refused at once.
    expect((await api(tokens.access_token)).status).toBe(401);
    await expect(app.refresh(tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect(violations).toEqual([]);
  });

  it('en: the consent page in English for an English clinic; Deny brings access_denied back to the app', async () => {
    const { page, violations } = await newPage('en-GB');
    await page.goto(`${s.origin}/dashboard`);
    await signIn(page, EMAILS.ownerB);
    await page.waitForURL(`${s.origin}/dashboard/settings/api`);
    const grantsBefore = (await s.appGrantsOf()).length;

    const { url, state } = await app.authorizationUrl({ scope: 'llamadas:read eventos:read' });
    await page.goto(url.href);
    await page.waitForURL(/\/dashboard\/oauth\/consent\?uid=/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('“Agenda Partner” wants to access your clinic’s data');
    expect(await page.locator('#consent-clinic').textContent()).toBe('Clinic Two');
    expect(await page.locator('#consent .scope-name').allTextContents()).toEqual(['Calls', 'Changes']);
    expect(await page.locator('#consent .scope-what').first().textContent()).toContain('The calls the voice assistant answered');
    expect(await page.getByRole('button', { name: 'Allow' }).isVisible()).toBe(true);

    const before = cb.received.length;
    await page.getByRole('button', { name: 'Deny' }).click();
    const callback = await callbackAfter(page, before);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('code')).toBeNull();
    expect(() => oauth.validateAuthResponse(app.as, app.client, callback, state)).toThrow(
      expect.objectContaining({ error: 'access_denied' }) as Error,
    );
    expect((await s.appGrantsOf()).length).toBe(grantsBefore);
    expect(violations).toEqual([]);
  });

  it('staff: told that only the owner can connect apps; no form, nothing sent to the app', async () => {
    const { page } = await newPage('es-ES');
    await page.goto(`${s.origin}/dashboard`);
    await signIn(page, EMAILS.staffA);
    await page.waitForURL(/\/dashboard\//);
    const before = cb.received.length;

    const { url } = await app.authorizationUrl({ scope: 'citas:read' });
    const answer = page.waitForResponse((r) => r.url().includes('/dashboard/oauth/consent?uid='));
    await page.goto(url.href);
    expect((await answer).status()).toBe(403);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('No puedes hacer esto');
    expect(
      await page
        .getByText('Solo la dueña de la clínica (o un superadministrador) puede conectar aplicaciones. Pídeselo a ella.')
        .isVisible(),
    ).toBe(true);
    expect(await page.getByRole('button', { name: 'Permitir' }).count()).toBe(0);
    expect(await page.getByRole('checkbox').count()).toBe(0);
    expect(cb.received.length).toBe(before);
  });
  it('an invalid authorization request (no PKCE): the error page in the browser’s language, styled, nothing sent to the app', async () => {
    for (const [locale, heading] of [
      ['es-ES', 'No se puede completar la conexión de la aplicación'],
      ['en-GB', 'The app’s connection cannot be completed'],
    ] as const) {
      const { page, violations } = await newPage(locale);
      const before = cb.received.length;
      const { url } = await app.authorizationUrl({ scope: 'citas:read', pkce: false });
      const answer = page.waitForResponse((r) => r.url().startsWith(`${s.origin}/oauth/auth`));
      await page.goto(url.href);
      expect((await answer).status()).toBe(400);
      expect(page.url().startsWith(`${s.origin}/oauth/auth`)).toBe(true);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(heading);
      expect(await page.locator('#oauth-error').isVisible()).toBe(true);
      // The dashboard's stylesheet is loaded under the page's own CSP.
      expect(await page.evaluate<number>('[...document.styleSheets].reduce((n, sheet) => n + sheet.cssRules.length, 0)')).toBeGreaterThan(
        0,
      );
      expect(cb.received.length).toBe(before);
      expect(violations).toEqual([]);
    }
  });
});
