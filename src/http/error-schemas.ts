// The API's error body as named TypeBox schemas, from the error catalogue (errors.ts): the
// serialization and the OpenAPI document of every route's error responses. ERROR_WHEN says when
// each code is answered; it must name every code of the catalogue (the compiler checks), and
// feeds the document's description of `code` and /llms.txt.
import { Type } from '@sinclair/typebox';
import { SCOPES, type Scope } from '../domain/scopes.js';
import { ERROR_CODES, type ErrorCode } from '../errors.js';

export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as ErrorCode[];

/** When each error code is answered: for people reading the reference, not for matching. */
export const ERROR_WHEN = {
  invalid_parameter: "a query parameter (or a record's id in the path) is malformed, out of range or repeated, or desde is after hasta",
  unknown_parameter: 'a query parameter that the endpoint does not take',
  malformed_request:
    'the request holds text no database can store (a NUL or other control character, an unpaired surrogate) or cannot be parsed',
  missing_api_key: 'no Authorization header',
  invalid_api_key:
    'the header is not `Bearer <key>`, or the key is unknown, revoked or expired, or an OAuth access token was issued for the other ' +
    'resource (the REST API or /mcp; the message says which)',
  insufficient_scope:
    'the API key lacks the scope the request needs (error.scope names it, and so does WWW-Authenticate); a key sees only the event types ' +
    'of the resources it may read, so an explicit tipo of others is refused too',
  ip_not_allowed: "the API key is restricted to addresses that do not include the caller's; the message names the address the service saw",
  not_found: "no such path, or no record with that id in the API key's clinic (an unknown id and another clinic's answer alike)",
  method_not_allowed: 'a method the path does not take (the Allow header lists those it does)',
  request_timeout: "the request line and headers did not all arrive within the server's time; the connection is closed",
  conflict:
    'the request cannot be done as things stand: the clinic has the most webhook endpoints allowed, or an Idempotency-Key was used ' +
    'before with another body',
  cursor_expired:
    'the change feed cursor is older than the events kept (at least 30 days): read the collections again and follow from cursor=now',
  payload_too_large: 'the request body is larger than the endpoint accepts (16 KB)',
  unsupported_media_type: 'a request body that is not sent as application/json',
  too_many_requests: 'over the rate limit; retry after Retry-After seconds',
  headers_too_large: 'the request headers are larger than the server accepts',
  database_error: 'the database failed or timed out; retry after Retry-After seconds',
  internal_error: 'any other unexpected failure; quote the request_id to support',
  service_unavailable: 'the service is overloaded or shutting down; retry after Retry-After seconds',
} satisfies Record<ErrorCode, string>;

export const ErrorDetail = Type.Object(
  {
    code: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: ERROR_CODE_NAMES,
      description: `Stable identifier to match on. ${ERROR_CODE_NAMES.map((c) => `${ERROR_CODES[c]} ${c}: ${ERROR_WHEN[c]}`).join('. ')}.`,
      examples: ['invalid_parameter'],
    }),
    message: Type.String({
      description: 'For people: what was wrong and how to fix it; may change',
      examples: ['limit must be an integer from 1 to 500'],
    }),
    param: Type.Optional(
      Type.String({ description: 'The query parameter (or the path parameter, id) at fault (parameter errors only)', examples: ['limit'] }),
    ),
    scope: Type.Optional(
      Type.Unsafe<Scope>({
        type: 'string',
        enum: [...SCOPES],
        description: 'insufficient_scope only: the scope the request needs',
        examples: ['citas:read'],
      }),
    ),
    request_id: Type.String({
      description: 'Also in the X-Request-Id header; quote it to support',
      examples: ['4f1c2a7e-9b1d-4d7e-8f25-0c6f3b1e2a90'],
    }),
  },
  { $id: 'ErrorDetail', description: 'What went wrong' },
);

export const ErrorResponse = Type.Object(
  { error: Type.Unsafe<typeof ErrorDetail.static>(Type.Ref('ErrorDetail')) },
  { $id: 'ErrorResponse', description: 'Every error response of the API has this body; match on error.code' },
);

/** The error schemas, in document order: each is a components.schemas entry. */
export const ERROR_COMPONENTS = [ErrorDetail, ErrorResponse] as const;
