// The OAuth flow end to end on a real server (both databases), driven by a real OAuth client
// library (oauth4webapi) as an app, and a cookie-keeping fetch as the owner's browser on the
// dashboard's real pages: discovery from a 401, registration, consent (allow, deny, fewer scopes,
// the clinic a superadmin picks), the code with PKCE, tokens on the API like keys, refresh
// rotation and reuse detection, revocation, disconnect, and the flow's refusals.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { App, Browser, csrf, EMAILS, insecure, REDIRECT, startOAuthServer, type OAuthServer } from './helpers.js';

// ajv-formats is CommonJS: under NodeNext its default import is module.exports, which carries .default.
const addFormats = addFormatsModule.default;

describe.each(dialects())('OAuth on %s', (dialect) => {
  let s: OAuthServer;
  let api: string;
  let mcp: string;
  let owner: Browser;
  let app: App;
  beforeAll(async () => {
    // Every flow of this file comes from 127.0.0.1: more authorization requests in a minute than an
    // address may make (the limit has its own test, hardening.test.ts).
    // WEBHOOK_ALLOW_PRIVATE: an app's token subscribes an endpoint on 127.0.0.1 (no delivery is awaited).
    s = await startOAuthServer(dialect, { OAUTH_AUTHORIZATION_REQUESTS_PER_MINUTE: '1000', WEBHOOK_ALLOW_PRIVATE: 'true' });
    api = `${s.origin}/api/v1`;
    mcp = `${s.origin}/mcp`;
    owner = new Browser(s.origin);
    await owner.signIn(EMAILS.ownerA);
    app = await App.register(s.origin, api);
  });
  afterAll(async () => {
    await s?.close();
  });

  const me = (token: string, path = '/api/v1/me') => fetch(`${s.origin}${path}`, { headers: { authorization: `Bearer ${token}` } });

  it('a 401 names the resource metadata, which names the authorization server and its metadata', async () => {
    const res = await fetch(`${s.origin}/api/v1/citas`);
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).toBe(`Bearer realm="api", resource_metadata="${s.origin}/.well-known/oauth-protected-resource/api/v1"`);
    const bad = await me('x'.repeat(43));
    expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const rs = await oauth.processResourceDiscoveryResponse(new URL(api), await oauth.resourceDiscoveryRequest(new URL(api), insecure));
    expect(rs.authorization_servers).toEqual([s.origin]);
    expect(rs.scopes_supported).toContain('citas:read');
    const rsMcp = await oauth.processResourceDiscoveryResponse(new URL(mcp), await oauth.resourceDiscoveryRequest(new URL(mcp), insecure));
    expect(rsMcp.resource).toBe(mcp);

    const as = app.as;
    expect(as.issuer).toBe(s.origin);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.response_types_supported).toEqual(['code']);
    expect(as.grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
    expect(as.token_endpoint).toBe(`${s.origin}/oauth/token`);
    expect(as.registration_endpoint).toBe(`${s.origin}/oauth/reg`);
    expect(as.revocation_endpoint).toBe(`${s.origin}/oauth/token/revocation`);
    expect(as.token_endpoint_auth_methods_supported).toEqual(['none']);
  });

  it('registration refuses redirect URIs that are not https or loopback http, fragments and other grants', async () => {
    const register = (md: Partial<oauth.Client>) => oauth.dynamicClientRegistrationRequest(app.as, md, insecure);
    for (const bad of ['http://evil.example/cb', 'myapp:/cb', 'https://ok.example/cb#frag', 'http://192.168.1.5/cb']) {
      const res = await register({ redirect_uris: [bad] });
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_redirect_uri');
    }
    const implicit = await register({ redirect_uris: ['https://ok.example/cb'], grant_types: ['implicit'] });
    expect(implicit.status).toBe(400);
    const secret = await register({ redirect_uris: ['https://ok.example/cb'], token_endpoint_auth_method: 'client_secret_basic' });
    expect(secret.status).toBe(400);
  });

  it('consent with fewer scopes than asked: a token of the clinic with those scopes, stored only as a keyed hash', async () => {
    const c = await app.consent(owner, { scope: 'citas:read clientas:read', allow: ['citas:read'] });
    // The consent page shows the app, where the browser returns, the clinic, and only the scopes asked for.
    expect(c.page).toContain('Test CRM');
    expect(c.page).toContain('127.0.0.1:5555');
    expect(c.page).toContain('Clínica Uno');
    expect(c.page).toContain('value="citas:read"');
    expect(c.page).toContain('value="clientas:read"');
    expect(c.page).not.toContain('value="contacto:read"');
    expect(c.page).not.toContain('consent-app-document'); // a registered app has no document host
    expect(c.callback.origin + c.callback.pathname).toBe(REDIRECT);
    const t = await app.exchange(c);
    expect(t.scope).toBe('citas:read');
    expect(t.expires_in).toBeLessThanOrEqual(3600);
    expect(t.refresh_token).toBeTruthy();
    const res = await me(t.access_token);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(JSON.stringify(body)).toContain(s.clinicA.id);
    expect((await me(t.access_token, '/api/v1/citas')).status).toBe(200);
    // Outside the granted scopes: the API's 403, as on /mcp: the challenge names the granted scopes
    // and the missing one together (the app asks again and the owner adds it to this connection),
    // and the resource's metadata; the message says so, not "add it to the key".
    const outside = await me(t.access_token, '/api/v1/clientas');
    expect(outside.status).toBe(403);
    const metadata = `${s.origin}/.well-known/oauth-protected-resource/api/v1`;
    expect(outside.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="citas:read clientas:read", resource_metadata="${metadata}"`,
    );
    const refusal = ((await outside.json()) as { error: { code: string; scope: string; message: string } }).error;
    expect(refusal).toMatchObject({ code: 'insufficient_scope', scope: 'clientas:read' });
    expect(refusal.message).toContain('This connection was not granted the scope clientas:read, which this request needs');
    expect((body.api_key as { scopes: string[]; nombre: string }).scopes).toEqual(['citas:read']);
    expect((body.api_key as { nombre: string }).nombre).toBe('Test CRM');

    const rows = await s.database.db.selectFrom('oauth_artifacts').selectAll().execute();
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(t.access_token);
    expect(dump).not.toContain(t.refresh_token!);
    expect(rows.some((r) => r.model === 'AccessToken')).toBe(true);

    // The request log names the grant (the app), not a key.
    await s.rt.requestLog!.flush();
    const logged = await s.database.db
      .selectFrom('request_log')
      .select(['key_id', 'grant_id', 'status'])
      .where('clinic_id', '=', s.clinicA.id)
      .where('path', '=', '/api/v1/clientas')
      .execute();
    const [grant] = (await s.appGrantsOf()).filter((g) => g.clinic_id === s.clinicA.id);
    expect(logged).toContainEqual({ key_id: null, grant_id: grant!.id, status: 403 });
  });

  it('a token for /mcp is refused by the REST API (bound to its resource), with a message that says so and what to do', async () => {
    const mcpApp = new App(app.as, app.client, mcp);
    const t = await mcpApp.exchange(await mcpApp.consent(owner, { scope: 'citas:read', allow: ['citas:read'] }));
    const res = await me(t.access_token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const error = ((await res.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('invalid_api_key');
    expect(error.message).toBe(
      `This access token was issued for the MCP server (${mcp}), not for the REST API: a token is good only for the resource ` +
        `it was issued for. Use it on ${mcp}, or get a token for this one (resource=${api} in the authorization and token requests)`,
    );
    // and the reverse: a REST token on /mcp
    const restToken = (await app.exchange(await app.consent(owner, { scope: 'citas:read', allow: ['citas:read'] }))).access_token;
    const onMcp = await fetch(mcp, {
      method: 'POST',
      headers: { authorization: `Bearer ${restToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(onMcp.status).toBe(401);
    expect(((await onMcp.json()) as { error: { message: string } }).error.message).toContain(
      `This access token was issued for the REST API (${api}), not for the MCP server:`,
    );
  });

  it("a token's /api/v1/me and get_clinic are true to their published schemas: api_key.id is the connection's id", async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const doc = (await (await fetch(`${api}/openapi.json`)).json()) as { components: { schemas: Record<string, unknown> } };
    for (const [name, schema] of Object.entries(doc.components.schemas))
      ajv.addSchema(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"')) as object, name);
    const t = await app.exchange(await app.consent(owner, { scope: 'citas:read', allow: ['citas:read'] }));
    const body = (await (await me(t.access_token)).json()) as { api_key: { id: string } };
    const validMe = ajv.getSchema('Me')!;
    expect(validMe(body), ajv.errorsText(validMe.errors)).toBe(true);
    const grants = (await s.appGrantsOf()).filter((g) => g.clinic_id === s.clinicA.id && g.revoked_reason === null).map((g) => g.id);
    expect(grants).toContain(body.api_key.id);

    // get_clinic with a token for /mcp: its structuredContent validates against the tool's own outputSchema
    const mcpApp = new App(app.as, app.client, mcp);
    const mt = (await mcpApp.exchange(await mcpApp.consent(owner, { scope: 'citas:read', allow: ['citas:read'] }))).access_token;
    const rpc = async (message: object) => {
      const res = await fetch(mcp, {
        method: 'POST',
        headers: { authorization: `Bearer ${mt}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...message }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { result: Record<string, any> }).result;
    };
    const tool = ((await rpc({ method: 'tools/list' })).tools as { name: string; outputSchema: object }[]).find(
      (x) => x.name === 'get_clinic',
    )!;
    const result = await rpc({ method: 'tools/call', params: { name: 'get_clinic', arguments: {} } });
    expect(result.isError).toBeFalsy();
    const validTool = ajv.compile(tool.outputSchema);
    expect(validTool(result.structuredContent), ajv.errorsText(validTool.errors)).toBe(true);
    expect(result.structuredContent.api_key.id).not.toBe(body.api_key.id); // a connection of its own, for /mcp
    expect((await s.appGrantsOf()).map((g) => g.id)).toContain(result.structuredContent.api_key.id);
  });

  it('every authorization response names the issuer (RFC 9207 iss), as the metadata says: a code and an error alike', async () => {
    expect(app.as.authorization_response_iss_parameter_supported).toBe(true);
    const allowed = await app.consent(owner, { allow: ['citas:read'] });
    expect(allowed.callback.searchParams.get('code')).toBeTruthy();
    expect(allowed.callback.searchParams.get('iss')).toBe(s.origin);
    const denied = await app.consent(owner, { allow: false });
    expect(denied.callback.searchParams.get('error')).toBe('access_denied');
    expect(denied.callback.searchParams.get('iss')).toBe(s.origin);
    // oauth4webapi checks it: a response naming another issuer is refused (a mix-up attack).
    const forged = new URL(allowed.callback);
    forged.searchParams.set('iss', 'https://evil.example');
    expect(() => oauth.validateAuthResponse(app.as, app.client, forged, allowed.state)).toThrow();
  });

  it('deny sends access_denied back to the app', async () => {
    const c = await app.consent(owner, { allow: false });
    expect(() => oauth.validateAuthResponse(app.as, app.client, c.callback, c.state)).toThrow(
      expect.objectContaining({ error: 'access_denied' }) as Error,
    );
  });

  it('PKCE: missing or plain is refused at the authorization request (on the error page), a wrong verifier at the token endpoint', async () => {
    const browser = owner;
    const none = await app.authorizationUrl({ pkce: false });
    let res = await browser.request(none.url);
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('invalid_request');
    const plain = await app.authorizationUrl({ pkce: false, extra: { code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' } });
    res = await browser.request(plain.url);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('invalid_request');

    const c = await app.consent(owner, { allow: ['citas:read'] });
    await expect(app.exchange({ ...c, verifier: oauth.generateRandomCodeVerifier() })).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('a code used twice: refused, and the tokens of its first use are revoked', async () => {
    const c = await app.consent(owner, { allow: ['citas:read'] });
    const t = await app.exchange(c);
    expect((await me(t.access_token)).status).toBe(200);
    await expect(app.exchange(c)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await me(t.access_token)).status).toBe(401);
  });

  it('a redirect URI that differs is shown as an error, never redirected to', async () => {
    for (const bad of ['http://127.0.0.1:5556/callback', `${REDIRECT}/`, 'https://evil.example/cb']) {
      const { url } = await app.authorizationUrl({ extra: { redirect_uri: bad } });
      const res = await owner.request(url);
      expect(res.status, bad).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      const text = await res.text();
      expect(text).toContain('invalid_redirect_uri');
      expect(text).not.toContain('at ');
    }
  });

  it('refresh tokens rotate; a reused one ends the whole grant', async () => {
    const t1 = await app.exchange(await app.consent(owner, { allow: ['citas:read'] }));
    const t2 = await app.refresh(t1.refresh_token!);
    expect(t2.refresh_token).not.toBe(t1.refresh_token);
    expect((await me(t2.access_token)).status).toBe(200);
    await expect(app.refresh(t1.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await me(t2.access_token)).status).toBe(401);
    expect((await me(t1.access_token)).status).toBe(401);
    await expect(app.refresh(t2.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const grants = await s.appGrantsOf();
    expect(grants.some((g) => g.revoked_reason === 'reuse')).toBe(true);
  });

  it('revocation (RFC 7009) ends the grant at once', async () => {
    const t = await app.exchange(await app.consent(owner, { allow: ['citas:read'] }));
    expect((await me(t.access_token)).status).toBe(200);
    await app.revoke(t.access_token);
    expect((await me(t.access_token)).status).toBe(401);
    await expect(app.refresh(t.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('the webhook endpoints a connection subscribed are disabled when it ends, with the reason: a disconnect, the app revoking its token', async () => {
    const subscribe = async (token: string) => {
      const res = await fetch(`${api}/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', eventos: ['cita.creada'] }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const endpoint = (id: string) =>
      s.database.db.selectFrom('webhook_endpoints').select(['enabled', 'disabled_reason']).where('id', '=', id).executeTakeFirstOrThrow();
    const grantOf = async (id: string) =>
      (await s.database.db.selectFrom('webhook_endpoints').select('created_by_grant').where('id', '=', id).executeTakeFirstOrThrow())
        .created_by_grant!;
    const scope = ['citas:read', 'webhooks:write'];
    // No maintenance pass runs in this server: the ending itself disables them.
    const zap = await App.register(s.origin, api, 'Hooks App');
    const t1 = await zap.exchange(await zap.consent(owner, { scope: scope.join(' '), allow: scope }));
    const first = await subscribe(t1.access_token);
    expect(await endpoint(first)).toEqual({ enabled: 1, disabled_reason: null });
    expect((await s.rt.appGrants.disconnect(s.clinicA.id, await grantOf(first)))!.revoked).toBe(true);
    expect(await endpoint(first)).toEqual({ enabled: 0, disabled_reason: 'grant_revoked' });

    const t2 = await zap.exchange(await zap.consent(owner, { scope: scope.join(' '), allow: scope }));
    const second = await subscribe(t2.access_token);
    await zap.revoke(t2.access_token);
    expect(await endpoint(second)).toEqual({ enabled: 0, disabled_reason: 'grant_revoked' });
  });

  it("Cursor's registration (its private-use cursor:// redirect beside an https and a loopback one) connects through it", async () => {
    const cursorUri = 'cursor://anysphere.cursor-mcp/oauth/callback';
    for (const bad of ['cursor://anysphere.cursor-mcp/other', 'vscode://x/callback']) {
      const res = await oauth.dynamicClientRegistrationRequest(app.as, { redirect_uris: [bad] }, insecure);
      expect(res.status, bad).toBe(400);
    }
    const res = await oauth.dynamicClientRegistrationRequest(
      app.as,
      {
        client_name: 'Cursor',
        redirect_uris: [cursorUri, 'https://www.cursor.com/agents/mcp/oauth/callback', 'http://localhost:8787/callback'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
      },
      insecure,
    );
    const cursor = new App(app.as, await oauth.processDynamicClientRegistrationResponse(res), mcp, cursorUri);
    const c = await cursor.consent(owner, { scope: 'citas:read', allow: ['citas:read'] });
    expect(c.callback.href.startsWith(`${cursorUri}?`)).toBe(true);
    expect((await cursor.exchange(c)).scope).toBe('citas:read');
  });

  it('incremental consent: the same owner allowing the same app again changes its one connection, whose tokens keep working', async () => {
    const crm = await App.register(s.origin, api, 'Incremental CRM');
    const rows = () =>
      s.database.db.selectFrom('oauth_grants').select(['id', 'scopes']).where('client_id', '=', crm.client.client_id).execute();
    const t1 = await crm.exchange(await crm.consent(owner, { scope: 'citas:read llamadas:read', allow: ['citas:read', 'llamadas:read'] }));
    const [first] = await rows();
    // Asked for one more scope: the page says the app is connected already, and allowing adds it to that connection.
    const more = await crm.consent(owner, { scope: 'clientas:read', allow: ['clientas:read'] });
    expect(more.page).toContain('Ya conectaste esta aplicación a Clínica Uno con estos permisos');
    const t2 = await crm.exchange(more);
    expect(t2.scope).toBe('clientas:read');
    expect(await rows()).toEqual([{ id: first!.id, scopes: 'citas:read clientas:read llamadas:read' }]);
    expect((await me(t1.access_token, '/api/v1/citas')).status).toBe(200);
    expect((await me(t2.access_token, '/api/v1/clientas')).status).toBe(200);
    // The scopes asked about become the ones ticked (one unticked leaves); the others stay.
    await crm.exchange(await crm.consent(owner, { scope: 'citas:read clientas:read', allow: ['clientas:read'] }));
    expect(await rows()).toEqual([{ id: first!.id, scopes: 'clientas:read llamadas:read' }]);
    const list = await (await owner.request('/dashboard/settings/api/apps')).text();
    expect(list.match(/<span class="key-name">Incremental CRM/g)).toHaveLength(1);
  });

  it('Connected apps lists the grant; Disconnect refuses its tokens at once', async () => {
    const named = await App.register(s.origin, api, 'Agenda Partner');
    const t = await named.exchange(await named.consent(owner, { allow: ['citas:read', 'llamadas:read'] }));
    expect((await me(t.access_token)).status).toBe(200);
    const list = await (await owner.request('/dashboard/settings/api/apps')).text();
    expect(list).toContain('Agenda Partner');
    // who connected it (the address wraps only before its "@")
    expect(list).toContain(EMAILS.ownerA.replace('@', '</span><wbr><span>@'));
    const grantId = new RegExp(`data-grant-id="([^"]+)">\\s*<td[^>]*><span class="key-name">Agenda Partner`).exec(list)![1]!;
    const confirm = await (await owner.request(`/dashboard/settings/api/apps/${grantId}/disconnect`)).text();
    const res = await owner.request(`/dashboard/settings/api/apps/${grantId}/disconnect`, { form: { _csrf: csrf(confirm) } });
    expect(res.status).toBe(303);
    expect((await me(t.access_token)).status).toBe(401);
    await expect(named.refresh(t.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const after = await (await owner.request('/dashboard/settings/api/apps')).text();
    expect(after).toContain('Agenda Partner se ha desconectado.');
  });

  it('two clinics: a superadmin picks the clinic; each token reads its own clinic only', async () => {
    const root = new Browser(s.origin);
    await root.signIn(EMAILS.superadmin);
    const { url } = await app.authorizationUrl({ scope: 'citas:read' });
    const consentUrl = (await root.request(url)).headers.get('location')!;
    const page = await (await root.request(consentUrl)).text();
    expect(page).toContain(`<option value="${s.clinicA.id}">`);
    expect(page).toContain(`<option value="${s.clinicB.id}">`);
    expect(page).not.toContain(`<option value="${s.clinicLow.id}">`);
    const tB = await app.exchange(await app.consent(root, { allow: ['citas:read'], clinic: s.clinicB.id }));
    const tA = await app.exchange(await app.consent(owner, { allow: ['citas:read'] }));
    const meB = JSON.stringify(await (await me(tB.access_token)).json());
    const meA = JSON.stringify(await (await me(tA.access_token)).json());
    expect(meB).toContain(s.clinicB.id);
    expect(meB).not.toContain(s.clinicA.id);
    expect(meA).toContain(s.clinicA.id);
    // Clinic A's owner sees only A's grants.
    const list = await (await owner.request('/dashboard/settings/api/apps')).text();
    expect(list).not.toContain(EMAILS.superadmin);
  });

  it('staff cannot grant; someone signed out signs in first and comes back to the consent page', async () => {
    const staff = new Browser(s.origin);
    await staff.signIn(EMAILS.staffA);
    const { url } = await app.authorizationUrl({ scope: 'citas:read' });
    const consentUrl = (await staff.request(url)).headers.get('location')!;
    expect((await staff.request(consentUrl)).status).toBe(403);

    const fresh = new Browser(s.origin);
    const a = await app.authorizationUrl({ scope: 'citas:read' });
    const to = (await fresh.request(a.url)).headers.get('location')!;
    const toSignIn = await fresh.request(to);
    expect(toSignIn.status).toBe(303);
    const signIn = toSignIn.headers.get('location')!;
    expect(signIn).toContain('next=');
    const page = await (await fresh.request(signIn)).text();
    const res = await fresh.request('/dashboard/sign-in', {
      form: {
        _csrf: csrf(page),
        email: EMAILS.ownerA,
        password: 'correct horse battery',
        next: /name="next" value="([^"]+)"/.exec(page)![1]!.replaceAll('&amp;', '&'),
      },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(to);
    expect((await fresh.request(to)).status).toBe(200);
  });

  it('a consent form without its CSRF token is refused', async () => {
    const { url } = await app.authorizationUrl({ scope: 'citas:read' });
    const consentUrl = (await owner.request(url)).headers.get('location')!;
    const page = await (await owner.request(consentUrl)).text();
    const uid = /name="uid" value="([^"]+)"/.exec(page)![1]!;
    const res = await owner.request('/dashboard/oauth/consent', {
      form: { uid, clinic: s.clinicA.id, action: 'allow', scope: 'citas:read' },
    });
    expect(res.status).toBe(403);
  });
});

describe('OAuth limits per address', () => {
  let s: OAuthServer;
  beforeAll(async () => {
    s = await startOAuthServer('sqlite', { OAUTH_REGISTRATIONS_PER_HOUR: '2', OAUTH_TOKEN_REQUESTS_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('registration and the token endpoint answer 429 with Retry-After past their limits, in OAuth’s error shape', async () => {
    const reg = () =>
      fetch(`${s.origin}/oauth/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
      });
    expect((await reg()).status).toBe(201);
    expect((await reg()).status).toBe(201);
    const refused = await reg();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ error: 'temporarily_unavailable' });

    const token = () =>
      fetch(`${s.origin}/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'y' }),
      });
    for (let i = 0; i < 3; i++) expect((await token()).status).not.toBe(429);
    expect((await token()).status).toBe(429);
  });
});
