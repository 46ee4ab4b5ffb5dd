// One renderer for every error: the catalogue's shape, request_id always, and no internals in
// a 5xx body (the cause goes to the log, with the same request id). This is where the API maps
// DomainError: a use-case's refusal of a query parameter is a 400 invalid_parameter naming it.
import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { databaseErrorKind, isDatabaseError } from '../db/connect.js';
import { ApiError, DomainError, errors } from '../errors.js';
import { commonHeaders } from './plugins/request-id.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The error code this request was answered with, for the per-key usage counts. */
    apiErrorCode: string | null;
  }
}

export function errorBody(err: ApiError, requestId: string) {
  return {
    error: {
      code: err.code,
      message: err.message,
      ...(err.param ? { param: err.param } : {}),
      ...(err.scope ? { scope: err.scope } : {}),
      request_id: requestId,
    },
  };
}

export function toApiError(err: unknown, req: FastifyRequest): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof DomainError && err.reason === 'invalid_input' && err.details.field !== undefined) {
    return errors.invalidParameter(err.details.field, err.message);
  }
  if (err instanceof DomainError && err.reason === 'expired') return errors.cursorExpired(err.message);
  if (err instanceof DomainError && err.reason === 'insufficient_scope' && err.details.field !== undefined) {
    return errors.insufficientScope(err.details.field, err.message);
  }
  if (isDatabaseError(err)) {
    req.log.error({ err }, 'database error');
    req.server.metrics?.databaseErrors.inc({ kind: databaseErrorKind(err), source: 'request' });
    return errors.databaseError();
  }
  const status = (err as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Fastify's own client errors (e.g. an unreadable request): still the one shape.
    return errors.unreadableRequest((err as Error).message);
  }
  // Any other DomainError has no meaning on the API (it reads only its own clinic's data): a bug.
  req.log.error({ err }, 'unexpected error');
  return errors.internalError();
}

export function sendError(err: ApiError, req: FastifyRequest, reply: FastifyReply) {
  req.apiErrorCode = err.code;
  // A list sets its page's ETag before it builds the page (http/conditional.ts); if the build
  // fails, the tag does not name this error, and a client that kept it would later get a 304 for
  // an error it took for the page.
  reply.removeHeader('etag');
  return reply.code(err.statusCode).headers(err.headers).send(errorBody(err, req.id));
}

export function errorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply) {
  return sendError(toApiError(err, req), req, reply);
}

/**
 * Fastify's frameworkErrors option: errors Fastify raises before any hook runs (e.g. a URL with
 * bad percent-encoding) get the common headers and the one error shape too.
 */
export const frameworkErrors: FastifyServerOptions['frameworkErrors'] = (err, rawReq, rawReply) => {
  const req = rawReq as unknown as FastifyRequest;
  const reply = rawReply as unknown as FastifyReply;
  commonHeaders(req, reply);
  const status = (err as { statusCode?: number }).statusCode ?? 400;
  void sendError(status < 500 ? errors.unreadableRequest(err.message) : errors.internalError(), req, reply);
};
