// npm run screenshots: renders the dashboard's main states into docs/screenshots/*.png with
// headless Chromium (CHROMIUM_PATH, default /usr/bin/chromium), on an in-memory database seeded
// with realistic clinics, people, keys and a week of API usage. Nothing is downloaded, and the
// browser reaches nothing but the local server (an app's redirect is answered in the browser).
//
//   npm run screenshots              # every image
//   npm run screenshots -- 17 18     # only the images whose names start with these
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { touchApiKeys } from '../src/repos/api-keys.js';
import type { Scope } from '../src/domain/scopes.js';
import { createClinic, createUser } from '../src/services/accounts.js';
import { insertWebhookDelivery } from '../src/repos/webhooks.js';
import { openRuntime } from '../src/runtime.js';
import { freePort } from '../tools/net.js';
import { seedConnectedApp, shootApps } from './screenshots-apps.js';
import { shootMake } from './screenshots-make.js';

const OUT = path.resolve('docs/screenshots');
const PASSWORD = 'demo-password-123';
const PEPPER = 'screenshots-pepper-0123456789abcdefghijklmnop';
const DAY = 86_400_000;
const HOUR = 3_600_000;

async function seed() {
  // OAuth on (the consent page and Connected apps): its issuer is the server's own address.
  const port = await freePort();
  const config = loadConfig({
    DATA_DIR: path.join(tmpdir(), 'clinic-api-screens'),
    API_KEY_PEPPER: PEPPER,
    OAUTH_ISSUER: `http://127.0.0.1:${port}`,
  });
  const real = Date.now();
  const clock = { now: real };
  // Webhook destinations as a clinic would have them: a public host name (resolved here to a
  // documentation address, so nothing is looked up or contacted; the worker is not started).
  const rt = await openRuntime(config, {
    target: { kind: 'sqlite', file: ':memory:' },
    now: () => clock.now,
    logTo: false,
    processMetrics: false,
    resolveHost: async () => [{ address: '93.184.216.34', family: 4 }],
  });
  const { database, keys, usage, webhooks } = rt;
  const db = database.db;

  const aurora = await createClinic(db, { name: 'Clínica Aurora', plan: 'premium', language: 'es' }, real - 400 * DAY);
  // Brisa had Pro Total when it made its key, then moved down to Pro: the key still works, but
  // no new one can be made.
  const brisa = await createClinic(db, { name: 'Centro Estético Brisa', plan: 'pro_total', language: 'es' }, real - 300 * DAY);
  const smile = await createClinic(
    db,
    { name: 'Bright Smile Dental', plan: 'enterprise', language: 'en', timezone: 'Europe/London', currency: 'GBP' },
    real - 200 * DAY,
  );
  const ana = await createUser(db, { clinicId: aurora.id, email: 'ana.garcia@aurora.example', role: 'owner', password: PASSWORD });
  await createUser(db, { clinicId: aurora.id, email: 'lucia.mora@aurora.example', role: 'staff', password: PASSWORD });
  const bea = await createUser(db, { clinicId: brisa.id, email: 'bea@brisa.example', role: 'owner', password: PASSWORD });
  const emma = await createUser(db, { clinicId: smile.id, email: 'emma@brightsmile.example', role: 'owner', password: PASSWORD });
  await createUser(db, { clinicId: null, email: 'soporte@plataforma.example', role: 'superadmin', password: PASSWORD });

  const at = async (
    ms: number,
    clinicId: string,
    name: string,
    by: string | null,
    expiresInDays: number | null,
    access: { scopes?: Scope[]; allowedIps?: string[] } = {},
  ) => {
    clock.now = ms;
    const k = await keys.create({
      clinicId,
      name,
      createdBy: by,
      expiresAt: expiresInDays === null ? null : Math.floor(ms / 1000) + expiresInDays * 86_400,
      ...access,
    });
    clock.now = real;
    return k;
  };
  const web = await at(real - 62 * DAY, aurora.id, 'Reservas web', ana.id, null, {
    scopes: ['citas:read'],
    allowedIps: ['203.0.113.0/24'],
  });
  const report = await at(real - 20 * DAY, aurora.id, 'Informe mensual (Looker)', ana.id, 365, {
    scopes: ['citas:read', 'clientas:read', 'llamadas:read'],
  });
  const crm = await at(real - 190 * DAY, aurora.id, 'CRM antiguo', null, null);
  await keys.revoke(aurora.id, crm.id);
  await at(real - 20 * DAY, aurora.id, 'Pruebas agencia', ana.id, 30);
  await touchApiKeys(db, [web.id], Math.floor((real - 4 * 60_000) / 1000));
  await touchApiKeys(db, [report.id], Math.floor((real - 3 * HOUR) / 1000));
  await at(real - 90 * DAY, brisa.id, 'Web de reservas', bea.id, null);
  await db.updateTable('clinics').set({ plan: 'pro' }).where('id', '=', brisa.id).execute();
  const smileKey = await at(real - 15 * DAY, smile.id, 'Patient reminders', emma.id, 90);
  await touchApiKeys(db, [smileKey.id], Math.floor((real - 25 * 60_000) / 1000));

  // A week of traffic: the website's key busy on weekdays, the report's once a day with a few
  // parameter mistakes, the reminders' steady with one burst over the rate limit.
  const record = (keyId: string, clinicId: string, tz: string, atMs: number, status: number, errorCode: string | null, n: number) => {
    for (let i = 0; i < n; i++) usage.record({ keyId, clinicId, timezone: tz, status, errorCode, atMs });
  };
  const webDaily = [412, 530, 498, 611, 587, 143, 96];
  for (let d = 0; d < 7; d++) {
    const dayMs = real - (6 - d) * DAY;
    record(web.id, aurora.id, aurora.timezone, dayMs - HOUR, 200, null, webDaily[d]!);
    record(report.id, aurora.id, aurora.timezone, dayMs - 2 * HOUR, 200, null, 24 + (d % 3) * 6);
    record(smileKey.id, smile.id, smile.timezone, dayMs - HOUR, 200, null, 180 + d * 15);
  }
  record(web.id, aurora.id, aurora.timezone, real - 2 * DAY - 5 * HOUR, 429, 'too_many_requests', 18);
  record(report.id, aurora.id, aurora.timezone, real - 3 * HOUR, 400, 'invalid_parameter', 3);
  record(report.id, aurora.id, aurora.timezone, real - 4 * DAY, 400, 'unknown_parameter', 5);
  record(smileKey.id, smile.id, smile.timezone, real - 26 * HOUR, 429, 'too_many_requests', 40);
  await usage.flush();

  // An app Ana connected two weeks ago, used this morning (Connected apps lists it beside the one
  // connected on camera).
  await seedConnectedApp(rt, clock, aurora.id, ana.id, `http://127.0.0.1:${port}/api/v1`);

  const app = await buildApp(rt);
  const address = await app.listen({ port, host: '127.0.0.1' });
  return { app, rt, database, address, aurora, webhooks };
}

/** A week of deliveries to an endpoint, the last ones failing (what its page shows). */
async function seedDeliveries(database: Awaited<ReturnType<typeof seed>>['database'], clinicId: string, endpointId: string) {
  const real = Date.now();
  const rows: [number, string, number, string, number | null, string | null, number][] = [
    [real - 50 * 60_000, 'cita.creada', 1, 'delivered', 200, null, 84],
    [real - 48 * 60_000, 'clienta.actualizada', 1, 'delivered', 200, null, 61],
    [real - 46 * 60_000, 'cita.actualizada', 1, 'delivered', 204, null, 73],
    [real - 31 * 60_000, 'cita.eliminada', 1, 'failed', 503, null, 212],
    [real - 30 * 60_000, 'cita.eliminada', 2, 'failed', null, 'timeout', 10_000],
    [real - 27 * 60_000, 'cita.eliminada', 3, 'failed', 502, null, 95],
  ];
  let seq = 100;
  for (const [at, tipo, attempt, outcome, status, error, ms] of rows) {
    await insertWebhookDelivery(database.db, {
      id: crypto.randomUUID(),
      endpoint_id: endpointId,
      clinic_id: clinicId,
      event_id: crypto.randomUUID(),
      tipo,
      seq: attempt === 1 ? ++seq : seq,
      kind: 'auto',
      attempt,
      at_ms: at,
      outcome,
      status_code: status,
      error,
      duration_ms: ms,
    });
  }
  await database.db
    .updateTable('webhook_endpoints')
    .set({ failing_since_ms: real - 31 * 60_000, last_error: 'HTTP 502', attempts: 3, created_at: Math.floor((real - 8 * DAY) / 1000) })
    .where('id', '=', endpointId)
    .execute();
}

async function signIn(page: Page, base: string, email: string) {
  await page.goto(`${base}/dashboard/sign-in`);
  await page.getByLabel(/correo|e-mail/i).fill(email);
  await page.getByLabel(/contraseña|password/i).fill(PASSWORD);
  await page.getByRole('button', { name: /entrar|sign in/i }).click();
  await page.waitForURL(/settings\/api/);
}

async function main() {
  const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (!existsSync(executablePath)) {
    process.stderr.write(
      `screenshots: Chromium not found at ${executablePath}; install it (apt-get install chromium) or set CHROMIUM_PATH\n`,
    );
    process.exit(2);
  }
  mkdirSync(OUT, { recursive: true });
  const { app, rt, database, address, aurora } = await seed();
  const profile = mkdtempSync(path.join(tmpdir(), 'clinic-shots-'));
  let browser: Browser | null = null;
  try {
    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--disk-cache-dir=${profile}`,
      ],
    });
    const only = process.argv.slice(2);
    const shot = async (page: Page, name: string, fullPage = true) => {
      if (only.length > 0 && !only.some((prefix) => name.startsWith(prefix))) return;
      await page.screenshot({ path: path.join(OUT, name), fullPage });
      process.stderr.write(`wrote docs/screenshots/${name}\n`);
    };
    const desktop = { viewport: { width: 1280, height: 860 }, locale: 'es-ES' };

    let ctx = await browser.newContext(desktop);
    let page = await ctx.newPage();
    await page.goto(`${address}/dashboard/sign-in`);
    await shot(page, '01-sign-in.png', false);

    await signIn(page, address, 'ana.garcia@aurora.example');
    await shot(page, '02-keys-owner.png');

    await page.getByLabel('Nombre', { exact: true }).fill('Asistente de IA');
    await page.getByLabel('Caduca', { exact: true }).selectOption('90');
    await page.getByRole('checkbox', { name: /Datos de contacto/ }).uncheck();
    await page.getByRole('checkbox', { name: /Cambios/ }).uncheck();
    await page.getByLabel('Direcciones permitidas (opcional)').fill('203.0.113.0/24');
    await page.locator('#create-title').scrollIntoViewIfNeeded();
    await page.mouse.move(0, 0);
    await shot(page, '13-key-create-permissions.png', false);
    await page.getByRole('button', { name: 'Crear clave' }).click();
    await page.waitForSelector('#new-key');
    await page
      .getByRole('button', { name: 'Copiar' })
      .click()
      .catch(() => {});
    await page.mouse.move(0, 0);
    await shot(page, '03-key-created.png', false);

    await page.goto(`${address}/dashboard/settings/api`);
    await page.getByRole('link', { name: /Revocar la clave «Informe mensual/ }).click();
    await shot(page, '04-revoke-confirm.png', false);

    await page.goto(`${address}/dashboard/settings/api`);
    await page.getByRole('link', { name: /Editar la clave «Informe mensual/ }).click();
    await shot(page, '14-key-edit.png');
    await page.goto(`${address}/dashboard/settings/api`);
    await page.getByRole('link', { name: /Renovar la clave «Reservas web/ }).click();
    await shot(page, '15-key-roll.png', false);
    await page.getByRole('button', { name: 'Crear la clave nueva' }).click();
    await page.waitForSelector('#new-key');
    await page.mouse.move(0, 0);
    await shot(page, '16-key-rolled.png');
    await ctx.close();

    ctx = await browser.newContext(desktop);
    page = await ctx.newPage();
    await signIn(page, address, 'lucia.mora@aurora.example');
    await shot(page, '05-staff-view.png', false);
    await ctx.close();

    ctx = await browser.newContext(desktop);
    page = await ctx.newPage();
    await signIn(page, address, 'bea@brisa.example');
    await shot(page, '06-lower-plan.png', false);
    await ctx.close();

    ctx = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-GB' });
    page = await ctx.newPage();
    await signIn(page, address, 'emma@brightsmile.example');
    await shot(page, '07-english-owner.png');
    await ctx.close();

    ctx = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
      locale: 'es-ES',
    });
    page = await ctx.newPage();
    await signIn(page, address, 'ana.garcia@aurora.example');
    await page.evaluate(`window.scrollTo(0, document.getElementById('keys-title').getBoundingClientRect().top + window.scrollY - 16)`);
    await shot(page, '08-mobile.png', false);
    await ctx.close();

    ctx = await browser.newContext(desktop);
    page = await ctx.newPage();
    await signIn(page, address, 'soporte@plataforma.example');
    await shot(page, '09-superadmin-choose.png', false);
    await page.getByRole('link', { name: /Bright Smile Dental/ }).click();
    await page.waitForSelector('#clinic-switch');
    await shot(page, '10-superadmin-clinic.png', false);
    await ctx.close();

    ctx = await browser.newContext(desktop);
    page = await ctx.newPage();
    await signIn(page, address, 'ana.garcia@aurora.example');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('URL', { exact: true }).fill('https://hooks.aurora-crm.example/clinic-api');
    for (const type of ['cita.creada', 'cita.actualizada', 'cita.eliminada', 'clienta.actualizada']) await page.getByLabel(type).check();
    await page.getByRole('button', { name: 'Añadir destino' }).click();
    await page.waitForSelector('#new-secret');
    await page.mouse.move(0, 0);
    await shot(page, '11-webhook-created.png', false);
    const endpointId = /webhooks\/([0-9a-f-]{36})/.exec(
      (await page.getByRole('link', { name: 'Ya lo he copiado' }).getAttribute('href')) ?? '',
    )![1]!;
    await seedDeliveries(database, aurora.id, endpointId);
    await page.getByRole('link', { name: 'Ya lo he copiado' }).click();
    await page.waitForSelector('#endpoint-status');
    await shot(page, '12-webhook-endpoint.png');
    await ctx.close();

    // An AI assistant's "Connect": the consent page (one permission unticked), then Connected apps.
    ctx = await browser.newContext(desktop);
    await shootApps(await ctx.newPage(), address, shot, (page) => signIn(page, address, 'ana.garcia@aurora.example'));
    await ctx.close();

    // docs/make.md: a key for Make, and the webhook it subscribed by API.
    ctx = await browser.newContext(desktop);
    await shootMake(await ctx.newPage(), address, rt, aurora.id, shot, (page) => signIn(page, address, 'ana.garcia@aurora.example'));
    await ctx.close();
  } finally {
    await browser?.close();
    await app.close();
    await rt.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`screenshots: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
