// An app connected in test mode (the consent screen's "Test mode"): its tokens read the clinic's
// sandbox only, like a test key, on the REST API and /me (`modo: test`); an app connected live
// reads live data only; Connected apps marks the test connection. Both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { clinicARecords } from '../helpers/fixtures.js';
import { App, Browser, EMAILS, startOAuthServer, type OAuthServer } from './helpers.js';

describe.each(dialects())('OAuth in test mode on %s', (dialect) => {
  let s: OAuthServer;
  let owner: Browser;
  let app: App;
  beforeAll(async () => {
    s = await startOAuthServer(dialect, { OAUTH_AUTHORIZATION_REQUESTS_PER_MINUTE: '1000' });
    await seedRecords(s.database, s.clinicA, clinicARecords());
    owner = new Browser(s.origin);
    await owner.signIn(EMAILS.ownerA);
    app = await App.register(s.origin, `${s.origin}/api/v1`);
  });
  afterAll(async () => {
    await s?.close();
  });

  const get = async (token: string, path: string) =>
    (await (await fetch(`${s.origin}${path}`, { headers: { authorization: `Bearer ${token}` } })).json()) as Record<string, any>;

  it('a test-mode connection reads the sandbox only; a live one live data only', async () => {
    const first = await app.consent(owner, { allow: ['clientas:read'] });
    expect(first.page).toContain('name="mode" value="test"');
    const live = await app.exchange(first);
    const test = await app.exchange(await app.consent(owner, { allow: ['clientas:read'], test: true }));
    expect((await get(test.access_token, '/api/v1/me')).modo).toBe('test');
    expect((await get(live.access_token, '/api/v1/me')).modo).toBe('live');
    const ids = async (token: string) => ((await get(token, '/api/v1/clientas?limit=500')).clientas as { id: string }[]).map((c) => c.id);
    const testIds = await ids(test.access_token);
    const liveIds = await ids(live.access_token);
    expect(testIds.length).toBeGreaterThan(0);
    expect(liveIds.length).toBeGreaterThan(0);
    expect(testIds.filter((id) => liveIds.includes(id))).toEqual([]);
    expect(await s.rt.sandboxes.find(s.clinicA.id)).not.toBeNull();
    // Connected apps marks the test connection, and names each connection's resource.
    const apps = await (await owner.request('/dashboard/settings/api/apps')).text();
    expect(apps.match(/badge-test/g)).toHaveLength(1);
    expect(apps).toContain('data-resource="api"');
  });
});
