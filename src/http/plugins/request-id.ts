// Every response, API or dashboard, success or error: the request id (a sane incoming
// X-Request-Id is echoed, else a new UUID, so a client can quote it to support), no caching and
// no content sniffing. The id is in every log line of its request, so one shaped like a key (a
// key pasted into the wrong header) is never echoed: it gets a UUID instead.
//
// The UUIDs are version 7 (RFC 9562): they start with the time, so each new one sorts after the
// last. The request log indexes them per clinic (clinic_id, request_id): random ids (version 4)
// put each new row on another page of that index, and every write of the log dirtied a hundred
// pages for a hundred rows; SQLite then copied its write-ahead log into the database every few
// seconds, each time stopping the event loop for 15-25 ms (the p99 at 300 requests/s). In order,
// they land on the same few pages.
//
// Their random bits come from a pool filled 4 KiB at a time: uuid's own source asks the operating
// system for 16 bytes per id (crypto.getRandomValues), which was 5 % of the CPU of a page served
// from the page cache (profiled). Given its bytes, uuid keeps no sequence within a millisecond:
// ids of the same millisecond are in random order, which the index does not mind (they land on
// its last page all the same).
import { randomFillSync } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { v7 as uuidV7 } from 'uuid';
import { REQUEST_ID_RE } from '../../domain/records.js';
import { secretMasker } from '../log.js';

const pool = new Uint8Array(4096);
let used = pool.length;

/** 16 random bytes, from the pool (refilled when spent): uuid reads them before the next call. */
function random16(): Uint8Array {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool.subarray(used, (used += 16));
}

/** A new request id: a UUID version 7. */
export function newRequestId(): string {
  return uuidV7({ random: random16() });
}

/** Fastify's genReqId option, for keys with `prefix`. */
export function requestIdGenerator(prefix: string) {
  const mask = secretMasker(prefix);
  return (req: { headers: Record<string, string | string[] | undefined> }): string => {
    const incoming = req.headers['x-request-id'];
    return typeof incoming === 'string' && REQUEST_ID_RE.test(incoming) && mask(incoming) === incoming ? incoming : newRequestId();
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
