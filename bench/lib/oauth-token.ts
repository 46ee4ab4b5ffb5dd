// An OAuth access token for the token case (me-token): the whole flow against the service under
// test, as an app and its owner would run it: the app registers (RFC 7591) and asks for the key's
// scopes with PKCE (oauth4webapi, as in test/oauth), the owner signs in to the dashboard and allows
// on the consent page (a cookie-keeping fetch), and the app exchanges the code. Asked once, before
// the load; the token lives an hour, far longer than a run.
import * as oauth from 'oauth4webapi';
import { OWNER_PASSWORD, type Dataset } from './dataset.js';
import type { ChildServer } from './processes.js';

/** Every scope, as the benchmark key has. */
const SCOPES = 'citas:read clientas:read llamadas:read eventos:read contacto:read';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** A browser reduced to what the consent needs: cookies by name, redirects returned, not followed. */
function cookieFetch(origin: string) {
  const jar = new Map<string, string>();
  return async (url: string, form?: Record<string, string | string[]>): Promise<Response> => {
    const headers: Record<string, string> = jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
    let body: string | undefined;
    if (form) {
      const f = new URLSearchParams();
      for (const [k, v] of Object.entries(form)) for (const x of Array.isArray(v) ? v : [v]) f.append(k, x);
      body = f.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await fetch(new URL(url, origin), { method: body ? 'POST' : 'GET', headers, body, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const i = pair.indexOf('=');
      if (pair.slice(i + 1) === '') jar.delete(pair.slice(0, i));
      else jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return res;
  };
}

function field(page: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]+)"`).exec(page);
  if (!m?.[1]) throw new Error(`the dashboard page has no ${name} field: ${page.slice(0, 200)}`);
  return m[1].replaceAll('&amp;', '&');
}

/** An access token for `/api/v1` with every scope, granted by the big clinic's owner. */
export async function accessToken(server: ChildServer, ds: Dataset): Promise<string> {
  const origin = server.baseUrl;
  const fail = async (step: string, res: Response) => {
    throw new Error(`OAuth token for the bench: ${step} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  };
  const issuer = new URL(origin);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  const redirect = 'http://127.0.0.1:9/callback';
  const client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { client_name: 'Benchmark app', redirect_uris: [redirect], token_endpoint_auth_method: 'none' },
      insecure,
    ),
  );
  const browser = cookieFetch(origin);
  const signIn = await (await browser('/dashboard/sign-in')).text();
  let res = await browser('/dashboard/sign-in', { _csrf: field(signIn, '_csrf'), email: ds.ownerEmail, password: OWNER_PASSWORD });
  if (res.status !== 303) await fail('sign-in', res);

  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  for (const [k, v] of Object.entries({
    client_id: client.client_id,
    redirect_uri: redirect,
    response_type: 'code',
    resource: `${origin}/api/v1`,
    scope: SCOPES,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(k, v);
  res = await browser(url.href);
  if (res.status !== 303) await fail('the authorization request', res);
  res = await browser(res.headers.get('location')!);
  const consent = await res.text();
  if (res.status !== 200) await fail('the consent page', new Response(consent, { status: res.status }));
  res = await browser('/dashboard/oauth/consent', {
    _csrf: field(consent, '_csrf'),
    uid: field(consent, 'uid'),
    clinic: field(consent, 'clinic'),
    action: 'allow',
    scope: SCOPES.split(' '),
  });
  if (res.status !== 303) await fail('allow', res);
  res = await browser(res.headers.get('location')!);
  if (res.status !== 303) await fail('the return to the app', res);
  const callback = new URL(res.headers.get('location')!);
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirect, verifier, {
      additionalParameters: { resource: `${origin}/api/v1` },
      ...insecure,
    }),
  );
  if (tokens.scope?.split(' ').length !== 5) throw new Error(`OAuth token for the bench: granted "${tokens.scope}", not every scope`);
  return tokens.access_token;
}
