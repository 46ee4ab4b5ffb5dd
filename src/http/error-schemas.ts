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
  503: errorResponse('service_unavailable: the service is overloaded; retry after the Retry-After seconds'),
};
