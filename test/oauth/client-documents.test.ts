// Apps without registration (Client ID Metadata Documents): the app's client_id is the URL of a
// JSON document about itself, served here by a real HTTP server on 127.0.0.1 (allowed by
// OAUTH_CLIENT_METADATA_ALLOW_PRIVATE, the try-out setting). The whole flow with oauth4webapi:
// discovery, the consent page, the code with PKCE, the token on the API, refresh; `iss` on the
// redirect back. Then each refusal, shown on the error page with what is wrong: a private address
// without the setting, a document too large, one that never arrives, one that names another
// client_id, a redirect_uri it does not list.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { App, Browser, EMAILS, insecure, REDIRECT, startOAuthServer, type OAuthServer } from './helpers.js';

/** Documents by path; `/slow.json` never answers. */
async function documentServer(): Promise<{ origin: string; hits: Map<string, number>; close: () => Promise<void> }> {
  const hits = new Map<string, number>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const self = `${origin}${path}`;
    const send = (doc: unknown, headers: Record<string, string> = {}) =>
      res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(doc));
    const good = { client_id: self, client_name: 'Doc App', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };
    if (path === '/app.json') return send(good, { 'cache-control': 'max-age=600' });
    if (path === '/big.json') return send({ ...good, client_name: 'x'.repeat(6000) });
    if (path === '/other.json') return send({ ...good, client_id: `${origin}/app.json` });
    if (path === '/slow.json') return void hanging.add(res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    hits,
    close: () => {
      for (const res of hanging) res.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(dialects())('client ID metadata documents on %s', (dialect) => {
  let s: OAuthServer;
  let docs: Awaited<ReturnType<typeof documentServer>>;
  let owner: Browser;
  let as: oauth.AuthorizationServer;
  beforeAll(async () => {
    docs = await documentServer();
    s = await startOAuthServer(dialect, { OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: '1', OAUTH_AUTHORIZATION_REQUESTS_PER_MINUTE: '1000' });
    owner = new Browser(s.origin);
    await owner.signIn(EMAILS.ownerA);
    const issuer = new URL(s.origin);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  });
  afterAll(async () => {
    await s?.close();
    await docs?.close();
  });

  const appAt = (path: string, redirect = REDIRECT) =>
    new App(as, { client_id: `${docs.origin}${path}`, token_endpoint_auth_method: 'none' }, `${s.origin}/api/v1`, redirect);

  /** The error page an authorization request of `app` gets (never a redirect to the app). */
  async function refusal(app: App): Promise<string> {
    const { url } = await app.authorizationUrl({ scope: 'citas:read' });
    const res = await owner.request(url);
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    return res.text();
  }

  it('the metadata says so; an app known only by its document connects: consent, code with PKCE, token, refresh', async () => {
    expect(as.client_id_metadata_document_supported).toBe(true);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    const app = appAt('/app.json');
    const c = await app.consent(owner, { scope: 'citas:read clientas:read', allow: ['citas:read'] });
    expect(c.page).toContain('Doc App');
    // The host that published the document is shown: it is a fact, where the name is the app's own word.
    expect(c.page).toContain(`Su descripción la publica ${new URL(docs.origin).host}.`);
    expect(c.callback.searchParams.get('iss')).toBe(s.origin);
    const t = await app.exchange(c);
    expect(t.scope).toBe('citas:read');
    const me = await fetch(`${s.origin}/api/v1/me`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { api_key: { nombre: string } }).api_key.nombre).toBe('Doc App');
    const t2 = await app.refresh(t.refresh_token!);
    expect(t2.access_token).not.toBe(t.access_token);
    // Kept as its Cache-Control allows: fetched once for the whole flow.
    expect(docs.hits.get('/app.json')).toBe(1);
    const grants = await s.database.db.selectFrom('oauth_grants').select(['client_id', 'client_name']).execute();
    expect(grants).toContainEqual({ client_id: `${docs.origin}/app.json`, client_name: 'Doc App' });
  });

  it('a redirect_uri the document does not list is refused on the error page', async () => {
    const text = await refusal(appAt('/app.json', 'http://127.0.0.1:5556/callback'));
    expect(text).toContain('invalid_redirect_uri');
  });

  it('a document that names another client_id, one over 5 KB, one that never arrives: each refused with what is wrong', async () => {
    expect(await refusal(appAt('/other.json'))).toContain('its client_id must be its own URL');
    expect(await refusal(appAt('/big.json'))).toContain('is larger than 5 KB');
    expect(await refusal(appAt('/slow.json'))).toContain('did not arrive within 5 seconds');
    // The same request's second look-up (the provider's error handler) and a retry soon after do not fetch again.
    expect(docs.hits.get('/slow.json')).toBe(1);
    expect(await refusal(appAt('/missing.json'))).toContain('answered HTTP 404');
  });

  it('the token endpoint refuses a client_id whose document is refused, as invalid_client', async () => {
    const res = await fetch(`${s.origin}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'x',
        client_id: `${docs.origin}/other.json`,
        code_verifier: 'v'.repeat(43),
        redirect_uri: REDIRECT,
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: 'invalid_client',
      error_description: expect.stringContaining('its client_id must be its own URL') as string,
    });
  });
});

describe('client ID metadata documents without the try-out setting', () => {
  let s: OAuthServer;
  let docs: Awaited<ReturnType<typeof documentServer>>;
  beforeAll(async () => {
    docs = await documentServer();
    s = await startOAuthServer('sqlite');
  });
  afterAll(async () => {
    await s?.close();
    await docs?.close();
  });

  it('a document on a loopback address is refused, over https and http alike, naming the setting', async () => {
    const owner = new Browser(s.origin);
    await owner.signIn(EMAILS.ownerA);
    const issuer = new URL(s.origin);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    const https = docs.origin.replace('http:', 'https:');
    for (const [id, why] of [
      [`${https}/app.json`, 'which is not a public address'],
      [`${docs.origin}/app.json`, 'must be an https:// URL'],
    ] as const) {
      const app = new App(as, { client_id: id, token_endpoint_auth_method: 'none' }, `${s.origin}/api/v1`);
      const { url } = await app.authorizationUrl({ scope: 'citas:read' });
      const res = await owner.request(url);
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain(why);
      expect(text).toContain('OAUTH_CLIENT_METADATA_ALLOW_PRIVATE');
    }
    expect(docs.hits.size).toBe(0);
    // Registration by RFC 7591 is still there.
    await expect(App.register(s.origin, `${s.origin}/api/v1`)).resolves.toBeInstanceOf(App);
  });
});
