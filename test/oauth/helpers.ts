// A real server (the app listening on 127.0.0.1) with OAuth on, the dashboard's people and clinics
// (../admin/helpers.ts), a browser stand-in that keeps cookies by path and follows no redirect by
// itself, and an app driven by a real OAuth client library (oauth4webapi) through the whole flow:
// discovery, registration, the consent page, the code exchange with PKCE, refresh, revocation.
import * as oauth from 'oauth4webapi';
import type { Dialect } from '../../src/db/dialect.js';
import { buildDashboardApp, EMAILS, PASSWORD, type DashboardApp } from '../admin/helpers.js';
import { freePort } from '../../tools/net.js';

export { EMAILS };

export interface OAuthServer extends DashboardApp {
  origin: string;
  /** every grant row (the test reads how each ended) */
  appGrantsOf(): Promise<{ id: string; clinic_id: string; revoked_reason: string | null }[]>;
}

export async function startOAuthServer(dialect: Dialect, env: Record<string, string> = {}): Promise<OAuthServer> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const t = await buildDashboardApp(dialect, { env: { OAUTH_ISSUER: origin, ...env } });
  await t.app.listen({ port, host: '127.0.0.1' });
  return Object.assign(t, {
    origin,
    appGrantsOf: () => t.database.db.selectFrom('oauth_grants').select(['id', 'clinic_id', 'revoked_reason']).execute(),
  });
}

/** A browser without a window: cookies by name and path, redirects returned, not followed. */
export class Browser {
  private readonly jar = new Map<string, { value: string; path: string }>();
  constructor(readonly origin: string) {}

  async request(url: string | URL, init: { method?: string; form?: Record<string, string | string[]> } = {}): Promise<Response> {
    const u = new URL(url, this.origin);
    const cookies = [...this.jar]
      .filter(([, c]) => u.pathname === c.path || u.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`) || c.path === '/')
      .map(([name, c]) => `${name}=${c.value}`);
    const headers: Record<string, string> = cookies.length ? { cookie: cookies.join('; ') } : {};
    let body: string | undefined;
    if (init.form) {
      const f = new URLSearchParams();
      for (const [k, v] of Object.entries(init.form)) for (const x of Array.isArray(v) ? v : [v]) f.append(k, x);
      body = f.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await fetch(u, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1);
      const path =
        attrs
          .map((a) => a.trim())
          .find((a) => /^path=/i.test(a))
          ?.slice(5) ?? '/';
      const gone = value === '' || attrs.some((a) => /max-age=0|expires=thu, 01 jan 1970/i.test(a.trim()));
      if (gone) this.jar.delete(name);
      else this.jar.set(name, { value, path });
    }
    return res;
  }

  async signIn(email: string): Promise<void> {
    const page = await (await this.request('/dashboard/sign-in')).text();
    const res = await this.request('/dashboard/sign-in', { form: { _csrf: csrf(page), email, password: PASSWORD } });
    if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`);
  }
}

export function csrf(page: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!m?.[1]) throw new Error(`no CSRF token in the page: ${page.slice(0, 300)}`);
  return m[1];
}

export const insecure = { [oauth.allowInsecureRequests]: true } as const;
export const REDIRECT = 'http://127.0.0.1:5555/callback';

/**
 * The owner's side of an authorization request made by any client: the request, the consent page
 * (signed in already), the answer (allow with `allow`'s scopes, or all asked; or deny), the
 * redirect back. Returns the callback URL the client receives, and the consent page.
 */
export async function approve(
  browser: Browser,
  url: URL,
  opts: { allow?: string[] | false; clinic?: string; test?: boolean } = {},
): Promise<{ callback: URL; page: string }> {
  let res = await browser.request(url);
  if (res.status !== 303) throw new Error(`authorization request: ${res.status} ${await res.text()}`);
  res = await browser.request(res.headers.get('location')!);
  const page = await res.text();
  if (res.status !== 200) throw new Error(`consent page: ${res.status} ${page}`);
  const uid = /name="uid" value="([^"]+)"/.exec(page)![1]!;
  const clinic = opts.clinic ?? /name="clinic" value="([^"]+)"/.exec(page)?.[1] ?? '';
  const form: Record<string, string | string[]> = { _csrf: csrf(page), uid, clinic, action: opts.allow === false ? 'deny' : 'allow' };
  if (opts.allow) form.scope = opts.allow;
  if (opts.test) form.mode = 'test';
  res = await browser.request('/dashboard/oauth/consent', { form });
  if (res.status !== 303) throw new Error(`consent answer: ${res.status} ${await res.text()}`);
  res = await browser.request(res.headers.get('location')!);
  if (res.status !== 303) throw new Error(`resume: ${res.status} ${await res.text()}`);
  return { callback: new URL(res.headers.get('location')!), page };
}

/** An app: discovered and registered with oauth4webapi. */
export class App {
  constructor(
    readonly as: oauth.AuthorizationServer,
    readonly client: oauth.Client,
    readonly resource: string,
    readonly redirect = REDIRECT,
  ) {}

  static async register(origin: string, resource: string, name = 'Test CRM', redirect = REDIRECT): Promise<App> {
    const issuer = new URL(origin);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    const res = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: name,
        redirect_uris: [redirect],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
      },
      insecure,
    );
    const client = await oauth.processDynamicClientRegistrationResponse(res);
    return new App(as, client, resource, redirect);
  }

  async authorizationUrl(opts: { scope?: string; extra?: Record<string, string>; pkce?: boolean } = {}) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const u = new URL(this.as.authorization_endpoint!);
    const p: Record<string, string> = {
      client_id: this.client.client_id,
      redirect_uri: this.redirect,
      response_type: 'code',
      resource: this.resource,
      state,
    };
    if (opts.scope !== undefined) p.scope = opts.scope;
    if (opts.pkce !== false)
      Object.assign(p, { code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    for (const [k, v] of Object.entries({ ...p, ...opts.extra })) u.searchParams.set(k, v);
    return { url: u, verifier, state };
  }

  /**
   * The browser's side: the authorization request, the consent page (signed in already), the
   * answer (allow with `scopes`, or deny), the redirect back. Returns the callback URL.
   */
  async consent(
    browser: Browser,
    opts: { scope?: string; allow?: string[] | false; clinic?: string; test?: boolean } = {},
  ): Promise<{ callback: URL; verifier: string; state: string; page: string }> {
    const { url, verifier, state } = await this.authorizationUrl({ scope: opts.scope });
    return { ...(await approve(browser, url, opts)), verifier, state };
  }

  async exchange(c: { callback: URL; verifier: string; state: string }): Promise<oauth.TokenEndpointResponse> {
    const params = oauth.validateAuthResponse(this.as, this.client, c.callback, c.state);
    return oauth.processAuthorizationCodeResponse(
      this.as,
      this.client,
      await oauth.authorizationCodeGrantRequest(this.as, this.client, oauth.None(), params, this.redirect, c.verifier, {
        additionalParameters: { resource: this.resource },
        ...insecure,
      }),
    );
  }

  async refresh(refreshToken: string): Promise<oauth.TokenEndpointResponse> {
    return oauth.processRefreshTokenResponse(
      this.as,
      this.client,
      await oauth.refreshTokenGrantRequest(this.as, this.client, oauth.None(), refreshToken, {
        additionalParameters: { resource: this.resource },
        ...insecure,
      }),
    );
  }

  async revoke(token: string): Promise<void> {
    await oauth.processRevocationResponse(await oauth.revocationRequest(this.as, this.client, oauth.None(), token, insecure));
  }
}

export { freePort };
