// A list's 200 through the page cache (services/page-cache.ts): the bytes kept under the page's
// tag when there are any; else the page is built, serialized once by the route's compiled 200
// schema, kept, and sent. reply.serializeInput is given the status and the media type because the
// response schemas are declared per media type (route-responses.ts), and reply.serialize finds no
// function then. Either way the body goes out as UTF-8 bytes, with no string to encode again.
import type { FastifyReply } from 'fastify';
import type { PageCache } from '../services/page-cache.js';

export const JSON_UTF8 = 'application/json; charset=utf-8';

type Page = Record<string, unknown>;

export async function sendPage(
  reply: FastifyReply,
  pages: PageCache,
  clinicId: string,
  etag: string,
  build: () => Promise<Page>,
): Promise<FastifyReply> {
  if (!pages.enabled) return reply.send(await build());
  let body = pages.get(clinicId, etag);
  if (body === undefined) {
    body = pages.set(clinicId, etag, reply.serializeInput(await build(), '200', 'application/json') as string);
  }
  return reply.type(JSON_UTF8).send(body);
}
