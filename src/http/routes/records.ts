// GET /api/v1/{collection}/{id} (/api/v1/citas/{id} ...): one record of the key's clinic, exactly
// as the lists show it (services/records.ts). The id is validated like a query parameter
// (../query-validator.ts: a UUID, any case, as the import takes ids): a malformed one is a 400
// invalid_parameter naming `id`. An id the clinic does not have is a 404 not_found, the same
// answer whether no clinic has it or another clinic does.
//
// A conditional GET like the lists: the ETag is made from the clinic's data version before the
// record is read (services/conditional.ts, recordEtag), and a matching If-None-Match is a 304
// without reading it. "If-None-Match: *" means "any current representation": the record is read
// first, so an id the clinic does not have is a 404, never a 304.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { RecordParams, RecordQuery } from '../../domain/api-schemas.js';
import { COLLECTIONS } from '../../collections/index.js';
import { errors } from '../../errors.js';
import { RESOURCE_SCOPES } from '../../domain/scopes.js';
import { recordEtag, type ListResource } from '../../services/conditional.js';
import type { ClinicContext } from '../../services/listings.js';
import { readRecord } from '../../services/records.js';
import { disclose } from '../disclosure.js';
import { samplesMarkdown, type SampleRequest } from '../code-samples.js';
import { answeredNotModified } from '../conditional.js';
import { apiResponses, NOT_MODIFIED, RECORD_NOT_FOUND } from '../route-responses.js';

/** The paths of single records, by the collection they belong to (the method guard's 405s). */
export const RECORD_PATHS = Object.values(COLLECTIONS).map((c) => `/api/v1/${c.name}/:id`);

/** The examples first list one record (limit=1, the list's defaults) and read it by its id. */
export const RECORD_SAMPLES: Record<string, SampleRequest> = Object.fromEntries(
  Object.values(COLLECTIONS).map((c) => [
    c.one.operationId,
    {
      path: `/api/v1/${c.name}/{id}`,
      idFrom: { path: `/api/v1/${c.name}`, query: { limit: '1' }, items: c.name },
      print: [...c.one.print],
    },
  ]),
);

export interface RecordRoutesOptions {
  db: Kysely<DB>;
  now: () => number;
  tenant: (req: FastifyRequest) => ClinicContext;
  /** whether the request's key sees contact details (contacto:read) */
  seesContact: (req: FastifyRequest) => boolean;
}

/**
 * Adds GET /api/v1/<resource>/:id to `fastify` (the API scope), at once: called right after its
 * list's route, so the document lists each record beside its list.
 */
export function addRecordRoute(fastify: FastifyInstance, opts: RecordRoutesOptions, resource: ListResource): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, now, tenant, seesContact } = opts;
  const c = COLLECTIONS[resource];
  const r = c.one;
  app.get(
    `/api/v1/${resource}/:id`,
    {
      // The list's scope reads its records too.
      config: { scope: RESOURCE_SCOPES[resource] },
      schema: {
        operationId: r.operationId,
        tags: [resource],
        summary: r.summary,
        description:
          `The ${r.what} with this id, exactly as GET /api/v1/${resource} shows it (every field, the same time zone and ` +
          `offsets).${r.extra} ` +
          "An id the API key's clinic does not have is a 404 not_found, also when another clinic has it. " +
          `Send the ETag back as If-None-Match: 304 while nothing changed.\n\n${samplesMarkdown(RECORD_SAMPLES[r.operationId]!)}`,
        params: RecordParams,
        querystring: RecordQuery,
        response: apiResponses(
          { body: c.record, description: `The ${r.what}`, headers: ['ETag'] },
          { ...NOT_MODIFIED, ...RECORD_NOT_FOUND },
        ),
      },
    },
    async (req, reply) => {
      // The ETag, and a 304 from it alone; else the record (404 when the clinic has none with
      // this id), and the 304 of "If-None-Match: *" once it is known to exist.
      const ctx = tenant(req);
      const nowMs = now();
      const { id } = req.params;
      const contact = seesContact(req);
      const etag = await recordEtag(db, ctx, resource, id, nowMs, contact);
      if (answeredNotModified(req, reply, etag, false)) return reply;
      const found = await readRecord(db, resource, ctx, id, nowMs, contact);
      if (found === null) throw errors.recordNotFound(c.singular, id);
      if (answeredNotModified(req, reply, etag)) return reply;
      // For the request log: one record, and whose data it holds.
      disclose(req, 1, found.clientaId === null ? [] : [found.clientaId]);
      return found.record;
    },
  );
}
