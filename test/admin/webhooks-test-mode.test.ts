// Settings > API > Webhooks in test mode (inject, both databases, real receivers on 127.0.0.1):
// the form's "Test endpoint" choice makes the clinic's sandbox on first use and adds the endpoint
// there; test endpoints are listed in a group of their own with the test badge; their page, a test
// event, resend, an attempt's page, disable/enable and delete work and act on the sandbox's row;
// the sandbox's moves reach the test endpoint and not a live one; the limit counts live and test
// endpoints apart; another clinic's sandbox endpoint is a 404.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startReceiver, until, type Receiver } from '../helpers/receiver.js';
import { buildDashboardApp, Client, csrfOf, EMAILS, type DashboardApp } from './helpers.js';

const WH = '/dashboard/settings/api/webhooks';
const shownSecret = (page: string) => /id="new-secret" value="(whsec_[^"]+)"/.exec(page)?.[1] ?? null;
const newId = (page: string) => /id="new-secret-panel"[\s\S]*?href="\/dashboard\/settings\/api\/webhooks\/([0-9a-f-]{36})"/.exec(page)![1]!;
/** The part of the list page after the "Test endpoints" heading (empty when there is none). */
const testGroup = (page: string) => /id="test-endpoints"[\s\S]*$/.exec(page)?.[0] ?? '';

describe.each(dialects())('dashboard test webhook endpoints on %s', (dialect) => {
  let t: DashboardApp;
  let owner: Client;
  let r: Receiver;
  let status = 200;
  beforeAll(async () => {
    t = await buildDashboardApp(dialect, {
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MS: '3000', WEBHOOK_POLL_MS: '10' },
    });
    owner = new Client(t.app);
    await owner.signIn(EMAILS.ownerA);
    r = await startReceiver('/hook', () => ({ status }));
  });
  afterAll(async () => {
    await t?.close();
    await r?.close();
  });

  async function addEndpoint(client: Client, url: string, test: boolean) {
    const res = await client.submit(WH, WH, { url, ...(test ? { mode: 'test' } : {}) });
    expect(res.statusCode, res.body).toBe(303);
    const page = await client.get(res.headers.location as string);
    return { page, secret: shownSecret(page.body), id: newId(page.body) };
  }

  it('the form offers "Test endpoint", unticked; no test group before the clinic has a sandbox', async () => {
    const page = await owner.get(WH);
    expect(page.body).toMatch(/<input type="checkbox" id="webhook-test" name="mode" value="test" aria-describedby="webhook-test-help"\s*>/);
    expect(page.body).toContain('Destino de prueba');
    expect(page.body).toContain('Recibe solo los eventos del entorno de pruebas.');
    expect(page.body).not.toContain('id="test-endpoints"');
    expect(await t.rt.sandboxes.find(t.clinicA.id)).toBeNull();
  });

  it("adds a test endpoint in the sandbox (made on first use), listed under test; its page, a test event, resend, the attempt's page, disable, enable, delete", async () => {
    const { secret, id } = await addEndpoint(owner, r.url, true);
    const sandboxId = (await t.rt.sandboxes.find(t.clinicA.id))!;
    expect(sandboxId).not.toBeNull();
    expect((await t.app.webhooks.get(sandboxId, id))!.url).toBe(r.url);
    expect(await t.app.webhooks.get(t.clinicA.id, id)).toBeUndefined();

    const list = await owner.get(WH);
    const group = testGroup(list.body);
    expect(group).toContain('Destinos de prueba');
    expect(group).toMatch(new RegExp(`data-endpoint-id="${id}"[\\s\\S]*?<span class="badge plain badge-test">Prueba</span>`));
    // The live group does not list it, and says the clinic has none.
    const live = list.body.slice(0, list.body.indexOf('id="test-endpoints"'));
    expect(live).not.toContain(id);
    expect(live).toContain('Esta clínica no tiene destinos de webhook.');

    const page = `${WH}/${id}`;
    const detail = await owner.get(page);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('badge-test');
    const test = await owner.submit(page, `${page}/test`, {});
    expect([test.statusCode, test.headers.location]).toEqual([303, page]);
    const after = await owner.get(page);
    expect(after.body).toContain('El evento de prueba se ha entregado (HTTP 200).');
    const ping = r.received.at(-1)!;
    expect(new Webhook(secret!).verify(ping.body, ping.headers as Record<string, string>)).toMatchObject({ tipo: 'ping' });
    // The attempt is in the sandbox's delivery log.
    const delivery = /data-delivery-id="([^"]+)"/.exec(after.body)![1]!;
    expect((await t.app.webhooks.delivery(sandboxId, delivery))!.endpoint_id).toBe(id);
    const attempt = await owner.get(`${page}/deliveries/${delivery}`);
    expect(attempt.statusCode).toBe(200);
    expect(attempt.body).toContain('badge-test');

    status = 503;
    expect((await owner.submit(page, `${page}/deliveries/${delivery}/resend`, {})).statusCode).toBe(303);
    expect((await owner.get(page)).body).toContain('Reenviado: ping: HTTP 503.');
    status = 200;

    await owner.submit(page, `${page}/disable`, {});
    expect((await t.app.webhooks.get(sandboxId, id))!.enabled).toBe(0);
    await owner.submit(page, `${page}/enable`, {});
    expect((await t.app.webhooks.get(sandboxId, id))!.enabled).toBe(1);

    const confirm = await owner.get(`${page}/delete`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('badge-test');
    const del = await owner.post(`${page}/delete`, { _csrf: csrfOf(confirm.body) });
    expect([del.statusCode, del.headers.location]).toEqual([303, WH]);
    expect(await t.app.webhooks.get(sandboxId, id)).toBeUndefined();
    expect(testGroup((await owner.get(WH)).body)).toContain('El entorno de pruebas no tiene destinos de webhook.');
  });

  it("the sandbox's changes reach the test endpoint, never a live one", async () => {
    const testR = await startReceiver('/test');
    const liveR = await startReceiver('/live');
    try {
      await addEndpoint(owner, testR.url, true);
      await addEndpoint(owner, liveR.url, false);
      await t.app.webhookWorker.start();
      t.clock.now += 60_000;
      await t.rt.sandboxes.moveAll();
      t.app.webhookWorker.kick();
      // Every move makes a call: its event ends the move's deliveries.
      await until(() => testR.received.some((x) => x.tipo === 'llamada.creada'), "the sandbox's move delivered");
      expect(liveR.received).toEqual([]);
    } finally {
      await t.app.webhookWorker.stop();
      await testR.close();
      await liveR.close();
    }
  });

  it('the limit of 10 counts test endpoints apart from live ones; a refused test endpoint keeps its choice', async () => {
    const sandboxId = (await t.rt.sandboxes.find(t.clinicA.id))!;
    const have = (await t.app.webhooks.list(sandboxId)).length;
    for (let i = have; i < 10; i++)
      await t.app.webhooks.create({ clinicId: sandboxId, url: `${r.url}?n=${i}`, eventTypes: null, createdBy: null });
    const refused = await owner.submit(WH, WH, { url: r.url, mode: 'test' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('El entorno de pruebas ya tiene 10 destinos, el máximo.');
    expect(refused.body).toMatch(/id="webhook-test"[^>]*checked/);
    expect((await t.app.webhooks.list(sandboxId)).length).toBe(10);
    // A live endpoint can still be added.
    await addEndpoint(owner, r.url, false);
  });

  it("another clinic's sandbox endpoint is a 404, to see and to act on; staff see a test endpoint but cannot change it", async () => {
    const other = new Client(t.app);
    await other.signIn(EMAILS.ownerB);
    const { id } = await addEndpoint(other, r.url, true);
    const sandboxB = (await t.rt.sandboxes.find(t.clinicB.id))!;
    expect(testGroup((await other.get(WH)).body)).toContain('Test endpoints');

    expect((await owner.get(`${WH}/${id}`)).statusCode).toBe(404);
    expect((await owner.get(`${WH}/${id}/delete`)).statusCode).toBe(404);
    const csrf = csrfOf((await owner.get(WH)).body);
    for (const action of ['test', 'disable', 'delete']) {
      expect((await owner.post(`${WH}/${id}/${action}`, { _csrf: csrf })).statusCode, action).toBe(404);
    }
    expect((await owner.get(WH)).body).not.toContain(id);
    expect((await t.app.webhooks.get(sandboxB, id))!.enabled).toBe(1);

    const staff = new Client(t.app);
    await staff.signIn(EMAILS.staffA);
    const sandboxA = (await t.rt.sandboxes.find(t.clinicA.id))!;
    const mine = (await t.app.webhooks.list(sandboxA))[0]!;
    const detail = await staff.get(`${WH}/${mine.id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).not.toContain('/disable"');
    expect((await staff.post(`${WH}/${mine.id}/disable`, { _csrf: csrfOf(detail.body) })).statusCode).toBe(403);
    expect((await t.app.webhooks.get(sandboxA, mine.id))!.enabled).toBe(1);
  });
});
