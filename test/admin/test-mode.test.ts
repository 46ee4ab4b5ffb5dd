// Test mode in the dashboard (inject, both databases): an owner creates a test key with the
// "Test key" choice; the keys list marks it; the Sandbox card starts the sandbox again (owners
// only, with the CSRF token); the request log shows test requests apart, under the Test mode,
// and live requests without them. Spanish and English.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { ALL_SCOPES, buildDashboardApp, Client, EMAILS, shownKey, type DashboardApp } from './helpers.js';

const API = '/dashboard/settings/api';
const LOGS = `${API}/logs`;
const logIds = (page: string) => [...page.matchAll(/<tr data-request-id="([^"]+)"/g)].map((m) => m[1]!);

describe.each(dialects())('test mode in the dashboard on %s', (dialect) => {
  let t: DashboardApp;
  let owner: Client;
  let testKey: string;
  beforeAll(async () => {
    t = await buildDashboardApp(dialect);
    owner = new Client(t.app);
    await owner.signIn(EMAILS.ownerA);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('offers "Test key" when creating a key; the key is <prefix>_test_ and the list marks it', async () => {
    const before = (await owner.get(API)).body;
    expect(before).toContain('name="mode" value="test"');
    expect(before).toContain('Clave de prueba');
    expect(before).toContain('id="sandbox-none"');
    await owner.submit(API, `${API}/keys`, { name: 'Pruebas CRM', expires: 'never', mode: 'test', ...ALL_SCOPES });
    await owner.submit(API, `${API}/keys`, { name: 'CRM', expires: 'never', ...ALL_SCOPES });
    const page = (await owner.get(API)).body;
    const listed = await t.keys.list(t.clinicA.id);
    const test = listed.find((k) => k.name === 'Pruebas CRM')!;
    const live = listed.find((k) => k.name === 'CRM')!;
    expect(test.mode).toBe('test');
    expect(live.mode).toBe('live');
    const row = (id: string) => new RegExp(`<tr [^>]*data-key-id="${id}"[^]*?</tr>`).exec(page)![0];
    expect(row(test.id)).toContain('<span class="badge plain badge-test">Prueba</span>');
    expect(row(live.id)).not.toContain('badge-test');
    // The sandbox exists now (made with the first test key): the card offers its reset.
    expect(page).toContain('id="sandbox-reset"');
    expect(await t.rt.sandboxes.find(t.clinicA.id)).not.toBeNull();
    // A key shown once is the live one just made; the test one was shown on the page before.
    expect(shownKey(page)).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
  });

  it('the request log shows test requests under Test mode only, live ones without them', async () => {
    const test = await t.keys.create({ clinicId: t.clinicA.id, name: 'Sandbox', expiresAt: null, createdBy: null, mode: 'test' });
    testKey = test.key;
    expect(testKey).toMatch(/^svc_test_/);
    const live = await t.keys.create({ clinicId: t.clinicA.id, name: 'Live', expiresAt: null, createdBy: null });
    const request = async (key: string, id: string) =>
      t.app.inject({ url: '/api/v1/clientas?limit=1', headers: { authorization: `Bearer ${key}`, 'x-request-id': id } });
    expect((await request(testKey, 'req-test')).statusCode).toBe(200);
    expect((await request(live.key, 'req-live')).statusCode).toBe(200);
    await t.rt.requestLog!.flush();

    const livePage = (await owner.get(LOGS)).body;
    expect(logIds(livePage)).toEqual(['req-live']);
    expect(livePage).not.toContain('id="test-mode-notice"');
    const testPage = (await owner.get(`${LOGS}?mode=test`)).body;
    expect(logIds(testPage)).toEqual(['req-test']);
    expect(testPage).toContain('id="test-mode-notice"');
    expect(testPage).toMatch(/<option value="test"\s+selected>Pruebas</);
    // The key filter offers the mode's keys; the detail page is found in its mode only.
    expect(testPage).toContain(`<option value="${test.id}"`);
    expect(testPage).not.toContain(`<option value="${live.id}"`);
    expect((await owner.get(`${LOGS}/req-test?mode=test`)).statusCode).toBe(200);
    expect((await owner.get(`${LOGS}/req-test`)).statusCode).toBe(404);
    expect((await owner.get(`${LOGS}/req-live?mode=test`)).statusCode).toBe(404);
  });

  it('resets the sandbox (owner, CSRF token); staff and a missing token are refused', async () => {
    const ids = async () =>
      (
        (await t.app.inject({ url: '/api/v1/clientas?limit=500', headers: { authorization: `Bearer ${testKey}` } })).json() as {
          clientas: { id: string }[];
        }
      ).clientas.map((c) => c.id);
    const before = await ids();
    expect((await owner.post(`${API}/sandbox/reset`, {})).statusCode).toBe(403);
    const staff = new Client(t.app, '203.0.113.20');
    await staff.signIn(EMAILS.staffA);
    expect((await staff.submit(API, `${API}/sandbox/reset`, {})).statusCode).toBe(403);
    expect(await ids()).toEqual(before);

    t.clock.now += 5_000;
    const res = await owner.submit(API, `${API}/sandbox/reset`, {});
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${API}?sandbox=reset#sandbox`);
    const after = await ids();
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((id) => before.includes(id))).toEqual([]);
    expect((await owner.get(`${API}?sandbox=reset`)).body).toContain('El entorno de pruebas tiene datos nuevos.');
  });

  it('a superadmin never gets a sandbox as a clinic of its own: not listed, and its id is not found', async () => {
    const root = new Client(t.app, '203.0.113.30');
    await root.signIn(EMAILS.superadmin);
    const sandboxId = (await t.rt.sandboxes.find(t.clinicA.id))!;
    expect((await root.get(API)).body).not.toContain(sandboxId);
    expect((await root.get(`${API}?clinic=${sandboxId}`)).statusCode).toBe(404);
    expect((await root.get(`${LOGS}?clinic=${sandboxId}`)).statusCode).toBe(404);
    expect((await root.get(`${API}?clinic=${t.clinicA.id}`)).body).toContain('id="sandbox-reset"');
  });

  it('speaks English to an English clinic', async () => {
    const ownerB = new Client(t.app, '203.0.113.8');
    await ownerB.signIn(EMAILS.ownerB);
    const page = (await ownerB.get(API)).body;
    expect(page).toContain('Test key');
    expect(page).toContain('<h2 id="sandbox-title">Sandbox</h2>');
    expect((await ownerB.get(LOGS)).body).toMatch(/<option value="test"\s*>Test</);
  });
});
