// One renderer for every error: the catalogue's shape, request_id always, and no internals in
// a 5xx body (the cause goes to the log, with the same request id).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseError } from '../db/connect.js';
import { ApiError, errors } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The error code this request was answered with, for the per-key usage counts. */
    apiErrorCode: string | null;
  }
}

export function errorBody(err: ApiError, requestId: string) {
  return {
    error: { code: err.code, message: err.message, ...(err.param ? { param: err.param } : {}), request_id: requestId },
  };
}

export function toApiError(err: unknown, req: FastifyRequest): ApiError {
  if (err instanceof ApiError) return err;
  if (isDatabaseError(err)) {
    req.log.error({ err }, 'database error');
    return errors.databaseError();
  }
  const status = (err as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Fastify's own client errors (e.g. an unreadable request): still the one shape.
    return errors.unreadableRequest((err as Error).message);
  }
  req.log.error({ err }, 'unexpected error');
  return errors.internalError();
}

export function sendError(err: ApiError, req: FastifyRequest, reply: FastifyReply) {
  req.apiErrorCode = err.code;
  return reply.code(err.statusCode).headers(err.headers).send(errorBody(err, req.id));
}

export function errorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply) {
  return sendError(toApiError(err, req), req, reply);
}
