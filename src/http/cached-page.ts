// A list's 200 through the page cache (services/page-cache.ts): the page kept under its tag when
// there is one; else the page is built, written once, kept (unless PAGE_CACHE_MB is 0), and sent.
// Either way it goes out as its UTF-8 bytes, outside V8's heap (PageCache.set): sent as a string,
// a 43 KB page stayed on the heap until the socket had written it, and under load outlived young
// collections: Node 24's peak RSS in the cold-page benchmark fell (the figures are in the Node 24
// row of docs/benchmarks.md), with requests/s unchanged within the spread.
//
// JSON is written by V8's own JSON.stringify, not by the route's compiled 200 schema: services/shape.ts
// builds every record with exactly its schema's fields, in the schema's order (typed by the schema,
// and test/http/list-json.test.ts holds each list's text byte for byte to the schema's serializer),
// so both write the same text. The schema's serializer joins a page from thousands of pieces (a
// 43 KB page of 100 citas took 164 KB of garbage and a second pass to join them before the socket
// could write it); JSON.stringify writes it flat, at once: 45 against 72 us of CPU per page on
// Node 24, 41 against 86 on Node 22 (measured beside the bare route; the run is in the history of
// docs/benchmarks.md).
// CSV (csv.ts) has its own tag, so its pages are kept beside the JSON ones, each with the headers
// that belong to it (the total, the next link).
//
// What the page disclosed (its records, the clientas whose data it holds) is kept with it, and
// reported for the request log either way (./disclosure.ts), with the page's tag: a page sent
// again discloses the same, and the tag names that set of clientas.
import type { FastifyReply } from 'fastify';
import type { PageCache, PageDisclosure } from '../services/page-cache.js';
import { CSV_UTF8 } from './csv.js';
import { disclose } from './disclosure.js';

export const JSON_UTF8 = 'application/json; charset=utf-8';

type Page = Record<string, unknown>;

/** A page written out: its text and the headers that go with it, and what it discloses. */
export interface RenderedPage {
  text: string;
  headers: Record<string, string>;
  disclosed: PageDisclosure;
}

/** A page built, and what it discloses. */
export interface BuiltPage {
  page: Page;
  disclosed: PageDisclosure;
}

export async function sendPage(
  reply: FastifyReply,
  pages: PageCache,
  clinicId: string,
  etag: string,
  build: () => Promise<BuiltPage>,
): Promise<FastifyReply> {
  let page = pages.get(clinicId, etag);
  if (page === undefined) {
    const built = await build();
    page = pages.set(clinicId, etag, JSON.stringify(built.page), undefined, built.disclosed);
  }
  disclose(reply.request, page.disclosed.records, page.disclosed.clientas, etag);
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
    page = pages.set(clinicId, etag, built.text, built.headers, built.disclosed);
  }
  disclose(reply.request, page.disclosed.records, page.disclosed.clientas, etag);
  return reply.headers(page.headers).type(CSV_UTF8).send(page.body);
}
