// Conditional GETs: every 200 of a list, of a single record or of the feed carries a strong ETag, and a request whose
// If-None-Match lists it gets 304 Not Modified with no body (the tag is made without building the
// page: services/conditional.ts). A 304 has passed authentication and the rate limit like any
// request (the API scope's onRequest hooks run first).
import type { FastifyReply, FastifyRequest } from 'fastify';

const ENTITY_TAG = /(?:W\/)?"([^"]*)"/g;

/**
 * RFC 9110 13.1.2: If-None-Match matches when it is "*" or lists the tag; the comparison is the
 * weak one (W/"x" matches "x"), as the RFC requires for this header. `star` false: "*" is left to
 * the caller, which must first know that the resource exists ("*" matches any CURRENT
 * representation; a record's tag is made before the record is read).
 */
export function ifNoneMatch(header: string | string[] | undefined, etag: string, star = true): boolean {
  if (header === undefined) return false;
  // What a client that kept the tag sends: the tag itself.
  if (header === etag) return true;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return star;
  const opaque = etag.slice(1, -1);
  for (const m of value.matchAll(ENTITY_TAG)) if (m[1] === opaque) return true;
  return false;
}

/**
 * Sets the ETag; answers 304 and returns true when the client already has this representation.
 * `star` as for ifNoneMatch: false while the resource may not exist.
 */
export function answeredNotModified(req: FastifyRequest, reply: FastifyReply, etag: string, star = true): boolean {
  reply.header('etag', etag);
  if (!ifNoneMatch(req.headers['if-none-match'], etag, star)) return false;
  void reply.code(304).send();
  return true;
}
