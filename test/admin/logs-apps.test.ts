// Settings > API > Logs and OAuth apps (inject, both databases, two clinics): requests made with an
// app's access token name the app (its client name, marked as an app) in the list and in one
// request's detail; the filter offers the clinic's connected apps beside the keys (never another
// clinic's), and narrows to one app (every grant of it) or one grant; another clinic's app as a
// filter is refused as unusable and reads nothing of it. Spanish and English. The grants are
// recorded as the consent records them, the entries by the request log's own writer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawLogEntry } from '../../src/services/request-log.js';
import { createUser } from '../../src/services/accounts.js';
import { dialects } from '../helpers/db.js';
import { buildDashboardApp, Client, EMAILS, type DashboardApp, signedInOwners } from './helpers.js';

const LOGS = '/dashboard/settings/api/logs';
const logIds = (page: string) => [...page.matchAll(/<tr data-request-id="([^"]+)"/g)].map((m) => m[1]!);
const grant = (c: string) => c.repeat(43);

describe.each(dialects())('request log by OAuth app on %s', (dialect) => {
  let t: DashboardApp;
  let owner: Client;
  let ownerB: Client;
  let keyId: string;
  /** the request id of each entry, by name */
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await buildDashboardApp(dialect);
    const granter = await createUser(t.database.db, {
      clinicId: t.clinicA.id,
      email: 'second@uno.example',
      role: 'owner',
      password: 'x'.repeat(12),
    });
    const consent = (grantId: string, clinicId: string, clientId: string, clientName: string, grantedBy: string, resource = 'api/v1') =>
      t.rt.appGrants.recordConsent({
        grantId,
        clinicId,
        clientId,
        clientName,
        redirectHost: 'app.example',
        scopes: ['citas:read'],
        resource: `https://api.example/${resource}`,
        grantedBy,
      });
    // Agenda Partner connected twice (two grants of one client: the REST API and the MCP server),
    // Claude once; clinic B its own CRM.
    await consent(grant('a'), t.clinicA.id, 'client-agenda', 'Agenda Partner', granter.id);
    await consent(grant('b'), t.clinicA.id, 'client-agenda', 'Agenda Partner', granter.id, 'mcp');
    await consent(grant('c'), t.clinicA.id, 'client-claude', 'Claude', granter.id);
    const ownerBId = (await t.database.db.selectFrom('users').select('id').where('email', '=', EMAILS.ownerB).executeTakeFirstOrThrow()).id;
    await consent(grant('d'), t.clinicB.id, 'client-crm-b', 'Otro CRM', ownerBId);
    const key = await t.keys.create({ clinicId: t.clinicA.id, name: 'Zapier', expiresAt: null, createdBy: null });
    keyId = key.id;

    const made: [string, string, string | null, string | null, string][] = [
      ['key', t.clinicA.id, key.id, null, '/api/v1/citas'],
      ['agenda1', t.clinicA.id, null, grant('a'), '/api/v1/citas'],
      ['agenda2', t.clinicA.id, null, grant('b'), '/api/v1/me'],
      ['claude', t.clinicA.id, null, grant('c'), '/api/v1/citas'],
      ['crmB', t.clinicB.id, null, grant('d'), '/api/v1/citas'],
    ];
    made.forEach(([name, clinicId, k, g, url], i) => {
      const e: RawLogEntry = {
        clinicId,
        atMs: t.clock.now - 60_000 + i * 1_000,
        requestId: `req-${name}`,
        keyId: k,
        grantId: g,
        method: 'GET',
        url,
        status: 200,
        errorCode: null,
        durationMs: 3,
        records: 0,
        ip: '203.0.113.9',
        userAgent: 'test',
        errorBody: null,
        clientas: null,
      };
      t.rt.requestLog!.record(e);
    });
    await t.rt.requestLog!.flush();
    for (const [name] of made) ids[name] = `req-${name}`;
    ({ owner, ownerB } = await signedInOwners(t.app));
  });
  afterAll(async () => {
    await t?.close();
  });

  it("names the app of each request made with a token, and offers the clinic's apps only as a filter", async () => {
    const page = (await owner.get(LOGS)).body;
    expect(logIds(page)).toEqual([ids.claude, ids.agenda2, ids.agenda1, ids.key]);
    const row = (id: string) => new RegExp(`<tr data-request-id="${id}"[^]*?</tr>`).exec(page)![0];
    // Its two grants told apart by the resource each is for.
    expect(row(ids.agenda1!)).toContain(
      '<span class="key-name">Agenda Partner (API)</span> <span class="badge plain badge-plan">app</span>',
    );
    expect(row(ids.agenda2!)).toContain(
      '<span class="key-name">Agenda Partner (MCP)</span> <span class="badge plain badge-plan">app</span>',
    );
    expect(row(ids.claude!)).toContain('<span class="key-name">Claude (API)</span>');
    expect(row(ids.key!)).toContain('<span class="key-name">Zapier</span>');
    expect(row(ids.key!)).not.toContain('badge-plan');
    expect(page).not.toContain(grant('a'));
    // The filter: one option per app (not per grant), by name; clinic B's app is not among them.
    const select = /<select id="f-app" name="app">[^]*?<\/select>/.exec(page)![0];
    expect([...select.matchAll(/<option value="([^"]*)"[^>]*>([^<]+)</g)].map((m) => [m[1], m[2]])).toEqual([
      ['', 'Cualquier aplicación'],
      ['client-agenda', 'Agenda Partner'],
      ['client-claude', 'Claude'],
    ]);
    expect(page).toContain('<label for="f-app">Aplicación</label>');
    expect(page).not.toContain('Otro CRM');

    const b = (await ownerB.get(LOGS)).body;
    expect(logIds(b)).toEqual([ids.crmB]);
    expect(b).toContain('<label for="f-app">App</label>');
    expect(b).toContain('>Any app<');
    expect(b).not.toContain('Agenda Partner');
  });

  it('filters by app (every grant of it) or by one grant; another clinic’s app is an unusable filter that reads nothing of it', async () => {
    const list = async (q: string) => (await owner.get(`${LOGS}?${q}`)).body;
    expect(logIds(await list('app=client-agenda'))).toEqual([ids.agenda2, ids.agenda1]);
    expect(await list('app=client-agenda')).toMatch(/<option value="client-agenda"\s+selected>Agenda Partner</);
    expect(logIds(await list(`app=${grant('a')}`))).toEqual([ids.agenda1]);
    expect(logIds(await list('app=client-claude&endpoint=/api/v1/me'))).toEqual([]);
    expect(logIds(await list('app=client-agenda&endpoint=/api/v1/me'))).toEqual([ids.agenda2]);
    // A key and an app at once: a request is made with one or the other, so nothing.
    expect(logIds(await list(`app=client-agenda&key=${keyId}`))).toEqual([]);
    for (const q of ['app=client-crm-b', `app=${grant('d')}`, 'app=nope']) {
      const page = await list(q);
      expect(page, q).toContain('id="bad-filter"');
      expect(logIds(page), q).toEqual([ids.claude, ids.agenda2, ids.agenda1, ids.key]);
    }
  });

  it('one request made with a token names its app and grant; another clinic’s is not found', async () => {
    const page = (await owner.get(`${LOGS}/${ids.agenda1}`)).body;
    expect(page).toMatch(new RegExp(`<dd id="request-app">Agenda Partner \\(API\\) <code class="small">${grant('a')}</code></dd>`));
    expect(page).toContain('<dt>Aplicación autorizada</dt>');
    expect(page).not.toContain('<dt>Clave</dt>');
    const keyed = (await owner.get(`${LOGS}/${ids.key}`)).body;
    expect(keyed).toContain('<dt>Clave</dt>');
    expect(keyed).not.toContain('id="request-app"');
    expect((await owner.get(`${LOGS}/${ids.crmB}`)).statusCode).toBe(404);
    const en = (await ownerB.get(`${LOGS}/${ids.crmB}`)).body;
    expect(en).toContain('<dt>Authorised app</dt>');
    expect(en).toContain('<dd id="request-app">Otro CRM');
  });
});
