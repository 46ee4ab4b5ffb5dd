// Each API route declares the scope it needs in one place, its config: `config: { scope:
// 'citas:read' }` (null: none, as GET /api/v1/me). declareScope, the API scope's onRoute hook
// (plugins/api.ts), turns it into the route's check (auth.ts, requireScope: after authentication,
// before validation), its OpenAPI `security` requirement and its 403's description; a route
// without the declaration fails the app's start. The scopes themselves are domain/scopes.ts's.
import type { onRequestHookHandler, RouteOptions } from 'fastify';
import { SCOPE_TEXTS, SCOPES, type Scope } from '../domain/scopes.js';
import { requireScope } from './auth.js';
import { forbiddenResponse } from './route-responses.js';
import type { OAuthResources } from '../services/oauth/resources.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope an API route needs (domain/scopes.ts); null: none. Every API route declares it. */
    scope?: Scope | null;
  }
}

/** The document's security scheme of API keys (and OAuth access tokens, sent the same way). */
export const API_KEY_SCHEME = 'bearerAuth';
/**
 * The document's OAuth 2 scheme (authorization code), whose scopes are the keys' scopes. Every
 * operation names it with the scope it needs; the OpenAPI plugin keeps it only when OAuth is on
 * (OAUTH_ISSUER), and drops the requirement otherwise: a bearer scheme cannot list scopes in
 * OpenAPI 3.0's reading, which linters apply.
 */
export const OAUTH_SCHEME = 'oauth2';
/** The operation's extension that names the scope it needs (null: none), with OAuth on or off. */
export const SCOPE_EXTENSION = 'x-scope';

/** The scheme's description: how to send a key, and what each scope grants. */
export const API_KEY_SCHEME_DESCRIPTION = [
  'An API key of the clinic: `Authorization: Bearer <key>`.',
  '',
  "Each key has scopes, chosen by the clinic owner (and shown by GET /api/v1/me); each operation's 403 response names the scope " +
    'it needs (and, when the server is an OAuth authorization server, its oauth2 security requirement), and without it the answer is ' +
    '403 insufficient_scope (error.scope and WWW-Authenticate name it). A key may also be restricted to addresses (403 ip_not_allowed ' +
    'from any other). An OAuth access token is sent the same way and acts as a key with the scopes granted.',
  '',
  ...SCOPES.map((s) => `- \`${s}\`: ${SCOPE_TEXTS[s].reference}`),
].join('\n');

function hooks(h: RouteOptions['onRequest']): onRequestHookHandler[] {
  if (h === undefined) return [];
  return (Array.isArray(h) ? h : [h]) as onRequestHookHandler[];
}

/** The onRoute hook of the API's scope: each route's declared scope becomes its check, security requirement and 403. */
export function declareScopes(oauth: OAuthResources | null): (route: RouteOptions) => void {
  return (route) => declareScope(route, oauth);
}

function declareScope(route: RouteOptions, oauth: OAuthResources | null): void {
  const scope = route.config?.scope;
  if (scope === undefined) {
    throw new Error(`${String(route.method)} ${route.url}: an API route declares the scope it needs, config: { scope } (null for none)`);
  }
  const schema = route.schema as (RouteOptions['schema'] & { security?: unknown; response?: Record<number, unknown> }) | undefined;
  if (schema) {
    // Either scheme: a key (no scopes listed: a bearer scheme has none), or an OAuth token with the scope.
    schema.security = [{ [API_KEY_SCHEME]: [] }, { [OAUTH_SCHEME]: scope === null ? [] : [scope] }];
    if (schema.response) schema.response[403] = forbiddenResponse(scope);
  }
  if (scope !== null) route.onRequest = [...hooks(route.onRequest), requireScope(scope, oauth)];
}
