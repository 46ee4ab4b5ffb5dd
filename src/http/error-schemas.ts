// The API's error body as a TypeBox schema, from the error catalogue (errors.ts): serialization
// and the OpenAPI document of every route's error responses.
import { Type } from '@sinclair/typebox';
import { ERROR_CODES, type ErrorCode } from '../errors.js';

const CODES = Object.keys(ERROR_CODES) as ErrorCode[];

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.Unsafe<ErrorCode>({
        type: 'string',
        enum: CODES,
        description: `Stable identifier to match on. ${CODES.map((c) => `${ERROR_CODES[c]} ${c}`).join('; ')}`,
      }),
      message: Type.String({ description: 'For people; may change' }),
      param: Type.Optional(Type.String({ description: 'The query parameter at fault (parameter errors only)' })),
      request_id: Type.String({ description: 'Also in the X-Request-Id header; quote it to support' }),
    }),
  },
  { title: 'Error' },
);

const errorResponse = (description: string) => ({ ...ErrorResponse, description });

/** Responses every API route documents besides its 200. */
export const errorResponses = {
  400: errorResponse('invalid_parameter (malformed, out of range or repeated) or unknown_parameter; error.param names it'),
  401: errorResponse('missing_api_key or invalid_api_key (malformed header; unknown, revoked or expired key)'),
  429: errorResponse('too_many_requests: retry after the Retry-After seconds'),
  500: errorResponse('database_error (retry after the Retry-After seconds) or internal_error'),
};

const ETAG_HEADER = {
  etag: {
    type: 'string',
    description: 'Strong entity tag of this answer: send it back as If-None-Match to get 304 while nothing changed',
  },
};

/**
 * The 200 of a conditional GET (with its ETag header) and its 304 (no body, the same ETag). A 304
 * still needs a valid key and counts against the rate limit.
 */
export function conditionalResponses<T extends object>(schema: T, description: string) {
  return {
    200: { ...schema, description, headers: ETAG_HEADER },
    304: {
      type: 'null',
      description: 'Not Modified: If-None-Match named the current ETag. No body; the data is the same as in the answer that carried that ETag',
      headers: ETAG_HEADER,
    },
  } as const;
}

/** 410 of the change feed. */
export const goneResponse = errorResponse('cursor_expired: the cursor is older than the events kept (at least 30 days): read the collections again and follow from cursor=now');
