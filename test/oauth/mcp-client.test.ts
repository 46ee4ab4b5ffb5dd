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
    const refused = await client.callTool({ name: 'list_clientas', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('clientas:read');
    await client.close();
  });
});
