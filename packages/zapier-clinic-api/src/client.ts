// How the app talks to clinic-api: where the server is, how each request is authenticated, and
// how the API's errors become messages a clinic's office manager can act on in Zapier's editor
// and Zap history (the API's own messages are written for developers).
import type { AfterResponseMiddleware, BeforeRequestMiddleware, Bundle, HttpResponse, ZObject } from 'zapier-platform-core';

/**
 * The server's origin, from the integration's environment (`zapier env:set ... CLINIC_API_URL=`):
 * whoever publishes the integration runs one clinic-api for many clinics, so a clinic never types
 * a server address, only its key.
 */
export function baseUrl(): string {
  const url = process.env.CLINIC_API_URL;
  if (!url) {
    throw new Error(
      'This integration is not configured: its CLINIC_API_URL (the clinic-api server, e.g. https://api.example.com) is not set',
    );
  }
  return url.replace(/\/+$/, '');
}

/** Which authentication this build of the integration uses (one per published version: Zapier allows one). */
export function authKind(): 'api_key' | 'oauth2' {
  return process.env.CLINIC_API_AUTH === 'oauth2' ? 'oauth2' : 'api_key';
}

/** The credential of a connection: the key pasted, or the OAuth access token. */
function credential(bundle: Bundle): string | undefined {
  return authKind() === 'oauth2' ? bundle.authData.access_token : bundle.authData.api_key;
}

/** Paths of the API (`/api/v1/...`) go to the configured server, with the connection's credential. */
export const addServerAndCredential: BeforeRequestMiddleware = (request, _z, bundle) => {
  if (request.url?.startsWith('/')) request.url = baseUrl() + request.url;
  const token = credential(bundle);
  // The OAuth token endpoint gets no Authorization header: the code or refresh token is the credential there.
  if (token && !request.url?.includes('/oauth/')) {
    request.headers = { ...request.headers, authorization: `Bearer ${token.trim()}` };
  }
  request.headers = { accept: 'application/json', ...request.headers };
  return request;
};

interface ApiErrorBody {
  error?: { code?: string; message?: string; scope?: string; request_id?: string };
}

const SCOPE_NAMES: Record<string, string> = {
  'citas:read': 'appointments',
  'clientas:read': 'clients',
  'llamadas:read': 'calls',
  'eventos:read': 'the change feed',
  'contacto:read': 'contact details',
  'webhooks:write': 'instant triggers (webhooks)',
};

export const MESSAGES = {
  badKey:
    'Your clinic did not accept this API key: it is mistyped, was revoked or has expired. ' +
    "In your clinic's dashboard open Settings > API, create a key (or copy the right one) and paste it here.",
  expiredConnection:
    'The connection to your clinic has ended (it was disconnected in the dashboard). Reconnect your clinic account in Zapier.',
  missingScope: (scope: string) =>
    `This API key is not allowed to use ${SCOPE_NAMES[scope] ?? scope}. In your clinic's dashboard open Settings > API, edit the key ` +
    `and tick "${scope}", or create a key that has it.`,
  notAllowedFromHere: (detail: string) =>
    `Your clinic's API key only works from certain internet addresses, and Zapier's is not one of them. In your clinic's dashboard ` +
    `open Settings > API and remove the key's address restriction (${detail})`,
  busy: 'Your clinic received too many requests at once; Zapier will try again shortly.',
  serverDown: (status: number, requestId?: string) =>
    `Your clinic's server could not answer right now (status ${status}). Try again in a few minutes` +
    (requestId ? `; if it keeps failing, give your provider this reference: ${requestId}` : '.'),
};

function parse(response: HttpResponse): ApiErrorBody {
  try {
    return JSON.parse(response.content) as ApiErrorBody;
  } catch {
    return {};
  }
}

/**
 * The API's errors as messages for people, thrown before Zapier's generic "Got 401 calling...".
 * A request made with skipThrowForStatus handles its other 4xx itself (a search that finds
 * nothing is not an error); the credential, permission, rate and server failures are explained
 * the same everywhere. The OAuth endpoints answer in OAuth's own shape (authentication.ts).
 */
export const explainErrors: AfterResponseMiddleware = (response, z: ZObject) => {
  const status = response.status;
  if (status < 400 || (response.request.url ?? '').includes('/oauth/')) return response;
  const body = parse(response).error ?? {};
  if (status === 401) {
    if (authKind() === 'oauth2') throw new z.errors.RefreshAuthError(MESSAGES.expiredConnection);
    throw new z.errors.Error(MESSAGES.badKey, 'AuthenticationError', 401);
  }
  if (status === 403 && body.code === 'insufficient_scope' && body.scope) {
    throw new z.errors.Error(MESSAGES.missingScope(body.scope), 'InsufficientScope', 403);
  }
  if (status === 403 && body.code === 'ip_not_allowed') {
    throw new z.errors.Error(MESSAGES.notAllowedFromHere(body.message ?? ''), 'AddressNotAllowed', 403);
  }
  if (status === 429) {
    const retryAfter = Number(response.headers.get('retry-after'));
    throw new z.errors.ThrottledError(MESSAGES.busy, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 5);
  }
  if (status >= 500) throw new z.errors.Error(MESSAGES.serverDown(status, body.request_id), 'ServerError', status);
  if (response.skipThrowForStatus) return response;
  // Any other refusal (a bad parameter, a refused webhook URL) carries the API's own explanation.
  throw new z.errors.Error(body.message ?? `The clinic's server refused the request (status ${status})`, body.code ?? 'ApiError', status);
};
