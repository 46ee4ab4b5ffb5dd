// The OAuth part of `npm run screenshots` (scripts/screenshots.ts): an app connected earlier, and
// an AI assistant's "Connect" on camera: it registers (RFC 7591), the owner's browser reaches the
// consent page (17-oauth-consent.png), she unticks a permission and allows, and Connected apps
// lists both (18-connected-apps.png). The redirect back to the assistant is answered inside the
// browser: nothing outside the local server is contacted.
import { createHash, randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { touchGrant } from '../src/repos/oauth.js';
import type { Runtime } from '../src/runtime.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** A CRM the owner connected two weeks ago, last used two hours ago. */
export async function seedConnectedApp(rt: Runtime, clock: { now: number }, clinicId: string, ownerId: string, resource: string) {
  const real = clock.now;
  const grantId = randomBytes(32).toString('base64url');
  clock.now = real - 14 * DAY;
  await rt.appGrants.recordConsent({
    grantId,
    clinicId,
    clientId: 'agenda-partner-crm',
    clientName: 'Agenda Partner CRM',
    redirectHost: 'app.agendapartner.example',
    scopes: ['citas:read', 'clientas:read'],
    resource,
    grantedBy: ownerId,
  });
  clock.now = real;
  await touchGrant(rt.database.db, clinicId, grantId, Math.floor((real - 2 * HOUR) / 1000));
}

/** The assistant registers and sends the browser to this authorization URL (PKCE S256, the /mcp resource). */
async function connectUrl(base: string): Promise<{ url: string; redirect: string }> {
  const redirect = 'https://claude.ai/api/mcp/auth_callback';
  const res = await fetch(`${base}/oauth/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Claude', redirect_uris: [redirect], token_endpoint_auth_method: 'none' }),
  });
  if (res.status !== 201) throw new Error(`registration answered ${res.status}: ${await res.text()}`);
  const { client_id } = (await res.json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${base}/oauth/auth`);
  for (const [k, v] of Object.entries({
    client_id,
    redirect_uri: redirect,
    response_type: 'code',
    resource: `${base}/mcp`,
    scope: 'citas:read clientas:read llamadas:read contacto:read',
    state: randomBytes(16).toString('base64url'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(k, v);
  return { url: url.href, redirect };
}

/** The consent page and Connected apps, on a fresh page of the owner's (signed in by `signIn`). */
export async function shootApps(
  page: Page,
  base: string,
  shot: (page: Page, name: string, fullPage?: boolean) => Promise<void>,
  signIn: (page: Page) => Promise<void>,
) {
  await signIn(page);
  const connect = await connectUrl(base);
  await page.route(`${connect.redirect}**`, (route) => route.fulfill({ contentType: 'text/plain', body: 'connected' }));
  await page.goto(connect.url);
  await page.waitForSelector('#consent');
  await page.getByRole('checkbox', { name: /^Datos de contacto/ }).uncheck();
  await page.mouse.move(0, 0);
  await shot(page, '17-oauth-consent.png');
  await page.getByRole('button', { name: 'Permitir' }).click();
  await page.waitForURL((u) => u.href.startsWith(connect.redirect));
  await page.goto(`${base}/dashboard/settings/api/apps`);
  await page.waitForSelector('#apps');
  await shot(page, '18-connected-apps.png', false);
}
