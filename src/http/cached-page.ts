// A list's 200 through the page cache (services/page-cache.ts): the page kept under its tag when
// there is one; else the page is built, written once, kept, and sent. Either way the body goes
// out as UTF-8 bytes, with no string to encode again.
//
// JSON is written by the route's compiled 200 schema (reply.serializeInput, given the status and
// the media type because the response schemas are declared per media type, route-responses.ts,
// and reply.serialize finds no function then). CSV (csv.ts) has its own tag, so its pages are
// kept beside the JSON ones, each with the headers that belong to it (the total, the next link).
import type { FastifyReply } from 'fastify';
import type { PageCache } from '../services/page-cache.js';
import { CSV_UTF8 } from './csv.js';

export const JSON_UTF8 = 'application/json; charset=utf-8';

type Page = Record<string, unknown>;

/** A page written out: its text and the headers that go with it. */
export interface RenderedPage {
  text: string;
  headers: Record<string, string>;
}

export async function sendPage(
  reply: FastifyReply,
  pages: PageCache,
  clinicId: string,
  etag: string,
  build: () => Promise<Page>,
): Promise<FastifyReply> {
  if (!pages.enabled) return reply.send(await build());
  let page = pages.get(clinicId, etag);
  if (page === undefined) page = pages.set(clinicId, etag, reply.serializeInput(await build(), '200', 'application/json') as string);
  return reply.type(JSON_UTF8).send(page.body);
}

export async function sendCsvPage(
  reply: FastifyReply,
  pages: PageCache,
  clinicId: string,
  etag: string,
  render: () => Promise<RenderedPage>,
): Promise<FastifyReply> {
  let page = pages.get(clinicId, etag);
  if (page === undefined) {
    const built = await render();
    if (!pages.enabled) return reply.headers(built.headers).type(CSV_UTF8).send(built.text);
    page = pages.set(clinicId, etag, built.text, built.headers);
  }
  return reply.headers(page.headers).type(CSV_UTF8).send(page.body);
}
