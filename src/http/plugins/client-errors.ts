// Requests Node's HTTP parser refuses before Fastify sees them (bytes not allowed in a header, a
// lowercase method, NUL in a header, headers over MAX_HEADER_BYTES, a client too slow to send
// its request): Fastify's clientErrorHandler option. Fastify's default answers them with its own
// body ({"error":"Bad Request","message":"Client Error","statusCode":400}) or nothing; here they
// get the API's one error shape with a request id, the usual headers, and the connection closed.
//
// Nothing of the request is logged (err.rawPacket holds its bytes: a key may be among them), and
// a refusal is logged at debug only: a stream of garbage must not flood the log. They are counted
// in http_client_errors_total.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { HttpLimits } from '../../config.js';
import { errors, type ApiError } from '../../errors.js';
import { errorBody } from '../error-handler.js';

export type ClientErrorReason = 'parse' | 'header_overflow' | 'timeout';

/** The answer for a parser error code, and how it is counted. */
export function clientErrorAnswer(code: string | undefined, limits: HttpLimits): { error: ApiError; reason: ClientErrorReason } {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { error: errors.requestTimeout(limits.headersTimeoutMs, limits.requestTimeoutMs), reason: 'timeout' };
  if (code === 'HPE_HEADER_OVERFLOW') return { error: errors.headersTooLarge(limits.maxHeaderBytes), reason: 'header_overflow' };
  // llhttp's codes say what it disliked; the reason text is for people.
  const detail = code?.startsWith('HPE_') ? code.slice(4).toLowerCase().replace(/_/g, ' ') : 'unreadable';
  return { error: errors.malformedRequest(detail), reason: 'parse' };
}

/** The whole HTTP response, as bytes for the socket. */
export function rawErrorResponse(error: ApiError): string {
  const id = randomUUID();
  const body = JSON.stringify(errorBody(error, id));
  const headers = [
    `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    `X-Request-Id: ${id}`,
    'Connection: close',
  ];
  return `${headers.join('\r\n')}\r\n\r\n${body}`;
}

/** Fastify's clientErrorHandler option (called with the app as `this`). */
export function clientErrorHandler(limits: HttpLimits) {
  return function onClientError(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
    // A reset connection: nobody is left to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const { error, reason } = clientErrorAnswer(err.code, limits);
    this.metrics?.clientErrors.inc({ reason });
    this.log.debug({ code: err.code, reason, ip: socket.remoteAddress }, 'request refused by the HTTP parser');
    // A response already under way on this connection (the client stopped reading or sending
    // mid-body) cannot be followed by another one: just close.
    const busy = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (socket.writable && !busy) {
      socket.end(rawErrorResponse(error));
      // Whatever the client still sends is not read; the timer frees the socket if it never reads either.
      socket.setTimeout(5_000, () => socket.destroy());
    } else {
      socket.destroy();
    }
  };
}
