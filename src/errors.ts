// Errors, in two parts.
//
// DomainError: why a use-case (or the configuration) refused, as one reason code from a small
// set, with the field at fault when there is one. Services, config and the surfaces' own input
// checks throw it; each surface maps it once: the API's error handler (http/error-handler.ts),
// the dashboard's error page (admin/errors.ts) and the CLI's exit codes (cli/main.ts).
//
// The API's error catalogue: every error code the HTTP API can answer with is defined here and
// nowhere else (ERROR_CODES, ApiError, errors.*). The HTTP error handler renders ApiError in the
// one error shape.
import type { RecordType } from './collections/index.js';

export const DOMAIN_REASONS = [
  /** malformed or out-of-range input; `field` names it (query parameter, form field, CLI option) */
  'invalid_input',
  /** an environment variable is invalid; `field` names it */
  'invalid_config',
  /** the thing named does not exist, or is not the caller's to see */
  'not_found',
  /** it exists already (e.g. a user's e-mail) */
  'conflict',
  /** the clinic's plan does not include API access */
  'plan_not_eligible',
  /** the caller's role may not do this */
  'forbidden',
  /** the caller's API key lacks a scope (domain/scopes.ts); `field` names the scope it needs */
  'insufficient_scope',
  /** a dashboard form without a valid CSRF token, or posted from another site */
  'csrf_failed',
  /** an API key sent to the dashboard, which only takes its own sign-in */
  'api_key_on_dashboard',
  /** the input was read in full and refused as a whole (an import with bad lines) */
  'rejected',
  /** a position in the change feed that is no longer kept (or never was): start again from the lists */
  'expired',
  /**
   * something the process needs from its surroundings failed when it started: the database cannot
   * be reached, the port is taken, DATA_DIR cannot be written; `field` names the variable to check
   */
  'environment',
  /**
   * another process holds the embedded database's write lock (an import, most likely) for longer
   * than this write may wait: nothing was changed; try again in a moment
   */
  'busy',
] as const;

export type DomainReason = (typeof DOMAIN_REASONS)[number];

export class DomainError extends Error {
  constructor(
    readonly reason: DomainReason,
    message: string,
    readonly details: { readonly field?: string } = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const ERROR_CODES = {
  invalid_parameter: 400,
  unknown_parameter: 400,
  malformed_request: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  insufficient_scope: 403,
  ip_not_allowed: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  cursor_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  headers_too_large: 431,
  database_error: 500,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Seconds a client should wait before retrying after a database failure. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/** Seconds a client should wait before retrying when the process is over an overload threshold. */
export const OVERLOAD_RETRY_AFTER_SECONDS = 5;

export class ApiError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    readonly headers: Record<string, string> = {},
    /** insufficient_scope only: the scope the request needs (error.scope) */
    readonly scope?: string,
  ) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = ERROR_CODES[code];
  }
}

const WWW_AUTHENTICATE = { 'www-authenticate': 'Bearer realm="api"' };

export const errors = {
  invalidParameter: (param: string, message: string) => new ApiError('invalid_parameter', message, param),
  repeatedParameter: (param: string) =>
    new ApiError('invalid_parameter', `${param} was given more than once; send each parameter at most once`, param),
  unknownParameter: (param: string, allowed: readonly string[]) =>
    new ApiError(
      'unknown_parameter',
      `${param} is not a parameter of this endpoint; allowed: ${allowed.length ? allowed.join(', ') : 'none'}`,
      param,
    ),
  missingApiKey: () =>
    new ApiError('missing_api_key', 'Send your API key in the header "Authorization: Bearer <key>"', undefined, WWW_AUTHENTICATE),
  // One message for malformed, unknown, revoked and expired keys: the response must not tell
  // an attacker which of these it was.
  invalidApiKey: () =>
    new ApiError(
      'invalid_api_key',
      'The API key is not valid: it is unknown, revoked or expired, or the header is not "Authorization: Bearer <key>"',
      undefined,
      WWW_AUTHENTICATE,
    ),
  /**
   * A live OAuth access token presented to the resource it was not issued for (RFC 8707): the
   * same code (a client's handling of 401 stays one), a message that says what to do. It tells
   * the holder of a valid token only where it is valid, which the holder can find out anyway.
   */
  tokenForAnotherResource: (issuedFor: { name: string; url: string }, here: { name: string; url: string }) =>
    new ApiError(
      'invalid_api_key',
      `This access token was issued for ${issuedFor.name} (${issuedFor.url}), not for ${here.name}: a token is good only ` +
        `for the resource it was issued for. Use it on ${issuedFor.url}, or get a token for this one ` +
        `(resource=${here.url} in the authorization and token requests)`,
      undefined,
      WWW_AUTHENTICATE,
    ),
  /**
   * The key lacks the scope the request needs: error.scope and the RFC 6750 challenge name it.
   * Nothing about the data: the same answer whatever the request asked for.
   */
  insufficientScope: (scope: string, detail = `This request needs the scope ${scope}, which this API key does not have`) =>
    new ApiError(
      'insufficient_scope',
      `${detail}; the clinic owner can add it to the key in the dashboard (Settings > API)`,
      undefined,
      { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
      scope,
    ),
  /** The key is restricted to addresses that do not include `ip`, the address this service saw. */
  ipNotAllowed: (ip: string) =>
    new ApiError(
      'ip_not_allowed',
      `This API key may not be used from ${ip} (the address this service sees for your request); the clinic owner sets the key's allowed ` +
        `addresses in the dashboard (Settings > API)`,
    ),
  /** Fastify could not read the request (bad percent-encoding, an unreadable body...): `detail` says why. */
  unreadableRequest: (detail: string) => new ApiError('invalid_parameter', `The request could not be read: ${detail}`),
  notFound: (path: string) => new ApiError('not_found', `No such path: ${path}. The API lives under /api/v1/; its reference is at /docs`),
  /** The same answer for an id no clinic has and for another clinic's: it tells nothing of other clinics. */
  recordNotFound: (record: RecordType, id: string) => new ApiError('not_found', `No ${record} with id ${id} in this API key's clinic`),
  methodNotAllowed: (method: string, allow: string) =>
    new ApiError('method_not_allowed', `${method} is not allowed here; use ${allow}`, undefined, { allow }),
  /** The request is well formed but cannot be done as things stand (a limit reached, an Idempotency-Key reused): `message` says why. */
  conflict: (message: string, param?: string) => new ApiError('conflict', message, param),
  payloadTooLarge: (maxBytes: number) =>
    new ApiError('payload_too_large', `The request body is larger than ${maxBytes} bytes, the most this endpoint accepts`),
  /** `got`: what came instead, e.g. `Content-Type "text/plain"` or `no body`. */
  unsupportedMediaType: (got: string) =>
    new ApiError('unsupported_media_type', `The request body must be JSON, sent with "Content-Type: application/json" (got ${got})`),
  webhookNotFound: (id: string) => new ApiError('not_found', `No webhook endpoint with id ${id} in this API key's clinic`),
  cursorExpired: (detail: string) =>
    new ApiError('cursor_expired', `${detail}. Read the collections again and follow the feed from cursor=now`),
  tooManyRequests: (retryAfterSeconds: number) =>
    new ApiError('too_many_requests', `Too many requests; retry after ${retryAfterSeconds} second(s)`, undefined, {
      'retry-after': String(retryAfterSeconds),
    }),
  /** Over the key's own budget (the RateLimit headers say where it stands). */
  keyRateLimited: (retryAfterSeconds: number) =>
    new ApiError('too_many_requests', `Too many requests with this API key; retry after ${retryAfterSeconds} second(s)`, undefined, {
      'retry-after': String(retryAfterSeconds),
    }),
  /**
   * Over the address's failed-authentication budget: every request from it is refused for a
   * moment, a valid key's too, which the caller could not guess from "too many requests".
   */
  authFailuresLimited: (retryAfterSeconds: number) =>
    new ApiError(
      'too_many_requests',
      'Too many requests without a valid API key from this address (missing, wrong, revoked or expired, or not allowed from ' +
        `this address); retry after ${retryAfterSeconds} second(s), with a valid key`,
      undefined,
      { 'retry-after': String(retryAfterSeconds) },
    ),
  databaseError: () =>
    new ApiError('database_error', 'The database is unavailable; retry in a few seconds', undefined, {
      'retry-after': String(DATABASE_RETRY_AFTER_SECONDS),
    }),
  internalError: () => new ApiError('internal_error', 'Internal error; if it persists, contact support with the request_id'),
  /** Refused by Node's HTTP parser: not HTTP/1.1 as written (a lowercase method, bytes not allowed in a header...). */
  malformedRequest: (detail: string) =>
    new ApiError('malformed_request', `The request is not valid HTTP/1.1 (${detail}); check the request line and every header`),
  requestTimeout: (headersMs: number, requestMs: number) =>
    new ApiError(
      'request_timeout',
      `The request did not arrive in time: its headers must arrive within ${headersMs} ms and the whole request within ${requestMs} ms`,
    ),
  headersTooLarge: (maxBytes: number) =>
    new ApiError('headers_too_large', `The request line and headers exceed ${maxBytes} bytes; send fewer or shorter headers`),
  serviceUnavailable: () =>
    new ApiError('service_unavailable', `The service is overloaded; retry in ${OVERLOAD_RETRY_AFTER_SECONDS} seconds`, undefined, {
      'retry-after': String(OVERLOAD_RETRY_AFTER_SECONDS),
    }),
};
