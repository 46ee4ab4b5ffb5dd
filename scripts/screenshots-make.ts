// The Make part of `npm run screenshots` (scripts/screenshots.ts), what docs/make.md shows: the
// owner makes a key for Make with only what the scenario needs (19-make-key.png), the key
// subscribes a Make webhook address by API as the page's curl does, and the endpoint's page
// lists the subscription, the key that made it and its deliveries (20-make-webhook.png). The
// address is Make's form; the screenshots' host resolver maps it to a documentation address, and
// the delivery worker is not started: nothing is sent.
import type { Page } from 'playwright-core';
import { insertWebhookDelivery } from '../src/repos/webhooks.js';
import type { Runtime } from '../src/runtime.js';

const MINUTE = 60_000;
const HOOK = 'https://hook.eu1.make.com/7yq2kd8vx1m4hb3ctn6wz9rfsgp0ael5';

/** A morning of bookings delivered to the scenario, newest last (what the endpoint's page lists). */
async function seedDeliveries(rt: Runtime, clinicId: string, endpointId: string) {
  const real = Date.now();
  const rows: [number, string, number][] = [
    [real - 95 * MINUTE, 'cita.creada', 212],
    [real - 71 * MINUTE, 'cita.actualizada', 188],
    [real - 40 * MINUTE, 'cita.creada', 240],
    [real - 12 * MINUTE, 'cita.actualizada', 176],
  ];
  let seq = 500;
  for (const [at, tipo, ms] of rows) {
    await insertWebhookDelivery(rt.database.db, {
      id: crypto.randomUUID(),
      endpoint_id: endpointId,
      clinic_id: clinicId,
      event_id: crypto.randomUUID(),
      tipo,
      seq: ++seq,
      kind: 'auto',
      attempt: 1,
      at_ms: at,
      outcome: 'delivered',
      status_code: 200,
      error: null,
      duration_ms: ms,
    });
  }
}

export async function shootMake(
  page: Page,
  base: string,
  rt: Runtime,
  clinicId: string,
  shot: (page: Page, name: string, fullPage?: boolean) => Promise<void>,
  signIn: (page: Page) => Promise<void>,
) {
  await signIn(page);
  await page.getByLabel('Nombre', { exact: true }).fill('Make');
  for (const box of await page.locator('input[name="scopes"]').all()) await box.uncheck();
  await page.getByRole('checkbox', { name: /^Citas/ }).check();
  await page.getByRole('checkbox', { name: /^Suscripciones a eventos/ }).check();
  await page.locator('#create-title').scrollIntoViewIfNeeded();
  await page.mouse.move(0, 0);
  await shot(page, '19-make-key.png', false);
  await page.getByRole('button', { name: 'Crear clave' }).click();
  await page.waitForSelector('#new-key');
  const key = (
    await page
      .locator('#new-key')
      .inputValue()
      .catch(() => page.locator('#new-key').innerText())
  ).trim();

  // Step 3 of docs/make.md, as its curl sends it.
  const res = await fetch(`${base}/api/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: HOOK, eventos: ['cita.creada', 'cita.actualizada'], descripcion: 'Make: citas a Google Sheets' }),
  });
  if (res.status !== 201) throw new Error(`subscribing the Make webhook: ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  await seedDeliveries(rt, clinicId, id);

  await page.goto(`${base}/dashboard/settings/api/webhooks/${id}`);
  await page.waitForSelector('#endpoint-status');
  await page.mouse.move(0, 0);
  await shot(page, '20-make-webhook.png');
}
