// What a response disclosed, for the request log (every request made with a key is recorded with
// the number of records it returned and the clientas whose data it contained). A handler reports
// it with disclose(); the log reads `req.disclosed` when the response is sent. The API scope
// declares the field (plugins/api.ts), so REST routes and the MCP server report the same way.
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** null: the response disclosed no record (an error, /me, a 304) */
    disclosed: Disclosed | null;
  }
}

export interface Disclosed {
  /** records returned (a list's page, one record, a feed's events, search results) */
  records: number;
  /**
   * ids of the clientas whose personal data the response contained, in the response's order,
   * repeats included: the array the handler had (a page's, kept with it in the page cache), not
   * a copy. The request log names the set from it (domain/access-set.ts) and stores each
   * distinct set once.
   */
  clientas: readonly string[];
  /**
   * What names these clientas without reading them: a list page's ETag (the same tag is the
   * same page, so the same clientas in the same order). null: the ids themselves name the set.
   */
  tag: string | null;
}

/**
 * Adds to what the request's response discloses (an MCP request may make several tool calls).
 * `tag`: see Disclosed. A response that discloses the clientas of two calls has no single tag.
 */
export function disclose(req: FastifyRequest, records: number, clientaIds: readonly string[] = [], tag: string | null = null): void {
  const d = req.disclosed;
  if (d === null) {
    req.disclosed = { records, clientas: clientaIds, tag };
    return;
  }
  d.records += records;
  if (clientaIds.length === 0) return;
  if (d.clientas.length === 0) {
    d.clientas = clientaIds;
    d.tag = tag;
  } else {
    d.clientas = d.clientas.concat(clientaIds);
    d.tag = null;
  }
}
