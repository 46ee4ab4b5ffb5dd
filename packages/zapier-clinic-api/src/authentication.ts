// Connecting a clinic: by API key (a field the owner pastes), or by OAuth 2 (the clinic's owner
// clicks Connect and approves on the dashboard's consent page) when the server runs OAuth
// (OAUTH_ISSUER) and the integration is published with CLINIC_API_AUTH=oauth2. Either way the
// test is GET /api/v1/me and the connection is named after the clinic.
import type { Bundle, ZObject } from 'zapier-platform-core';

import { authKind, baseUrl } from './client';

interface Me {
  clinica: { id: string; nombre: string; zona_horaria: string };
  api_key: { id: string; nombre: string; scopes: string[] };
}

/** The connection test: who the credential is (a wrong one fails in explainErrors, in plain words). */
const test = async (z: ZObject) => (await z.request({ url: '/api/v1/me' })).data as Me;

/** "Clínica Sol" in Zapier's list of connections; `bundle.inputData` is what the test returned. */
const connectionLabel = (_z: ZObject, bundle: Bundle) => (bundle.inputData as unknown as Me).clinica.nombre;

/**
 * What a connection may do: read the three collections and the feed, see contact details, and
 * subscribe its Zaps' webhooks. The owner can untick any of them on the consent page.
 */
export const OAUTH_SCOPES = 'citas:read clientas:read llamadas:read eventos:read contacto:read webhooks:write';

/** RFC 8707: the token is for the REST API (the server also serves /mcp, which needs its own). */
const resource = () => `${baseUrl()}/api/v1`;

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

async function token(z: ZObject, form: Record<string, string>) {
  const res = await z.request({
    method: 'POST',
    url: `${baseUrl()}/oauth/token`,
    // The app is a public client (no secret): PKCE's verifier is what proves the code is ours.
    body: { client_id: process.env.CLIENT_ID ?? '', resource: resource(), ...form },
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    skipThrowForStatus: true,
  });
  if (res.status !== 200) {
    const body = (res.data ?? {}) as { error?: string; error_description?: string };
    if (form.grant_type === 'refresh_token') {
      throw new z.errors.RefreshAuthError(
        'The connection to your clinic has ended (it was disconnected in the dashboard, or not used for a long time). Reconnect it.',
      );
    }
    throw new z.errors.Error(
      `Your clinic's server did not complete the connection: ${body.error_description ?? body.error ?? `status ${res.status}`}`,
      'AuthenticationError',
      res.status,
    );
  }
  const t = res.data as TokenAnswer;
  return { access_token: t.access_token, refresh_token: t.refresh_token };
}

const getAccessToken = (z: ZObject, bundle: Bundle) =>
  token(z, {
    grant_type: 'authorization_code',
    code: String(bundle.inputData.code),
    redirect_uri: String(bundle.inputData.redirect_uri),
    code_verifier: String(bundle.inputData.code_verifier ?? ''),
  });

const refreshAccessToken = (z: ZObject, bundle: Bundle) =>
  token(z, { grant_type: 'refresh_token', refresh_token: bundle.authData.refresh_token ?? '' });

const authorizeUrl = (_z: ZObject, bundle: Bundle) => {
  const url = new URL(`${baseUrl()}/oauth/auth`);
  url.search = new URLSearchParams({
    client_id: process.env.CLIENT_ID ?? '',
    response_type: 'code',
    redirect_uri: String(bundle.inputData.redirect_uri),
    state: String(bundle.inputData.state),
    scope: OAUTH_SCOPES,
    resource: resource(),
  }).toString();
  // Zapier adds code_challenge and code_challenge_method itself (enablePkce).
  return url.toString();
};

export const apiKeyAuthentication = {
  type: 'custom' as const,
  fields: [
    {
      key: 'api_key',
      label: 'API key',
      type: 'password' as const,
      required: true,
      helpText:
        "Your clinic's API key. In the clinic's dashboard open **Settings > API**, create a key and tick the permissions this " +
        'connection needs (instant triggers need **webhooks:write**), then paste the key here. It is shown only once.',
    },
  ],
  test,
  connectionLabel,
};

export const oauth2Authentication = {
  type: 'oauth2' as const,
  oauth2Config: {
    authorizeUrl,
    getAccessToken,
    refreshAccessToken,
    autoRefresh: true,
    enablePkce: true,
    scope: OAUTH_SCOPES,
  },
  fields: [],
  test,
  connectionLabel,
};

export const authentication = () => (authKind() === 'oauth2' ? oauth2Authentication : apiKeyAuthentication);

export { authorizeUrl, getAccessToken, refreshAccessToken };
