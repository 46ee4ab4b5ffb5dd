// What an API route answers, for its schema's `response`: the 200 and the error statuses, each
// with its description, its body (a named schema, see domain/api-schemas.ts) and the headers it
// carries. Fastify serializes each body from this; @fastify/swagger documents all of it, and the
// openapi plugin turns each header's `x-required` into the header's `required`.
//
// A new response header: add it to RESPONSE_HEADERS (e.g. `ETag`), then name it in the
// `headers` of the routes that send it (apiResponses({ ..., headers: ['ETag'] })). A new status:
// in ERROR_RESPONSES when every API route may answer it (e.g. a 503), else in the `extra` of the
// routes that do (e.g. { 304: { description, headers: [...COMMON_HEADERS, 'ETag'], body: null } }).
import type { TSchema } from '@sinclair/typebox';
import { ref } from '../domain/api-schemas.js';
import { ErrorResponse } from './error-schemas.js';

interface HeaderDoc {
  description: string;
  schema: { type: 'string' | 'integer'; minimum?: number; examples: (string | number)[] };
}

/** Every response header the API documents, by its name in the document. */
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description:
      "The request's id: a sane incoming X-Request-Id (1 to 128 of A-Z a-z 0-9 . _ : -) is echoed, else a new UUID. Error bodies carry " +
      'it as request_id; quote it to support.',
    schema: { type: 'string', examples: ['4f1c2a7e-9b1d-4d7e-8f25-0c6f3b1e2a90'] },
  },
  'Cache-Control': {
    description: "Always no-store: responses hold a clinic's data and must not be kept by caches.",
    schema: { type: 'string', examples: ['no-store'] },
  },
  'RateLimit-Policy': {
    description:
      "The key's rate-limit policy (IETF httpapi RateLimit header fields draft): a burst of q requests, refilled over w seconds.",
    schema: { type: 'string', examples: ['"key";q=120;w=2'] },
  },
  RateLimit: {
    description: 'Where the key stands: r requests can be made right now, and the bucket is full again in t seconds.',
    schema: { type: 'string', examples: ['"key";r=117;t=1'] },
  },
  'Retry-After': {
    description: 'Whole seconds to wait before retrying (at least 1).',
    schema: { type: 'integer', minimum: 1, examples: [1] },
  },
  'WWW-Authenticate': {
    description:
      'How to authenticate: an API key as a bearer token (401); on a 403 insufficient_scope, the RFC 6750 challenge naming the scope the ' +
      'request needs.',
    schema: { type: 'string', examples: ['Bearer realm="api"', 'Bearer error="insufficient_scope", scope="citas:read"'] },
  },
  ETag: {
    description:
      'Strong entity tag of this answer: send it back as If-None-Match and, while nothing changed, the answer is 304 Not Modified with ' +
      'no body.',
    schema: { type: 'string', examples: ['"V2mC1sJ5f3y8L0o1Qk7eS0mB9xA"'] },
  },
  Vary: {
    description: 'Accept: a list answers JSON or CSV by the Accept header (and accept-encoding when the answer is compressed).',
    schema: { type: 'string', examples: ['Accept'] },
  },
  'X-Total-Count': {
    description: "CSV answers only: all records matching the filters, ignoring limit and offset (the JSON answer's total).",
    schema: { type: 'integer', minimum: 0, examples: [78] },
  },
  Link: {
    description:
      'CSV answers only, while there is a next page: <URL>; rel="next" (RFC 8288), the URL relative to this server: the same parameters, ' +
      'the days applied written out, offset advanced by limit. Absent on the last page.',
    schema: { type: 'string', examples: ['</api/v1/citas?desde=2026-11-21&hasta=2026-12-21&limit=100&offset=100>; rel="next"'] },
  },
} satisfies Record<string, HeaderDoc>;

export type ResponseHeader = keyof typeof RESPONSE_HEADERS;

/** A header of one response: required when that response always carries it. */
export type HeaderUse = ResponseHeader | { name: ResponseHeader; required: false };

/** On every response of the API. */
export const COMMON_HEADERS: HeaderUse[] = ['X-Request-Id', 'Cache-Control'];
/** On every response after the key was authenticated. */
export const RATE_LIMIT_HEADERS: HeaderUse[] = ['RateLimit-Policy', 'RateLimit'];
const COMMON = COMMON_HEADERS;
const RATE = RATE_LIMIT_HEADERS;
/** The same headers, sent on some responses of a status only. */
export const optional = (uses: HeaderUse[]): HeaderUse[] =>
  uses.map((u) => ({ name: typeof u === 'string' ? u : u.name, required: false }));

/** A documented status of a route besides its 200. */
export interface StatusDoc {
  description: string;
  headers: HeaderUse[];
  /** The body: the error body when left out; null for none (e.g. 304). */
  body?: null;
}

/** The error responses every API route documents, with the headers each carries. */
export const ERROR_RESPONSES: Record<number, StatusDoc> = {
  400: {
    description:
      'invalid_parameter (malformed, out of range or repeated) or unknown_parameter (error.param names it), or malformed_request (text ' +
      'no database can store, such as a NUL character)',
    headers: [...COMMON, ...RATE],
  },
  401: {
    description: 'missing_api_key or invalid_api_key (malformed header; unknown, revoked or expired key)',
    headers: [...COMMON, 'WWW-Authenticate'],
  },
  429: {
    // An address over its failed-authentication budget is refused before any key is known:
    // that 429 has no RateLimit fields.
    description: 'too_many_requests: retry after the Retry-After seconds',
    headers: [...COMMON, 'Retry-After', ...optional(RATE)],
  },
  500: {
    description: 'database_error (retry after the Retry-After seconds) or internal_error',
    headers: [...COMMON, { name: 'Retry-After', required: false }, ...optional(RATE)],
  },
  503: {
    description: 'service_unavailable: the service is overloaded; retry after the Retry-After seconds',
    headers: [...COMMON, 'Retry-After'],
  },
};

/**
 * The 304 of a conditional GET (a list or the feed): no body, the same ETag. It has passed
 * authentication and the rate limit like any request.
 */
export const NOT_MODIFIED: Record<number, StatusDoc> = {
  304: {
    description:
      'Not Modified: If-None-Match named the current ETag; no body, the data is the same as in the answer that carried that ETag. Still ' +
      'needs the key and counts against the rate limit',
    headers: [...COMMON, ...RATE, 'ETag'],
    body: null,
  },
};

/** The 404 of a single record: an unknown id and another clinic's answer alike. */
export const RECORD_NOT_FOUND: Record<number, StatusDoc> = {
  404: {
    description: "not_found: no record with this id in the API key's clinic (an id of another clinic is answered the same)",
    headers: [...COMMON, ...RATE],
  },
};

/**
 * The 403 of a route that needs `scope` (null: none): insufficient_scope for a key without it,
 * ip_not_allowed for an address the key does not accept. Set on each API route by its scope's
 * declaration (scopes.ts), so the text names that route's scope.
 */
export function forbiddenResponse(scope: string | null) {
  const address =
    "ip_not_allowed: the key is restricted to addresses that do not include the caller's (the message names the address the service saw)";
  if (scope === null) return statusResponse({ description: address, headers: [...COMMON] });
  const feed =
    scope === 'eventos:read' ? ', or tipo names an event type of a collection the key may not read (error.scope names its scope)' : '';
  return statusResponse({
    description: `insufficient_scope: the key lacks ${scope}${feed}; error.scope and WWW-Authenticate name the scope needed. Or ${address}`,
    headers: [...COMMON, { name: 'WWW-Authenticate', required: false }, ...optional(RATE)],
  });
}

function headerSchemas(uses: HeaderUse[]) {
  const out: Record<string, Record<string, unknown>> = {};
  for (const use of uses) {
    const name = typeof use === 'string' ? use : use.name;
    const doc: HeaderDoc = RESPONSE_HEADERS[name];
    out[name] = { ...doc.schema, description: doc.description, 'x-required': typeof use === 'string' };
  }
  return out;
}

function jsonResponse<T extends TSchema>(description: string, body: T, headers: HeaderUse[], csv?: string) {
  const content: Record<string, { schema: TSchema | { type: 'string'; description: string } }> = { 'application/json': { schema: body } };
  if (csv !== undefined) content['text/csv'] = { schema: { type: 'string', description: csv } };
  return { description, headers: headerSchemas(headers), content };
}

function statusResponse(doc: StatusDoc) {
  // `type: 'null'` is how @fastify/swagger leaves a response without content
  return doc.body === null
    ? { type: 'null' as const, description: doc.description, headers: headerSchemas(doc.headers) }
    : jsonResponse(doc.description, ref(ErrorResponse), doc.headers);
}

export interface OkResponse<T extends TSchema> {
  /** A named schema (domain/api-schemas.ts). */
  body: T;
  description: string;
  /** Headers besides the common ones and the rate-limit fields. */
  headers?: HeaderUse[];
  /** The same answer as CSV (Accept: text/csv), described: a list's. */
  csv?: string;
  /** The success status, 200 unless said (201: created). */
  status?: 200 | 201;
}

/**
 * The `response` of an authenticated, rate-limited API route: its 200, every error status of
 * ERROR_RESPONSES, and the route's `extra` statuses.
 */
export function apiResponses<T extends TSchema>(ok: OkResponse<T>, extra: Record<number, StatusDoc> = {}) {
  const others: Record<number, ReturnType<typeof statusResponse>> = {};
  for (const [status, doc] of Object.entries({ ...ERROR_RESPONSES, ...extra })) others[Number(status)] = statusResponse(doc);
  return { [ok.status ?? 200]: jsonResponse(ok.description, ref(ok.body), [...COMMON, ...RATE, ...(ok.headers ?? [])], ok.csv), ...others };
}

/** The `response` of a route whose success is a 204 No Content (a deletion), with the same error statuses. */
export function noContentResponses(description: string, extra: Record<number, StatusDoc> = {}) {
  const others: Record<number, ReturnType<typeof statusResponse>> = {};
  for (const [status, doc] of Object.entries({ ...ERROR_RESPONSES, ...extra })) others[Number(status)] = statusResponse(doc);
  return { 204: statusResponse({ description, headers: [...COMMON, ...RATE], body: null }), ...others };
}
