// Settings > API > Webhooks (inject, both databases, a real receiver): add an endpoint (the
// secret shown once, sealed in the session's one-time message), choose types, refusals in the
// form, the endpoint's page with a test event, its deliveries and resend, disable/enable, delete
// after a confirmation; staff see but cannot change; CSRF on every form; another clinic's
// endpoint is a 404; the plan rule; Spanish and English.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { buildDashboardApp, Client, csrfOf, EMAILS, type DashboardApp } from './helpers.js';

const WH = '/dashboard/settings/api/webhooks';
const shownSecret = (page: string) => /id="new-secret" value="(whsec_[^"]+)"/.exec(page)?.[1] ?? null;

describe.each(dialects())('dashboard webhooks on %s', (dialect) => {
  let t: DashboardApp;
  let owner: Client;
  let r: Receiver;
  let status = 200;
  beforeAll(async () => {
    t = await buildDashboardApp(dialect, { env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MS: '3000' } });
    owner = new Client(t.app);
    await owner.signIn(EMAILS.ownerA);
    r = await startReceiver('/hook', () => ({ status }));
  });
  afterAll(async () => {
    await t?.close();
    await r?.close();
  });

  async function addEndpoint(events: string[] = []) {
    const res = await owner.submit(WH, WH, { url: r.url, events });
    expect(res.statusCode, res.body).toBe(303);
    const page = await owner.get(res.headers.location as string);
    const secret = shownSecret(page.body);
    // The one-time panel links to the new endpoint's page.
    const id = /id="new-secret-panel"[\s\S]*?href="\/dashboard\/settings\/api\/webhooks\/([0-9a-f-]{36})"/.exec(page.body)![1]!;
    return { page, secret, id };
  }

  it('adds an endpoint with chosen types; the secret is shown once, with a copy button, and is never stored readably', async () => {
    const { page, secret, id } = await addEndpoint(['cita.creada', 'cita.eliminada']);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(page.body).toContain('data-copy-target="new-secret"');
    expect(page.body).toContain('No volverás a verlo');
    expect(page.body).toContain('cita.creada, cita.eliminada');
    expect(page.body).not.toMatch(/<script>|\son[a-z]+="/);
    const again = await owner.get(WH);
    expect(shownSecret(again.body)).toBeNull();
    expect(again.body).not.toContain(secret!);
    const sessions = await t.database.db.selectFrom('dashboard_sessions').select('flash').execute();
    const endpoints = await t.database.db.selectFrom('webhook_endpoints').selectAll().execute();
    expect(JSON.stringify([sessions, endpoints])).not.toContain(secret!.slice(6));
    expect((await t.app.webhooks.get(t.clinicA.id, id))!.event_types).toEqual(['cita.creada', 'cita.eliminada']);
  });

  it('the help says what the operator allows: https://, http:// and private addresses (WEBHOOK_ALLOW_PRIVATE is on)', async () => {
    const page = await owner.get(WH);
    expect(page.body).toContain('https://, o http:// y direcciones de una red privada, que este servicio permite');
    expect(page.body).not.toContain('Debe empezar por https://.');
  });

  it('refuses a bad URL or type in the form, saying why, and keeps what was typed', async () => {
    for (const [url, text] of [
      // WEBHOOK_ALLOW_PRIVATE is on here: http:// is fine, other schemes are not
      ['ftp://example.com/x', 'La dirección debe empezar por https:// o http://.'],
      ['https://u:p@example.com/x', 'no debe contener un usuario'],
      ['nope', 'Escribe una dirección completa'],
    ] as const) {
      const res = await owner.submit(WH, WH, { url });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain(text);
      expect(res.body).toContain(`value="${url.replace(/&/g, '&amp;')}"`);
    }
    const bad = await owner.submit(WH, WH, { url: r.url, events: ['cita.creada', 'cita.borrada'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('Elige tipos de evento de la lista');
  });

  it("the endpoint's page: a test event, its delivery, resend, disable and enable, delete after confirming", async () => {
    const { secret, id } = await addEndpoint();
    const page = `${WH}/${id}`;
    const test = await owner.submit(page, `${page}/test`, {});
    expect([test.statusCode, test.headers.location]).toEqual([303, page]);
    const after = await owner.get(page);
    expect(after.body).toContain('El evento de prueba se ha entregado (HTTP 200).');
    const ping = r.received.at(-1)!;
    expect(new Webhook(secret!).verify(ping.body, ping.headers as Record<string, string>)).toMatchObject({ tipo: 'ping' });
    expect(after.body).toMatch(/data-outcome="delivered"[\s\S]*?<code>ping<\/code>[\s\S]*?HTTP 200/);

    status = 503;
    const delivery = /data-delivery-id="([^"]+)"/.exec(after.body)![1]!;
    const resend = await owner.submit(page, `${page}/deliveries/${delivery}/resend`, {});
    expect(resend.statusCode).toBe(303);
    const resent = await owner.get(page);
    expect(resent.body).toContain('Reenviado: ping: HTTP 503.');
    expect(resent.body).toMatch(/data-outcome="failed"[\s\S]*?HTTP 503/);
    status = 200;

    await owner.submit(page, `${page}/disable`, {});
    const off = await owner.get(page);
    expect(off.body).toContain('El destino está desactivado.');
    expect(off.body).toMatch(/id="endpoint-status"><span class="badge[^"]*">Desactivado</);
    expect(off.body).toContain('Desactivado a mano');
    await owner.submit(page, `${page}/enable`, {});
    expect((await owner.get(page)).body).toMatch(/id="endpoint-status"><span class="badge[^"]*">Activo</);

    const confirm = await owner.get(`${page}/delete`);
    expect(confirm.body).toContain('¿Borrar este destino?');
    const del = await owner.post(`${page}/delete`, { _csrf: csrfOf(confirm.body) });
    expect([del.statusCode, del.headers.location]).toEqual([303, WH]);
    expect((await owner.get(WH)).body).toContain(`Se ha borrado el destino ${r.url}.`);
    expect(await t.app.webhooks.get(t.clinicA.id, id)).toBeUndefined();
  });

  it('staff see the endpoints and deliveries but no forms, and every change is refused', async () => {
    const { id } = await addEndpoint();
    const staff = new Client(t.app);
    await staff.signIn(EMAILS.staffA);
    const list = await staff.get(WH);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('Solo la persona titular');
    expect(list.body).toContain(r.url);
    expect(list.body).not.toContain('name="url"');
    const detail = await staff.get(`${WH}/${id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).not.toContain('/test"');
    expect(detail.body).not.toContain('/disable"');
    const csrf = csrfOf(detail.body);
    for (const url of [WH, `${WH}/${id}/test`, `${WH}/${id}/disable`, `${WH}/${id}/delete`]) {
      expect((await staff.post(url, { _csrf: csrf, url: r.url })).statusCode, url).toBe(403);
    }
    expect((await staff.get(`${WH}/${id}/delete`)).statusCode).toBe(403);
    expect((await t.app.webhooks.get(t.clinicA.id, id))!.enabled).toBe(1);
  });

  it('CSRF on every form; another clinic cannot see or touch the endpoint; English for an English clinic', async () => {
    const { id } = await addEndpoint();
    const before = (await t.app.webhooks.list(t.clinicA.id)).length;
    expect((await owner.post(WH, { url: r.url })).statusCode).toBe(403);
    expect((await owner.post(`${WH}/${id}/delete`, { _csrf: 'forged' })).statusCode).toBe(403);
    expect((await t.app.webhooks.list(t.clinicA.id)).length).toBe(before);

    const other = new Client(t.app);
    await other.signIn(EMAILS.ownerB);
    expect((await other.get(`${WH}/${id}`)).statusCode).toBe(404);
    const csrf = csrfOf((await other.get(WH)).body);
    expect((await other.post(`${WH}/${id}/delete`, { _csrf: csrf })).statusCode).toBe(404);
    expect((await other.post(`${WH}/${id}/test`, { _csrf: csrf })).statusCode).toBe(404);
    const en = await other.get(WH);
    expect(en.body).toContain('Add an endpoint');
    expect(en.body).toContain('This clinic has no webhook endpoints.');
    expect(en.body).not.toContain(r.url);
  });

  it('the plan rule: a clinic without API access sees why and cannot add endpoints', async () => {
    const low = new Client(t.app);
    await low.signIn(EMAILS.ownerLow);
    const page = await low.get(WH);
    expect(page.body).toContain('Los webhooks vienen con la API');
    expect(page.body).not.toContain('name="url"');
    expect((await low.post(WH, { _csrf: csrfOf(page.body), url: r.url })).statusCode).toBe(403);
  });
});

describe('dashboard webhooks without WEBHOOK_ALLOW_PRIVATE (the default)', () => {
  let t: DashboardApp;
  let owner: Client;
  beforeAll(async () => {
    t = await buildDashboardApp('sqlite');
    owner = new Client(t.app);
    await owner.signIn(EMAILS.ownerA);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the help says https:// only; http:// and a loopback address are refused naming the way out', async () => {
    const page = await owner.get(WH);
    expect(page.body).toContain('Debe empezar por https://.');
    expect(page.body).not.toContain('red privada, que este servicio permite');
    const http = await owner.submit(WH, WH, { url: 'http://127.0.0.1:8080/hooks' });
    expect(http.statusCode).toBe(400);
    expect(http.body).toContain('debe empezar por https:// para que los datos viajen cifrados');
    expect(http.body).toContain('necesita que el operador de este servicio lo permita con WEBHOOK_ALLOW_PRIVATE');
    const loop = await owner.submit(WH, WH, { url: 'https://127.0.0.1:8443/hooks' });
    expect(loop.statusCode).toBe(400);
    expect(loop.body).toContain('salvo que el operador de este servicio lo permita con WEBHOOK_ALLOW_PRIVATE');
    expect(await t.app.webhooks.list(t.clinicA.id)).toEqual([]);
  });
});
