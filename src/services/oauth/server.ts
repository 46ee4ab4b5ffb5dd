// The OAuth 2.1 authorization server of the API and /mcp, on oidc-provider (a certified,
// standards-tested implementation; docs/architecture.md says why): authorization code with PKCE
// S256 only, public clients registered dynamically (RFC 7591) with exact https (or loopback http)
// redirect URIs, resource indicators (RFC 8707) binding each opaque access token (at most 1 hour)
// to the API or to /mcp, refresh tokens rotated on every use (a reused one, or a code used twice,
// ends the whole grant), token revocation (RFC 7009; revoking any token ends its grant). No
// implicit or password grant, no ID tokens. Storage: adapter.ts (keyed hashes only).
//
// Consent is the dashboard's (admin/routes-oauth.ts): every authorization request is sent to its
// consent page, which reads the request through interaction() and answers with allow() or deny().
// Until then no error is redirected to the app (errors-shown.ts); sizes are bounded (limits.ts).
// http/oauth/ mounts the provider's endpoints under /oauth and serves the metadata documents.
//
// Over 300 lines: oidc-provider takes its whole policy as one configuration object, and
// each of its parts (grants, tokens, clients, resources, errors) is kept beside the reason for it.
import { URL } from 'node:url';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Kysely } from 'kysely';
import Provider, { errors as oidcErrors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { DB } from '../../db/schema.js';
import { canonicalScopes, DEFAULT_SCOPES, isScope, SCOPES, type Scope } from '../../domain/scopes.js';
import { DomainError } from '../../errors.js';
import { findUserById } from '../../repos/users.js';
import { adapterClass } from './adapter.js';
import { ClientDocumentRefused, isClientIdUrl, type ClientDocuments } from './client-documents.js';
import { neverRedirectBeforeConsent, renderError, type ErrorPage } from './errors-shown.js';
import type { AppGrants } from './grants.js';
import type { KeyMode } from '../api-keys.js';
import { authorizationParamProblem, cleanClientName, clientMetadataProblem, INTERACTION_TTL_S } from './limits.js';
import { OAUTH_PREFIX, type OAuthResources } from './resources.js';
import { cookieKeys, signingJwk } from './secrets.js';

/** Where the provider's endpoints are mounted (http/oauth/mount.ts). */
/** The dashboard's consent page (admin/routes-oauth.ts). */
export const CONSENT_PATH = '/dashboard/oauth/consent';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/**
 * The private-use redirect URIs (RFC 8252, section 7.1) of desktop assistants, accepted exactly:
 * Cursor registers its own beside an https and a loopback one, and a registration is refused
 * whole for one URI refused. PKCE binds the code to the app that asked, whoever opens the URI.
 */
const NATIVE_REDIRECT_URIS = new Set(['cursor://anysphere.cursor-mcp/oauth/callback']);

export interface OAuthSettings {
  resources: OAuthResources;
  /** access tokens' lifetime (at most 3600) */
  accessTokenTtlS: number;
  /** refresh tokens' lifetime; each rotation starts a new one */
  refreshTokenTtlS: number;
  /** apps whose client_id is a URL (client-documents.ts) */
  clientDocuments: ClientDocuments;
}

/** What the consent page shows of an authorization request. */
export interface ConsentRequest {
  uid: string;
  clientId: string;
  clientName: string;
  /** the host that published the app's metadata document (a client_id that is a URL), or null for a registered app */
  documentHost: string | null;
  redirectUri: string;
  /** the redirect address's host, shown to the owner (where the browser goes next) */
  redirectHost: string;
  /** the API's scopes the app asked for, in SCOPES order (all of them when it named none) */
  scopes: Scope[];
  resource: string;
}

/**
 * Why a redirect URI is refused at registration, or null: https, or http on a loopback host
 * (RFC 8252), absolute, no fragment, no user information. Matched exactly afterwards.
 */
export function redirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== 'string') return 'each redirect_uri must be a string';
  if (NATIVE_REDIRECT_URIS.has(uri)) return null;
  const u = URL.canParse(uri) ? new URL(uri) : null;
  if (!u) return `redirect_uri ${uri} is not an absolute URL`;
  if (u.hash !== '' || uri.includes('#')) return `redirect_uri ${uri} must not have a fragment`;
  if (u.username !== '' || u.password !== '') return `redirect_uri ${uri} must not hold a user or password`;
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname)) return null;
  return `redirect_uri ${uri} must use https (http only on a loopback address: 127.0.0.1, [::1] or localhost)`;
}

/** The API's scopes named in a scope parameter; the default ones (all that read) when it names none. */
export function requestedScopes(scopeParam: unknown): Scope[] {
  const named = typeof scopeParam === 'string' ? scopeParam.split(' ').filter(isScope) : [];
  return named.length > 0 ? canonicalScopes(named) : [...DEFAULT_SCOPES];
}

function validateClientMetadata(_ctx: KoaContextWithOIDC | undefined, key: string, _value: unknown, metadata: Record<string, unknown>) {
  // Called once per listed property; the checks are of the whole metadata, so run them once.
  if (key !== 'software_id') return;
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw new oidcErrors.InvalidRedirectUri('redirect_uris is required');
  const tooMuch = clientMetadataProblem(metadata);
  if (tooMuch) throw new oidcErrors.InvalidClientMetadata(tooMuch);
  // Kept as shown: invisible characters (bidi overrides, zero-width spaces) removed.
  if (typeof metadata.client_name === 'string') metadata.client_name = cleanClientName(metadata.client_name) || undefined;
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new oidcErrors.InvalidRedirectUri(problem);
  }
  // 'web' compares loopback ports exactly; 'native' lets them vary (RFC 8252) and is the only kind
  // the provider allows a private-use scheme for: it is kept to the apps that register one.
  metadata.application_type = uris.some((u) => NATIVE_REDIRECT_URIS.has(u as string)) ? 'native' : 'web';
  const grants = (metadata.grant_types as string[] | undefined) ?? ['authorization_code', 'refresh_token'];
  if (grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token'))
    throw new oidcErrors.InvalidClientMetadata('grant_types may be authorization_code and refresh_token only');
  metadata.grant_types = grants;
}

export class AuthorizationServer {
  readonly provider: Provider;
  readonly resources: OAuthResources;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly grants: AppGrants,
    settings: OAuthSettings,
    opts: { pepper: string; onError?: (err: unknown) => void; errorPage?: ErrorPage },
  ) {
    this.resources = settings.resources;
    const resources = settings.resources;
    const all = new Set([resources.api, resources.mcp]);
    const Adapter = adapterClass(db, {
      pepper: opts.pepper,
      now: Date.now,
      // A reused refresh token or code ends its grant on the token endpoint; a revocation on the revocation endpoint.
      onGrantRevoked: (grantId) => grants.endedByFlow(grantId, Provider.ctx?.oidc?.route === 'revocation' ? 'revoked' : 'reuse'),
      // The refusal's words reach the person (the error page) or the app (the token endpoint's invalid_client).
      clientDocument: async (id) => {
        try {
          return await settings.clientDocuments.properties(id);
        } catch (err) {
          if (err instanceof ClientDocumentRefused) throw new oidcErrors.InvalidClient(err.message);
          throw err;
        }
      },
    });
    const { Check, base } = interactionPolicy;
    const policy = base();
    // The dashboard's session is the authority, never the provider's own: every authorization
    // request goes to the consent page, except the resume right after it answered.
    policy
      .get('login')!
      .checks.add(
        new Check('dashboard_consent', 'the clinic owner consents on the dashboard', (ctx) =>
          ctx.oidc.result?.login ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT,
        ),
        0,
      );

    const configuration: Configuration = {
      adapter: Adapter as unknown as Configuration['adapter'],
      jwks: { keys: [signingJwk(opts.pepper)] },
      cookies: { keys: cookieKeys(opts.pepper), long: { httpOnly: true, sameSite: 'lax' }, short: { httpOnly: true, sameSite: 'lax' } },
      responseTypes: ['code'],
      pkce: { required: () => true },
      clientAuthMethods: ['none'],
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        id_token_signed_response_alg: 'ES256',
      },
      enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
      extraClientMetadata: { properties: ['software_id', 'software_version'], validator: validateClientMetadata },
      // Run on every authorization request before it is stored (limits.ts): listed under `state`,
      // a parameter the endpoint accepts anyway, it checks them all.
      extraParams: {
        state: (ctx: KoaContextWithOIDC) => {
          const params = ctx.oidc.params ?? {};
          const problem = authorizationParamProblem(params);
          if (problem) throw new oidcErrors.InvalidRequest(problem);
          // The one response mode documented, tested and advertised.
          if (params.response_mode !== undefined && params.response_mode !== 'query')
            throw new oidcErrors.InvalidRequest('response_mode must be query, or left out');
        },
      },
      // The API's scopes are the resources' (getResourceServerInfo) and also accepted in a client's
      // registration: the MCP SDK's client registers with the scopes the resource metadata lists.
      scopes: ['openid', 'offline_access', ...SCOPES],
      features: {
        devInteractions: { enabled: false },
        // Not offered (neither documented nor tested): off, so the metadata does not advertise them.
        dPoP: { enabled: false },
        pushedAuthorizationRequests: { enabled: false },
        registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
        revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
        userinfo: { enabled: false },
        rpInitiatedLogout: { enabled: false },
        resourceIndicators: {
          enabled: true,
          // An app that names no resource gets a token for the REST API.
          defaultResource: (_ctx, _client, oneOf) => (oneOf as string | undefined) ?? resources.api,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, resource) => {
            if (!all.has(resource)) throw new oidcErrors.InvalidTarget(`unknown resource; the resources are ${[...all].join(' and ')}`);
            return { scope: SCOPES.join(' '), audience: resource, accessTokenFormat: 'opaque', accessTokenTTL: settings.accessTokenTtlS };
          },
        },
      },
      // At every code and refresh exchange: a user removed since stops getting tokens.
      findAccount: async (_ctx, sub) => {
        const user = await findUserById(this.db, sub);
        if (!user || (user.role !== 'owner' && user.role !== 'superadmin')) return undefined;
        return { accountId: sub, claims: () => ({ sub }) };
      },
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      // Revoking any token of a grant (RFC 7009) ends the whole grant.
      revokeGrantPolicy: () => true,
      expiresWithSession: async () => false,
      loadExistingGrant: async (ctx) => {
        const grantId = ctx.oidc.result?.consent?.grantId as string | undefined;
        return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
      },
      ttl: {
        AccessToken: settings.accessTokenTtlS,
        AuthorizationCode: 60,
        RefreshToken: settings.refreshTokenTtlS,
        Grant: 10 * 365 * 86_400,
        Interaction: INTERACTION_TTL_S,
        Session: 3_600,
      },
      interactions: { policy, url: (_ctx, interaction) => `${CONSENT_PATH}?uid=${interaction.uid}` },
      // Errors shown to a person: every error before consent (errors-shown.ts), an unknown client or redirect_uri.
      renderError: renderError(opts.errorPage),
    };
    const provider = new Provider(resources.issuer, configuration);
    // Koa trusts X-Forwarded-*: http/oauth/mount.ts overwrites them from Fastify's own view.
    provider.proxy = true;
    provider.use(async (ctx, next) => {
      // An app that asks for none of the API's scopes asks for the default ones (the owner removes what it should not have).
      if (ctx.method === 'GET' && ctx.path === '/auth') {
        const q = ctx.query as Record<string, unknown>;
        const named = typeof q.scope === 'string' ? q.scope.split(' ') : [];
        if (!named.some(isScope)) {
          ctx.query = { ...q, scope: [...named.filter((s) => s !== ''), ...DEFAULT_SCOPES].join(' ') };
          // The provider finds its mount path in originalUrl minus url: keep them in step.
          (ctx.req as IncomingMessage & { originalUrl?: string }).originalUrl = OAUTH_PREFIX + ctx.url;
        }
      }
      await next();
      if (ctx.oidc?.route === 'discovery' && ctx.status === 200) {
        const b = ctx.body as Record<string, unknown>;
        b.scopes_supported = [...SCOPES];
        // client-documents.ts (the provider's own feature for them is off; its metadata is this one).
        b.client_id_metadata_document_supported = true;
        // Only the response mode apps are documented and tested with.
        b.response_modes_supported = ['query'];
        for (const k of [
          // No ID tokens are issued: the signing key signs nothing an app would check.
          'jwks_uri',
          'claims_supported',
          'claims_parameter_supported',
          'id_token_signing_alg_values_supported',
          'subject_types_supported',
          'claim_types_supported',
          'request_uri_parameter_supported',
          'request_parameter_supported',
        ])
          delete b[k];
      }
    });
    provider.on('authorization.error', neverRedirectBeforeConsent);
    provider.on('server_error', (ctx: KoaContextWithOIDC, err: unknown) => {
      neverRedirectBeforeConsent(ctx, err);
      opts.onError?.(err);
    });
    this.provider = provider;
  }

  /**
   * Why a token request's `resource` would be refused with invalid_target, or null. The provider
   * resolves `resource` only after it has used up the code or refresh token, so a request refused
   * for it (a trailing slash is enough) would make the correct retry a replay that ends the grant;
   * http/oauth/mount.ts asks this first. The code or refresh token is only read, never used.
   */
  async targetProblem(form: URLSearchParams): Promise<string | null> {
    const asked = form.getAll('resource');
    if (asked.length === 0) return null;
    if (asked.length > 1) return 'send one resource per token request';
    const resource = asked[0]!;
    const { api, mcp } = this.resources;
    if (resource !== api && resource !== mcp)
      return `unknown resource ${resource}; the resources are ${api} and ${mcp}, written exactly (a trailing slash counts)`;
    const grantType = form.get('grant_type');
    const source =
      grantType === 'authorization_code'
        ? await this.provider.AuthorizationCode.find(form.get('code') ?? '')
        : grantType === 'refresh_token'
          ? await this.provider.RefreshToken.find(form.get('refresh_token') ?? '')
          : undefined;
    // An unknown or expired code or token is the provider's to refuse (invalid_grant).
    if (!source?.resource) return null;
    const granted = [source.resource].flat();
    if (granted.includes(resource)) return null;
    const what = grantType === 'authorization_code' ? 'authorization code' : 'refresh token';
    return `this ${what} is for ${granted.join(' ')}; ask for that resource, or send none`;
  }

  /** The authorization request behind the consent page's uid (its interaction cookie must match). */
  async interaction(req: IncomingMessage, res: ServerResponse, uid: string): Promise<ConsentRequest> {
    const details = await this.details(req, res, uid);
    const params = details.params as Record<string, string | undefined>;
    let client;
    try {
      client = await this.provider.Client.find(String(params.client_id));
    } catch (err) {
      // A metadata document that went bad since the request began (client-documents.ts).
      if (err instanceof oidcErrors.InvalidClient || err instanceof oidcErrors.InvalidClientMetadata)
        throw new DomainError('not_found', `this app can no longer be used: ${(err as { error_description?: string }).error_description}`);
      throw err;
    }
    if (!client) throw new DomainError('not_found', 'this app is no longer registered');
    const redirectUri = String(params.redirect_uri ?? client.redirectUris?.[0] ?? '');
    return {
      uid: details.uid,
      clientId: client.clientId,
      // Cleaned again: an app registered before names were cleaned keeps its stored name.
      clientName: cleanClientName(client.clientName ?? '') || client.clientId,
      // Fetched over TLS from that host, which therefore vouches for the document: a fact to show.
      documentHost: isClientIdUrl(client.clientId) ? new URL(client.clientId).host : null,
      redirectUri,
      redirectHost: URL.canParse(redirectUri) ? new URL(redirectUri).host : redirectUri,
      scopes: requestedScopes(params.scope),
      resource: typeof params.resource === 'string' ? params.resource : this.resources.api,
    };
  }

  /**
   * Consent given: where the browser goes next. The scopes asked for become the ones chosen (never
   * more than asked). When this person already connected this app to the clinic for the same
   * resource, that connection (its grant) is changed, not a second one made (incremental consent,
   * MCP step-up): the scopes it was not asked about stay; its tokens keep working.
   */
  async allow(
    req: IncomingMessage,
    res: ServerResponse,
    uid: string,
    input: { userId: string; clinicId: string; scopes: readonly Scope[]; mode?: KeyMode },
  ): Promise<string> {
    const asked = await this.interaction(req, res, uid);
    const chosen = canonicalScopes(input.scopes.filter((s) => asked.scopes.includes(s)));
    if (chosen.length === 0) throw new DomainError('invalid_input', 'choose at least one permission', { field: 'scope' });
    const details = await this.details(req, res, uid);
    const params = details.params as Record<string, string | undefined>;
    const connection = await this.grants.connectionOf({
      clinicId: input.clinicId,
      clientId: asked.clientId,
      resource: asked.resource,
      grantedBy: input.userId,
      // a connection in test mode and one in live mode are two connections
      mode: input.mode ?? 'live',
    });
    const existing = connection ? await this.provider.Grant.find(connection.id) : undefined;
    const grant =
      existing && existing.accountId === input.userId && existing.clientId === asked.clientId
        ? existing
        : new this.provider.Grant({ accountId: input.userId, clientId: asked.clientId });
    const kept = grant === existing ? connection!.scopes.filter((s) => !asked.scopes.includes(s)) : [];
    const scopes = canonicalScopes([...kept, ...chosen]);
    const refused = SCOPES.filter((s) => !scopes.includes(s));
    // Set, not added to: a scope unticked now leaves the connection; what was not granted is
    // marked refused, else the provider would ask again at once.
    grant.resources = { ...grant.resources, [asked.resource]: scopes.join(' ') };
    grant.rejected = { ...grant.rejected, resources: { ...grant.rejected?.resources, [asked.resource]: refused.join(' ') } };
    // Every scope the provider knows is also an OIDC scope to it (the API's are listed for
    // registrations, see `scopes` above): none is granted as one, so none is asked about again.
    const oidcScopes = String(params.scope ?? '')
      .split(' ')
      .filter((s) => s === 'openid' || s === 'offline_access' || isScope(s));
    if (oidcScopes.length > 0) grant.rejectOIDCScope(oidcScopes.join(' '));
    const grantId = await grant.save();
    if (grant === existing) {
      if (!(await this.grants.changeScopes(input.clinicId, grantId, scopes)))
        throw new DomainError('not_found', 'this connection was disconnected meanwhile; ask the app to connect again');
    } else {
      await this.grants.recordConsent({
        grantId,
        clinicId: input.clinicId,
        clientId: asked.clientId,
        clientName: asked.clientName,
        redirectHost: asked.redirectHost,
        scopes,
        resource: asked.resource,
        grantedBy: input.userId,
        mode: input.mode ?? 'live',
      });
    }
    return this.provider.interactionResult(
      req,
      res,
      { login: { accountId: input.userId, remember: false }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  }

  /** Consent refused: the app gets access_denied on its redirect URI. */
  async deny(req: IncomingMessage, res: ServerResponse, uid: string): Promise<string> {
    await this.details(req, res, uid);
    return this.provider.interactionResult(
      req,
      res,
      { error: 'access_denied', error_description: 'The clinic owner denied the request' },
      { mergeWithLastSubmission: false },
    );
  }

  private async details(req: IncomingMessage, res: ServerResponse, uid: string) {
    let details;
    try {
      details = await this.provider.interactionDetails(req, res);
    } catch (err) {
      if (err instanceof oidcErrors.SessionNotFound) throw new DomainError('not_found', 'this authorization request has expired');
      throw err;
    }
    if (details.uid !== uid) throw new DomainError('not_found', 'this authorization request has expired');
    return details;
  }
}
