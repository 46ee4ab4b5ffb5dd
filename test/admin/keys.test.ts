// Settings > API: the key lifecycle, roles, the plan gate, tenant isolation, superadmins, CSRF
// on every form, and HTML error pages that leave the API's JSON errors alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { ALL_SCOPES, buildDashboardApp, Client, csrfOf, EMAILS, shownKey, type DashboardApp } from './helpers.js';

const API = '/dashboard/settings/api';

describe.each(dialects())('dashboard API keys on %s', (dialect) => {
  let t: DashboardApp;
  let owner: Client;
  beforeAll(async () => {
    t = await buildDashboardApp(dialect);
    owner = new Client(t.app);
    await owner.signIn(EMAILS.ownerA);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates a key, shows it exactly once, and the key works on the API at once', async () => {
    const res = await owner.submit(API, `${API}/keys`, { name: 'Reservas web', expires: '30', ...ALL_SCOPES });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(API);

    const first = await owner.get(API);
    const key = shownKey(first.body);
    expect(key).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    expect(first.body).toContain('No volverás a verla');
    expect(first.body).toContain('data-copy-target="new-key"');

    const api = await t.app.inject({ url: '/api/v1/citas', headers: bearer(key!) });
    expect(api.statusCode).toBe(200);

    const again = await owner.get(API);
    expect(shownKey(again.body)).toBeNull();
    expect(again.body).not.toContain(key!);
    expect(again.body).toContain(`svc_…${key!.slice(-4)}`);
    expect(again.body).toContain('Reservas web');

    const row = (await t.keys.list(t.clinicA.id)).find((k) => k.name === 'Reservas web')!;
    expect(row.created_by_email).toBe(EMAILS.ownerA);
    // who made it: the address may wrap before its "@" only, never mid-word (views/wrap.ts)
    const [local, domain] = EMAILS.ownerA.split('@');
    expect(again.body).toContain(`<span class="email"><span>${local}</span><wbr><span>@${domain}</span></span>`);
    expect(Number(row.expires_at) - Math.floor(t.clock.now / 1000)).toBe(30 * 86_400);
  });

  it('never stores the shown-once key readably: the one-time message is encrypted', async () => {
    await owner.submit(API, `${API}/keys`, { name: 'Sealed', expires: 'never', ...ALL_SCOPES });
    const rows = await t.database.db.selectFrom('dashboard_sessions').select('flash').where('flash', 'is not', null).execute();
    expect(rows.length).toBeGreaterThan(0);
    const key = shownKey((await owner.get(API)).body)!;
    for (const r of rows) {
      expect(r.flash).not.toContain(key);
      expect(Buffer.from(r.flash!, 'base64url').toString('latin1')).not.toContain(key.slice(4, 20));
    }
    const after = await t.database.db.selectFrom('dashboard_sessions').select('flash').where('flash', 'is not', null).execute();
    expect(after).toHaveLength(0);
  });

  it('revokes after a confirmation page, and the API refuses the key from the next request', async () => {
    await owner.submit(API, `${API}/keys`, { name: 'Short-lived', expires: '90', ...ALL_SCOPES });
    const key = shownKey((await owner.get(API)).body)!;
    expect((await t.app.inject({ url: '/api/v1/citas', headers: bearer(key) })).statusCode).toBe(200);
    const id = (await t.keys.list(t.clinicA.id)).find((k) => k.name === 'Short-lived')!.id;

    const confirm = await owner.get(`${API}/keys/${id}/revoke`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('¿Revocar la clave «Short-lived»?');
    expect(confirm.body).toContain(`action="${API}/keys/${id}/revoke"`);

    const res = await owner.post(`${API}/keys/${id}/revoke`, { _csrf: csrfOf(confirm.body) });
    expect(res.statusCode).toBe(303);
    const api = await t.app.inject({ url: '/api/v1/citas', headers: bearer(key) });
    expect(api.statusCode).toBe(401);
    expect(api.json().error.code).toBe('invalid_api_key');

    const list = await owner.get(API);
    expect(list.body).toContain('La clave «Short-lived» está revocada.');
    expect(list.body).toMatch(new RegExp(`data-key-id="${id}"[\\s\\S]*?Revocada`));
    expect(list.body).not.toContain(`${API}/keys/${id}/revoke`);
  });

  it('shows the MCP server’s address for AI assistants beside the keys, in both languages, and it answers with a key', async () => {
    const page = await owner.get(API);
    const shown = /<code id="mcp-url">([^<]+)<\/code>/.exec(page.body)?.[1];
    expect(shown).toMatch(/^http:\/\/localhost(:80)?\/mcp$/);
    expect(page.body).toContain('Asistentes de IA');
    expect(page.body).toContain('se conectan a esta dirección (un servidor MCP)');
    expect(page.body).toContain('deja sin marcar «Datos de contacto»');
    const english = new Client(t.app);
    await english.signIn(EMAILS.ownerA);
    await english.post('/dashboard/language', { _csrf: csrfOf((await english.get(API)).body), next: API, lang: 'en' });
    const en = await english.get(API);
    expect(en.body).toContain('<html lang="en">');
    expect(en.body).toContain('AI assistants');
    expect(en.body).toContain('leave “Contact details” unticked');
    expect(en.body).toContain(`<code id="mcp-url">${shown}</code>`);
    // the address is the MCP server's: a tool call with a key of the clinic answers there
    const { key } = await t.keys.create({ clinicId: t.clinicA.id, name: 'Assistant', expiresAt: null, createdBy: null });
    const res = await t.app.inject({
      method: 'POST',
      url: new URL(shown!).pathname,
      headers: { ...bearer(key), accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_clinic', arguments: {} } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().result.structuredContent.clinica.id).toBe(t.clinicA.id);
  });

  it('validates the form and keeps what was typed', async () => {
    const before = (await t.keys.list(t.clinicA.id)).length;
    const res = await owner.submit(API, `${API}/keys`, { name: '   ', expires: '45', ...ALL_SCOPES });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Ponle a la clave un nombre de 1 a 100 caracteres.');
    expect(res.body).toContain('Elige cuándo caduca la clave.');
    expect(res.body).toContain('aria-invalid="true"');
    expect((await t.keys.list(t.clinicA.id)).length).toBe(before);
  });

  it('escapes what people type', async () => {
    await owner.submit(API, `${API}/keys`, { name: '<script>alert(1)</script> & "co"', expires: 'never', ...ALL_SCOPES });
    const page = await owner.get(API);
    expect(page.body).not.toContain('<script>alert(1)');
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;co&quot;');
  });

  it('refuses key forms without a valid CSRF token, or sent from another site', async () => {
    const before = (await t.keys.list(t.clinicA.id)).length;
    const token = csrfOf((await owner.get(API)).body);
    const cases = [
      await owner.post(`${API}/keys`, { name: 'No token', expires: 'never', ...ALL_SCOPES }),
      await owner.post(`${API}/keys`, { _csrf: 'x'.repeat(43), name: 'Bad token', expires: 'never', ...ALL_SCOPES }),
      await owner.post(
        `${API}/keys`,
        { _csrf: token, name: 'Cross-site', expires: 'never', ...ALL_SCOPES },
        { 'sec-fetch-site': 'cross-site' },
      ),
    ];
    for (const res of cases) {
      expect(res.statusCode).toBe(403);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('Este formulario ha caducado');
    }
    // another person's token does not fit this session
    const other = new Client(t.app);
    await other.signIn(EMAILS.ownerA);
    const foreign = await owner.post(`${API}/keys`, {
      _csrf: csrfOf((await other.get(API)).body),
      name: 'Foreign',
      expires: 'never',
      ...ALL_SCOPES,
    });
    expect(foreign.statusCode).toBe(403);
    const id = (await t.keys.list(t.clinicA.id)).find((k) => k.revoked_at === null)!.id;
    expect((await owner.post(`${API}/keys/${id}/revoke`, {})).statusCode).toBe(403);
    expect((await t.keys.list(t.clinicA.id)).length).toBe(before);
    expect((await t.keys.get(t.clinicA.id, id))!.revoked_at).toBeNull();
  });

  it('lets staff see the keys and why they cannot manage them, but not create or revoke', async () => {
    const issued = await t.keys.create({ clinicId: t.clinicA.id, name: 'Owner made this', expiresAt: null, createdBy: null });
    const staff = new Client(t.app);
    await staff.signIn(EMAILS.staffA);
    const page = await staff.get(API);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Owner made this');
    expect(page.body).toContain('Solo la persona titular de la clínica puede crear o revocar claves de API.');
    expect(page.body).toContain(EMAILS.ownerA);
    expect(page.body).not.toContain('action="/dashboard/settings/api/keys"');
    expect(page.body).not.toContain('/revoke"');

    const token = csrfOf(page.body);
    const create = await staff.post(`${API}/keys`, { _csrf: token, name: 'Staff key', expires: 'never', ...ALL_SCOPES });
    expect(create.statusCode).toBe(403);
    expect((await t.keys.list(t.clinicA.id)).map((k) => k.name)).not.toContain('Staff key');
    expect((await staff.get(`${API}/keys/${issued.id}/revoke`)).statusCode).toBe(403);
    expect((await staff.post(`${API}/keys/${issued.id}/revoke`, { _csrf: token })).statusCode).toBe(403);
    expect((await t.app.inject({ url: '/api/v1/citas', headers: bearer(issued.key) })).statusCode).toBe(200);
  });

  it('shows a clinic on a lower plan that the API needs an upgrade, with no create button', async () => {
    const low = new Client(t.app);
    await low.signIn(EMAILS.ownerLow);
    const page = await low.get(API);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('La API no está incluida en el plan Pro.');
    expect(page.body).toContain('Pro Total, Enterprise o Premium');
    expect(page.body).not.toContain('action="/dashboard/settings/api/keys"');
    const res = await low.post(`${API}/keys`, { _csrf: csrfOf(page.body), name: 'Sneaky', expires: 'never', ...ALL_SCOPES });
    expect(res.statusCode).toBe(403);
    expect(await t.keys.list(t.clinicLow.id)).toHaveLength(0);
  });

  it('keeps each owner inside their clinic', async () => {
    const bKey = await t.keys.create({ clinicId: t.clinicB.id, name: 'B integration', expiresAt: null, createdBy: null });
    expect((await owner.get(`${API}?clinic=${t.clinicB.id}`)).statusCode).toBe(404);
    expect((await owner.get(`${API}/keys/${bKey.id}/revoke`)).statusCode).toBe(404);
    const token = csrfOf((await owner.get(API)).body);
    expect((await owner.post(`${API}/keys/${bKey.id}/revoke`, { _csrf: token })).statusCode).toBe(404);
    expect(
      (await owner.post(`${API}/keys`, { _csrf: token, clinic: t.clinicB.id, name: 'Into B', expires: 'never', ...ALL_SCOPES })).statusCode,
    ).toBe(404);
    expect((await t.app.inject({ url: '/api/v1/citas', headers: bearer(bKey.key) })).statusCode).toBe(200);
    expect((await owner.get(API)).body).not.toContain('B integration');
    expect((await t.keys.list(t.clinicB.id)).map((k) => k.name)).toEqual(['B integration']);
  });

  it('lets a superadmin pick any clinic and manage its keys, in that clinic’s language', async () => {
    const su = new Client(t.app);
    await su.signIn(EMAILS.superadmin);
    const choose = await su.get(API);
    expect(choose.statusCode).toBe(200);
    for (const c of [t.clinicA, t.clinicB, t.clinicLow]) expect(choose.body).toContain(`?clinic=${c.id}`);

    const page = await su.get(`${API}?clinic=${t.clinicB.id}`);
    expect(page.body).toContain('<html lang="en">');
    expect(page.body).toContain('Create a key');
    expect(page.body).toContain('id="clinic-switch"');
    const res = await su.post(`${API}/keys`, {
      _csrf: csrfOf(page.body),
      clinic: t.clinicB.id,
      name: 'Support-made',
      expires: '365',
      ...ALL_SCOPES,
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${API}?clinic=${t.clinicB.id}`);
    const key = shownKey((await su.get(res.headers.location as string)).body)!;
    const api = await t.app.inject({ url: '/api/v1/citas', headers: bearer(key) });
    expect(api.statusCode).toBe(200);
    const made = (await t.keys.list(t.clinicB.id)).find((k) => k.name === 'Support-made')!;
    expect(made.created_by_email).toBe(EMAILS.superadmin);
    expect((await su.get(`${API}?clinic=no-such-clinic`)).statusCode).toBe(404);
    // Revoking: the key is looked up in the clinic the links name, never across clinics.
    const listing = (await su.get(`${API}?clinic=${t.clinicB.id}`)).body;
    const revokeUrl = `${API}/keys/${made.id}/revoke?clinic=${encodeURIComponent(t.clinicB.id)}`;
    expect(listing).toContain(`href="${revokeUrl.replaceAll('&', '&amp;')}"`);
    expect((await su.get(`${API}/keys/${made.id}/revoke?clinic=${t.clinicA.id}`)).statusCode).toBe(404);
    expect((await su.post(`${API}/keys/${made.id}/revoke?clinic=${t.clinicA.id}`, { _csrf: csrfOf(listing) })).statusCode).toBe(404);
    const confirm = await su.get(revokeUrl);
    expect(confirm.statusCode).toBe(200);
    const revoked = await su.post(revokeUrl, { _csrf: csrfOf(confirm.body) });
    expect(revoked.statusCode).toBe(303);
    expect(revoked.headers.location).toBe(`${API}?clinic=${t.clinicB.id}`);
    expect((await t.keys.get(t.clinicB.id, made.id))!.revoked_at).not.toBeNull();
    expect((await t.app.inject({ url: '/api/v1/citas', headers: bearer(key) })).statusCode).toBe(401);
    // the plan gate holds for superadmins too
    const low = await su.get(`${API}?clinic=${t.clinicLow.id}`);
    expect(low.body).not.toContain('action="/dashboard/settings/api/keys"');
  });

  it('keeps a superadmin’s new key for its own clinic’s page when another clinic is viewed first', async () => {
    const su = new Client(t.app, '203.0.113.80');
    await su.signIn(EMAILS.superadmin);
    const page = await su.get(`${API}?clinic=${t.clinicB.id}`);
    const res = await su.post(`${API}/keys`, {
      _csrf: csrfOf(page.body),
      clinic: t.clinicB.id,
      name: 'Kept for B',
      expires: 'never',
      ...ALL_SCOPES,
    });
    expect(res.statusCode).toBe(303);
    // a detour: another clinic, and the clinic chooser
    const other = await su.get(`${API}?clinic=${t.clinicA.id}`);
    expect(other.statusCode).toBe(200);
    expect(shownKey(other.body)).toBeNull();
    expect(other.body).not.toContain('Kept for B');
    expect(shownKey((await su.get(API)).body)).toBeNull();
    // back at clinic B the key is still shown, once
    const back = await su.get(`${API}?clinic=${t.clinicB.id}`);
    const key = shownKey(back.body);
    expect(key).toMatch(/^svc_/);
    expect((await t.app.inject({ url: '/api/v1/citas', headers: bearer(key!) })).statusCode).toBe(200);
    expect(shownKey((await su.get(`${API}?clinic=${t.clinicB.id}`)).body)).toBeNull();
  });

  it('never compresses pages (BREACH): not the one-time key, not forms, not errors; assets still are', async () => {
    const gz = { 'accept-encoding': 'gzip, deflate, br' };
    await owner.submit(API, `${API}/keys`, { name: 'Uncompressed', expires: 'never', ...ALL_SCOPES });
    const keyPage = await owner.get(API, gz);
    expect(keyPage.statusCode).toBe(200);
    expect(keyPage.body.length).toBeGreaterThan(1024); // over the compression threshold
    expect(keyPage.headers['content-encoding']).toBeUndefined();
    expect(shownKey(keyPage.body)).toMatch(/^svc_/); // readable as sent
    const pages = [
      await owner.get(API, gz),
      await owner.post(`${API}/keys`, { _csrf: csrfOf(keyPage.body), name: '', expires: 'never', ...ALL_SCOPES }, gz), // 400 with the form
      await owner.get(`${API}/keys/no-such-key/revoke`, gz), // 404 page from a route
      await owner.get('/dashboard/no-such-page', gz), // the not-found handler
      await new Client(t.app).get('/dashboard/sign-in', gz),
    ];
    for (const res of pages) {
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.body).toContain('name="_csrf"');
    }
    // compression is on in this app: the static stylesheet (no secrets) is still gzipped
    const css = /href="(\/dashboard\/assets\/app-[0-9a-f]{12}\.css)"/.exec(keyPage.body)![1]!;
    expect((await t.app.inject({ url: css, headers: { 'accept-encoding': 'gzip' } })).headers['content-encoding']).toBe('gzip');
  });

  it('answers dashboard errors with HTML pages and leaves the API’s JSON errors alone', async () => {
    const missing = await owner.get('/dashboard/no-such-page');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(missing.body).toContain('Página no encontrada');
    const apiMissing = await t.app.inject({ url: '/api/v1/nope' });
    expect(apiMissing.statusCode).toBe(404);
    expect(apiMissing.json().error.code).toBe('not_found');
    const apiMethod = await t.app.inject({ method: 'POST', url: '/api/v1/citas' });
    expect(apiMethod.statusCode).toBe(405);
    expect(apiMethod.json().error.code).toBe('method_not_allowed');
  });

  it('serves its stylesheet and script from hashed, long-cached URLs', async () => {
    const page = (await owner.get(API)).body;
    const css = /href="(\/dashboard\/assets\/app-[0-9a-f]{12}\.css)"/.exec(page)![1]!;
    const js = /src="(\/dashboard\/assets\/app-[0-9a-f]{12}\.js)"/.exec(page)![1]!;
    for (const [url, type] of [
      [css, 'text/css'],
      [js, 'text/javascript'],
    ] as const) {
      const res = await t.app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain(type);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    expect((await t.app.inject({ url: '/dashboard/assets/nope.css' })).statusCode).toBe(404);
  });
});
