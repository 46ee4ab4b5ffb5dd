// An MCP client that speaks OAuth connects to /mcp end to end: the official SDK's client with its
// own OAuth support (an OAuthClientProvider: the SDK discovers the authorization server from
// /mcp's 401, registers, builds the authorization request with PKCE and the /mcp resource,
// exchanges the code and sends the token), the owner consenting on the dashboard's real pages.
// Both databases.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { approve, Browser, EMAILS, REDIRECT, startOAuthServer, type OAuthServer } from './helpers.js';

/** What an MCP host keeps for one server: its registration, the PKCE verifier, the tokens. */
class HostStorage implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier: string | undefined;
  /** where the host would send the owner's browser */
  authorizationUrl: URL | undefined;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'An MCP host',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
}

describe.each(dialects())('an MCP client with OAuth on %s', (dialect) => {
  let s: OAuthServer;
  beforeAll(async () => {
    s = await startOAuthServer(dialect);
  });
  afterAll(async () => {
    await s?.close();
  });

  it("discovers from /mcp's 401, is granted citas:read by the owner, and lists and calls only those tools", async () => {
    const mcp = new URL(`${s.origin}/mcp`);
    const unauthorized = await fetch(mcp, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('www-authenticate')).toContain(
      `resource_metadata="${s.origin}/.well-known/oauth-protected-resource/mcp"`,
    );

    const host = new HostStorage();
    await expect(
      new Client({ name: 'host', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(mcp, { authProvider: host })),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    const asked = host.authorizationUrl!;
    expect(asked.origin + asked.pathname).toBe(`${s.origin}/oauth/auth`);
    expect(asked.searchParams.get('resource')).toBe(mcp.href);
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');

    const owner = new Browser(s.origin);
    await owner.signIn(EMAILS.ownerA);
    const { callback } = await approve(owner, asked, { allow: ['citas:read'] });
    const transport = new StreamableHTTPClientTransport(mcp, { authProvider: host });
    await transport.finishAuth(callback.searchParams.get('code')!);
    expect(host.saved?.access_token).toBeTruthy();

    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcp, { authProvider: host }));
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('list_citas');
    expect(names).not.toContain('list_clientas');
    const page = await client.callTool({ name: 'list_citas', arguments: { limit: 1 } });
    expect(page.isError).toBeFalsy();
    expect((page.structuredContent as { citas: unknown[]; limit: number }).limit).toBe(1);
    await client.close();

    // A tool outside the grant: HTTP 403 with the step-up challenge, naming what the token has and what it lacks.
    const raw = await fetch(mcp, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${host.saved!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_clientas', arguments: {} } }),
    });
    expect(raw.status).toBe(403);
    const metadata = `${s.origin}/.well-known/oauth-protected-resource/mcp`;
    expect(raw.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="citas:read clientas:read", resource_metadata="${metadata}"`,
    );
    expect(((await raw.json()) as { error: { message: string } }).error.message).toContain('The app can ask for it again');
  });

  it('step-up: the host asks again for the scope the 403 names, the owner adds it to the same connection, the tool then answers', async () => {
    const mcp = new URL(`${s.origin}/mcp`);
    const owner = new Browser(s.origin);
    await owner.signIn(EMAILS.ownerA);
    const host = new HostStorage();
    await new Client({ name: 'host', version: '1.0.0' })
      .connect(new StreamableHTTPClientTransport(mcp, { authProvider: host }))
      .catch(() => {});
    const first = await approve(owner, host.authorizationUrl!, { allow: ['citas:read'] });
    await new StreamableHTTPClientTransport(mcp, { authProvider: host }).finishAuth(first.callback.searchParams.get('code')!);
    const connections = async () =>
      (await s.appGrantsOf()).filter((g) => g.revoked_reason === null && g.clinic_id === s.clinicA.id).map((g) => g.id);
    const before = await connections();

    // SDK 1.32 answers a 403 with a refresh when it holds a refresh token, which cannot widen a
    // token's scope (its known issue, fixed in later versions): this host keeps none, so the SDK
    // starts a new authorization with the challenge's scope, as a fixed SDK does.
    host.saved = { ...host.saved!, refresh_token: undefined };
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcp, { authProvider: host }));
    await expect(client.callTool({ name: 'list_clientas', arguments: {} })).rejects.toBeInstanceOf(UnauthorizedError);
    const again = host.authorizationUrl!;
    expect(again.searchParams.get('scope')).toBe('citas:read clientas:read');

    // The consent page says the app is connected already, with which permissions; allowing changes that connection.
    const second = await approve(owner, again, { allow: ['citas:read', 'clientas:read'] });
    expect(second.page).toContain('Ya conectaste esta aplicación a Clínica Uno con estos permisos');
    await new StreamableHTTPClientTransport(mcp, { authProvider: host }).finishAuth(second.callback.searchParams.get('code')!);
    expect(host.saved?.scope).toBe('citas:read clientas:read');
    await client.close();
    const after = new Client({ name: 'host', version: '1.0.0' });
    await after.connect(new StreamableHTTPClientTransport(mcp, { authProvider: host }));
    expect((await after.listTools()).tools.map((t) => t.name)).toContain('list_clientas');
    const page = await after.callTool({ name: 'list_clientas', arguments: { limit: 1 } });
    expect(page.isError).toBeFalsy();
    await after.close();
    // One connection still: the same grant, now with both scopes (Connected apps shows it once).
    expect(await connections()).toEqual(before);
    const rows = await s.database.db.selectFrom('oauth_grants').select(['id', 'scopes']).where('id', 'in', before).execute();
    expect(rows.map((r) => r.scopes)).toContainEqual(expect.stringContaining('clientas:read'));
    const apps = await (await owner.request('/dashboard/settings/api/apps')).text();
    expect(apps.split('An MCP host').length - 1).toBe(before.filter(Boolean).length);
  });
});
