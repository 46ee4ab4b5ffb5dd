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
  /** ids of the clientas whose personal data the response contained */
  clientas: Set<string>;
}

/** Adds to what the request's response discloses (an MCP request may make several tool calls). */
export function disclose(req: FastifyRequest, records: number, clientaIds: Iterable<string> = []): void {
  const d = req.disclosed ?? (req.disclosed = { records: 0, clientas: new Set() });
  d.records += records;
  for (const id of clientaIds) d.clientas.add(id);
}
