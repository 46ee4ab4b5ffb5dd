// The OpenAPI 3.1 document of the public API, built by @fastify/swagger from the same route
// schemas that validate and serialize (domain/api-schemas.ts), served unauthenticated. Register
// it before the routes it describes: it collects them as they are added.
//
// Shaped for code generators and linters (`npm test` lints it with Redocly and Spectral):
// - the named schemas (API_COMPONENTS, ERROR_COMPONENTS) are Fastify shared schemas, so routes
//   point at them and the document lists them under components.schemas by their `$id`;
// - servers is the relative `/`: the API is at the root of whatever origin serves this document
//   (one service, many deployments; a host written in would be wrong for all but one);
// - each tag of an operation is described in TAGS;
// - response headers come from ../route-responses.ts; `x-required` becomes the header's `required`;
// - info.license: the package is UNLICENSED, so "Proprietary", its text at /docs/license on this
//   server. Linters want that URL absolute (OpenAPI allows relative ones, JSON Schema's `uri` does
//   not), so documentFor() writes it with the origin of the request; everything else is the same
//   for every request. info.contact has a name only: who operates a deployment is not known here.
import swagger from '@fastify/swagger';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { COLLECTIONS, COLLECTIONS_PROSE } from '../../collections/index.js';
import { API_COMPONENTS } from '../../domain/api-schemas.js';
import { SCOPE_TEXTS, SCOPES } from '../../domain/scopes.js';
import { SAMPLE_ENV } from '../code-samples.js';
import { ERROR_COMPONENTS } from '../error-schemas.js';
import { OAUTH_PREFIX, oauthResources } from '../../services/oauth/resources.js';
import { API_KEY_SCHEME, API_KEY_SCHEME_DESCRIPTION, OAUTH_SCHEME, SCOPE_EXTENSION } from '../scopes.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/docs';
export const LLMS_PATH = '/llms.txt';
export const LICENSE_PATH = '/docs/license';

/** The tags of the operations, with what each holds (the reference's sections). */
export const TAGS = [
  ...Object.values(COLLECTIONS).map((c) => ({ name: c.name, description: c.tag })),
  { name: 'eventos', description: 'The change feed: every record created, changed or deleted, in commit order, to keep a copy in sync' },
  { name: 'me', description: "The API key itself: its clinic and its rate limit (an integration's connection test)" },
  { name: 'webhooks', description: 'Subscriptions: URLs that receive the events as they happen, signed (scope webhooks:write)' },
];

export const API_DESCRIPTION = [
  `Read-only access to a clinic's ${COLLECTIONS_PROSE}, for ` + 'CRMs, Zapier, Make, n8n, spreadsheets and custom apps.',
  '',
  'One API key belongs to one clinic and reads that clinic only. Send it as `Authorization: Bearer <key>`; the clinic owner creates and ' +
    'revokes keys in the dashboard (Settings > API).',
  `A key reads only what its scopes grant (${SCOPES.map((s) => `\`${s}\``).join(', ')}: see the security scheme); without ` +
    `\`contacto:read\`, phones, e-mails and notes are null.`,
  "Dates (`YYYY-MM-DD`) are calendar days in the clinic's time zone; timestamps are RFC 3339 with the clinic's offset.",
  'Every parameter is validated strictly: a malformed, repeated or unknown one is a 400 that names it.',
  'Errors have one shape, `{"error": {"code", "message", "param"?, "request_id"}}`: match on `error.code`.',
  'Each key may make a sustained number of requests per second, with bursts (GET /api/v1/me says how many); over it, 429 with Retry-After.',
  '',
  `The examples read the server's address from \`${SAMPLE_ENV.url}\` and the key from \`${SAMPLE_ENV.key}\`.`,
].join('\n');

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed JSON document, walked by key
type Json = Record<string, any>;

/** `x-required` (set by route-responses.ts on each header's schema) -> the header's `required`. */
function liftRequiredHeaders(doc: Json): Json {
  for (const item of Object.values<Json>(doc['paths'] ?? {})) {
    for (const op of Object.values<Json>(item)) {
      for (const response of Object.values<Json>(op['responses'] ?? {})) {
        for (const header of Object.values<Json>(response['headers'] ?? {})) {
          const schema = header['schema'] as Json | undefined;
          if (schema && 'x-required' in schema) {
            header['required'] = schema['x-required'] === true;
            delete schema['x-required'];
          }
        }
      }
    }
  }
  return doc;
}

/** The oauth2 scheme of an authorization server at `issuer`: the authorization-code flow and every scope. */
export function oauthScheme(issuer: string) {
  return {
    type: 'oauth2' as const,
    description:
      'OAuth 2.1 authorization code with PKCE (S256): the clinic owner signs in to the dashboard and grants the scopes an app asks for. ' +
      'Send the access token as `Authorization: Bearer <token>`; it acts as a key with the scopes granted. Apps may register ' +
      `themselves (${issuer}${OAUTH_PREFIX}/reg, RFC 7591); the server's metadata is at ${issuer}/.well-known/oauth-authorization-server.`,
    flows: {
      authorizationCode: {
        authorizationUrl: `${issuer}${OAUTH_PREFIX}/auth`,
        tokenUrl: `${issuer}${OAUTH_PREFIX}/token`,
        refreshUrl: `${issuer}${OAUTH_PREFIX}/token`,
        scopes: Object.fromEntries(SCOPES.map((s) => [s, SCOPE_TEXTS[s].reference])),
      },
    },
  };
}

/**
 * Each operation's scope, from its oauth2 requirement (scopes.ts, declareScope), also written as
 * `x-scope` (null: none). Off (no `issuer`), the oauth2 scheme and every oauth2 requirement go,
 * so the document names no scheme it does not define. (@fastify/swagger reads each requirement's
 * scheme while it builds the document, so the scheme is defined until here.)
 */
function applyOAuth(doc: Json, issuer: string | null): Json {
  for (const item of Object.values<Json>(doc['paths'] ?? {})) {
    for (const op of Object.values<Json>(item)) {
      if (!Array.isArray(op['security'])) continue;
      const oauth = (op['security'] as Json[]).find((r) => OAUTH_SCHEME in r);
      op[SCOPE_EXTENSION] = (oauth?.[OAUTH_SCHEME] as string[] | undefined)?.[0] ?? null;
      if (issuer === null) op['security'] = (op['security'] as Json[]).filter((r) => !(OAUTH_SCHEME in r));
    }
  }
  if (issuer !== null) return doc;
  delete doc['components']['securitySchemes'][OAUTH_SCHEME];
  doc['security'] = [{ [API_KEY_SCHEME]: [] }];
  return doc;
}

const HOST_RE = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * The origin the request was made to (`https://host:port`): the Host header, or X-Forwarded-*
 * through a trusted proxy. null when the Host is not a plain host name or address.
 */
export function requestOrigin(req: FastifyRequest): string | null {
  const host = req.host;
  return HOST_RE.test(host) ? `${req.protocol}://${host}` : null;
}

/**
 * The document as served to `req`: info.license.url made absolute with the request's origin. A
 * Host that is not a plain host name or address leaves it relative, which OpenAPI allows.
 */
export function documentFor(doc: Readonly<Json>, req: FastifyRequest): Json {
  const origin = requestOrigin(req);
  if (origin === null) return doc;
  const info = doc['info'] as Json;
  return { ...doc, info: { ...info, license: { ...info['license'], url: `${origin}${LICENSE_PATH}` } } };
}

export interface OpenApiOptions {
  /** OAUTH_ISSUER: the oauth2 scheme is described when set */
  oauthIssuer: string | null;
}

export const openapi = fp(
  async (app, opts: OpenApiOptions) => {
    const issuer = opts.oauthIssuer === null ? null : oauthResources(opts.oauthIssuer).issuer;
    for (const schema of [...API_COMPONENTS, ...ERROR_COMPONENTS]) app.addSchema(schema);
    await app.register(swagger, {
      // The document describes the public API only (its routes carry tags), never the dashboard.
      hideUntagged: true,
      // Shared schemas are named by their $id under components.schemas (the default is def-N).
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Clinic Integration API',
          version: '1.0.0',
          description: API_DESCRIPTION,
          // package.json says UNLICENSED: the API and its documentation are not open source. The
          // licence's text is served by this service itself (a relative URL, like servers).
          license: { name: 'Proprietary: all rights reserved', url: LICENSE_PATH },
          contact: { name: 'The operator of this service: quote the X-Request-Id of a response' },
        },
        servers: [{ url: '/', description: 'This server: the origin that serves this document' }],
        tags: TAGS,
        components: {
          securitySchemes: {
            [API_KEY_SCHEME]: { type: 'http', scheme: 'bearer', description: API_KEY_SCHEME_DESCRIPTION },
            // removed by applyOAuth when OAuth is off
            [OAUTH_SCHEME]: oauthScheme(issuer ?? 'https://oauth.invalid'),
          },
        },
        security: [{ [API_KEY_SCHEME]: [] }, { [OAUTH_SCHEME]: [] }],
      },
      transformObject: (d) => ('openapiObject' in d ? applyOAuth(liftRequiredHeaders(d.openapiObject), issuer) : d.swaggerObject),
    });
    app.get(OPENAPI_PATH, { schema: { hide: true } }, async (req) => documentFor(app.swagger(), req));
  },
  { name: 'openapi' },
);
