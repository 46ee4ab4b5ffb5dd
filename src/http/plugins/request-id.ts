// Every response, API or dashboard, success or error: the request id (a sane incoming
// X-Request-Id is echoed, else a new UUID, so a client can quote it to support), no caching and
// no content sniffing. The id is in every log line of its request, so one shaped like a key (a
// key pasted into the wrong header) is never echoed: it gets a UUID instead.
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { REQUEST_ID_RE } from '../../domain/records.js';
import { secretMasker } from '../log.js';

/** Fastify's genReqId option, for keys with `prefix`. */
export function requestIdGenerator(prefix: string) {
  const mask = secretMasker(prefix);
  return (req: { headers: Record<string, string | string[] | undefined> }): string => {
    const incoming = req.headers['x-request-id'];
    return typeof incoming === 'string' && REQUEST_ID_RE.test(incoming) && mask(incoming) === incoming ? incoming : randomUUID();
  };
}

/** The headers every response carries; also set by errors raised before any hook (frameworkErrors). */
export function commonHeaders(req: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', req.id);
  reply.header('cache-control', 'no-store');
  reply.header('x-content-type-options', 'nosniff');
}

export const requestId = fp(
  async (app) => {
    // Callback style: on every request's path, no promise to allocate.
    app.addHook('onRequest', (req, reply, done) => {
      commonHeaders(req, reply);
      done();
    });
  },
  { name: 'request-id' },
);
