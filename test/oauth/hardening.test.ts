// The authorization server against an attacker's requests (issue 41's review), on a real server:
// the authorization endpoint redirects no error to an app's address before the owner has reached
// the consent page (the error page instead, in the browser's language); a token request refused
// for its `resource` uses up neither the code nor the refresh token; authorization requests are
// limited per address, their parameters capped, kept 10 minutes and swept once expired; an app's
// name and redirect URIs are bounded and cleaned at registration and labelled as its own. The
// attacker's address (evil.test) is only ever read from a Location header, never contacted.
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthSweep } from '../../src/services/oauth/sweep.js';
import { buildDashboardApp, signedInOwners, type DashboardApp } from '../admin/helpers.js';
import { App, Browser, EMAILS, insecure, startOAuthServer, type OAuthServer } from './helpers.js';

const EVIL = 'https://evil.test/phish';
const quiet = { info: () => {}, error: () => {} };

describe('OAuth against an attacker', () => {
  let s: OAuthServer;
  let api: string;
  let owner: Browser;
  let app: App;
  beforeAll(async () => {
    s = await startOAuthServer('sqlite', { OAUTH_REGISTRATIONS_PER_HOUR: '1000', OAUTH_AUTHORIZATION_REQUESTS_PER_MINUTE: '1000' });
    api = `${s.origin}/api/v1`;
    owner = new Browser(s.origin);
    await owner.signIn(EMAILS.ownerA);
    app = await App.register(s.origin, api);
  });
  afterAll(async () => {
    await s?.close();
  });

  const register = (md: Record<string, unknown>) =>
    fetch(`${s.origin}/oauth/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token_endpoint_auth_method: 'none', ...md }),
    });
  const artifacts = (model: string) => s.database.db.selectFrom('oauth_artifacts').selectAll().where('model', '=', model).execute();

  it('an error of the authorization request is shown on the error page, never redirected to the app (RFC 9700 4.11.2)', async () => {
    const reg = await register({ client_name: 'Phish', redirect_uris: [EVIL] });
    expect(reg.status).toBe(201);
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const pkce = {
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    };
    const attempts: Record<string, string>[] = [
      { response_type: 'code' }, // no PKCE
      { response_type: 'code', prompt: 'none', ...pkce },
      { response_type: 'token', ...pkce },
      { response_type: 'code', ...pkce, code_challenge_method: 'plain' },
      { response_type: 'code', ...pkce, response_mode: 'fragment', prompt: 'none' },
      { response_type: 'code', ...pkce, response_mode: 'form_post' }, // not offered: refused, not redirected
    ];
    for (const attempt of attempts) {
      const u = new URL('/oauth/auth', s.origin);
      for (const [k, v] of Object.entries({ client_id: clientId, redirect_uri: EVIL, state: 'abc', ...attempt })) u.searchParams.set(k, v);
      // Signed out (a phishing link's victim) and signed in (the owner): no redirect either way.
      const signedOut = () => fetch(u, { redirect: 'manual', headers: { 'accept-language': 'es-ES,es;q=0.9' } });
      for (const res of [await signedOut(), await owner.request(u)]) {
        expect(res.status, JSON.stringify(attempt) + res.headers.get('location')).toBe(400);
        expect(res.headers.get('location'), JSON.stringify(attempt)).toBeNull();
        const page = await res.text();
        expect(page).not.toContain('evil.test');
        expect(page).toContain('<html lang="es">');
        expect(page).toContain('No se puede completar la conexión de la aplicación');
        expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      }
    }
    // The same page in English for an English browser.
    const u = new URL('/oauth/auth', s.origin);
    for (const [k, v] of Object.entries({ client_id: clientId, redirect_uri: EVIL, response_type: 'code' })) u.searchParams.set(k, v);
    const en = await fetch(u, { redirect: 'manual', headers: { 'accept-language': 'en-GB,en;q=0.8' } });
    const page = await en.text();
    expect(page).toContain('<html lang="en">');
    expect(page).toContain('The app’s connection cannot be completed');
    expect(page).toContain('invalid_request');
  });

  it('a valid request goes to the consent page; the owner’s Deny is what goes back to the app', async () => {
    const { url } = await app.authorizationUrl({ scope: 'citas:read' });
    const res = await owner.request(url);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(/^\/dashboard\/oauth\/consent\?uid=/);
    const c = await app.consent(owner, { allow: false });
    expect(c.callback.searchParams.get('error')).toBe('access_denied');
    // OAuth is on: Connected apps has no word about turning it on.
    expect(await (await owner.request('/dashboard/settings/api/apps')).text()).not.toContain('apps-oauth-off');
  });

  const tokenRequest = (form: Record<string, string>) =>
    fetch(`${s.origin}/oauth/token`, { method: 'POST', body: new URLSearchParams({ client_id: app.client.client_id, ...form }) });

  it('a code or refresh token refused for its resource (invalid_target) is not used up: the correct retry works', async () => {
    const c = await app.consent(owner, { allow: ['citas:read'] });
    const code = c.callback.searchParams.get('code')!;
    const form = { grant_type: 'authorization_code', code, redirect_uri: app.redirect, code_verifier: c.verifier };
    for (const resource of [`${api}/`, `${s.origin}/mcp`, 'https://elsewhere.example/api']) {
      const res = await tokenRequest({ ...form, resource });
      expect(res.status, resource).toBe(400);
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error).toBe('invalid_target');
      expect(body.error_description).toContain(api);
    }
    const t = await app.exchange(c);
    expect(t.access_token).toBeTruthy();

    const refused = await tokenRequest({ grant_type: 'refresh_token', refresh_token: t.refresh_token!, resource: `${api}/` });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_target');
    const t2 = await app.refresh(t.refresh_token!);
    expect(t2.access_token).toBeTruthy();
    const me = await fetch(`${s.origin}/api/v1/me`, { headers: { authorization: `Bearer ${t2.access_token}` } });
    expect(me.status).toBe(200);
    expect((await s.appGrantsOf()).every((g) => g.revoked_reason !== 'reuse')).toBe(true);
  });

  it('authorization parameters are capped (a clear error, nothing stored); requests are kept 10 minutes, then swept', async () => {
    const before = (await artifacts('Interaction')).length;
    const big = await app.authorizationUrl({ scope: 'citas:read', extra: { state: 'x'.repeat(1025) } });
    let res = await owner.request(big.url);
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('state is 1025 characters long; at most 1024 are accepted');
    const nonce = await app.authorizationUrl({ scope: 'citas:read', extra: { nonce: 'n'.repeat(5000) } });
    expect((await owner.request(nonce.url)).status).toBe(400);
    expect((await artifacts('Interaction')).length).toBe(before);

    const ok = await app.authorizationUrl({ scope: 'citas:read', extra: { state: 's'.repeat(1024) } });
    res = await owner.request(ok.url);
    expect(res.status).toBe(303);
    const rows = await artifacts('Interaction');
    expect(rows.length).toBe(before + 1);
    const nowS = Date.now() / 1000;
    for (const r of rows) expect(Number(r.expires_at) - nowS).toBeLessThanOrEqual(600);
    expect(Math.max(...rows.map((r) => Number(r.expires_at))) - nowS).toBeGreaterThan(500);
    const tokens = (await artifacts('AccessToken')).length;
    expect(tokens).toBeGreaterThan(0);

    // Eleven minutes on: the requests go, the tokens (an hour) stay.
    const removed = await new OAuthSweep(s.database, { now: () => Date.now() + 11 * 60_000, log: quiet }).pass();
    expect(removed).toBeGreaterThanOrEqual(rows.length);
    expect(await artifacts('Interaction')).toEqual([]);
    expect((await artifacts('AccessToken')).length).toBe(tokens);
  });

  it('registration bounds the name and the redirect URIs (invalid_client_metadata) and removes invisible characters', async () => {
    const long = await register({ client_name: 'A'.repeat(5000), redirect_uris: ['https://ok.example/cb'] });
    expect(long.status).toBe(400);
    expect(await long.json()).toEqual({
      error: 'invalid_client_metadata',
      error_description: 'client_name is 5000 characters long; at most 100 are accepted: use a shorter name',
    });
    const many = await register({ redirect_uris: Array.from({ length: 500 }, (_, i) => `https://ok.example/cb${i}`) });
    expect(many.status).toBe(400);
    expect(await many.json()).toEqual({
      error: 'invalid_client_metadata',
      error_description: 'at most 10 redirect_uris are accepted per app; this registration lists 500',
    });
    expect((await register({ redirect_uris: Array.from({ length: 10 }, (_, i) => `https://ok.example/cb${i}`) })).status).toBe(201);

    const sneaky = await register({ client_name: 'Clínica\u202E Demo\u200B Aurora\u2066 (official)\uFEFF', redirect_uris: [app.redirect] });
    expect(sneaky.status).toBe(201);
    const md = (await sneaky.json()) as { client_id: string; client_name: string };
    expect(md.client_name).toBe('Clínica Demo Aurora (official)');

    const named = new App(app.as, { ...app.client, client_id: md.client_id }, api);
    const c = await named.consent(owner, { scope: 'citas:read', allow: false });
    expect(c.page).toContain('<span id="consent-app" dir="auto">Clínica Demo Aurora (official)</span>');
    expect(c.page).toContain('Es el nombre que la aplicación se ha dado a sí misma; nadie lo ha verificado.');
    expect(c.page).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200B-\u200F\uFEFF]/);
  });

  it('the metadata advertises only what is offered: no PAR, DPoP, jwks_uri or other response modes', async () => {
    const md = (await (await fetch(`${s.origin}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(md.response_modes_supported).toEqual(['query']);
    for (const k of [
      'pushed_authorization_request_endpoint',
      'require_pushed_authorization_requests',
      'dpop_signing_alg_values_supported',
      'jwks_uri',
    ])
      expect(md, k).not.toHaveProperty(k);
    const par = await fetch(`${s.origin}/oauth/request`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: app.client.client_id }),
    });
    expect(par.status).toBe(404);
    // oauth4webapi still discovers and uses it.
    const as = await oauth.processDiscoveryResponse(
      new URL(s.origin),
      await oauth.discoveryRequest(new URL(s.origin), { algorithm: 'oauth2', ...insecure }),
    );
    expect(as.authorization_endpoint).toBe(`${s.origin}/oauth/auth`);
  });
});

describe('OAuth authorization requests per address', () => {
  let s: OAuthServer;
  beforeAll(async () => {
    s = await startOAuthServer('sqlite', { OAUTH_AUTHORIZATION_REQUESTS_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('answer 429 with Retry-After past the limit, before anything is stored', async () => {
    const app = await App.register(s.origin, `${s.origin}/api/v1`);
    const browser = new Browser(s.origin);
    for (let i = 0; i < 3; i++) expect((await browser.request((await app.authorizationUrl()).url)).status).toBe(303);
    const refused = await browser.request((await app.authorizationUrl()).url);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ error: 'temporarily_unavailable' });
    const stored = await s.database.db.selectFrom('oauth_artifacts').select('model').where('model', '=', 'Interaction').execute();
    expect(stored.length).toBe(3);
  });
});

describe('Connected apps with OAuth off', () => {
  let t: DashboardApp;
  beforeAll(async () => {
    t = await buildDashboardApp('sqlite');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('says that the operator turns OAuth on with OAUTH_ISSUER', async () => {
    const { owner } = await signedInOwners(t.app);
    const res = await owner.get('/dashboard/settings/api/apps');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('id="apps-oauth-off"');
    expect(res.body).toContain('con la variable OAUTH_ISSUER');
  });
});
