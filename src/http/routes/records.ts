// GET /api/v1/citas/{id}, /clientas/{id}, /llamadas/{id}: one record of the key's clinic, exactly
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
import { Cita } from '../../collections/citas.js';
import { Clienta } from '../../collections/clientas.js';
import { Llamada } from '../../collections/llamadas.js';
import { errors } from '../../errors.js';
import { RESOURCE_SCOPES } from '../../domain/scopes.js';
import { recordEtag, type ListResource } from '../../services/conditional.js';
import type { ClinicContext } from '../../services/listings.js';
import { citaRead, clientaRead, llamadaRead } from '../../services/records.js';
import { disclose } from '../disclosure.js';
import { samplesMarkdown, type SampleRequest } from '../code-samples.js';
import { answeredNotModified } from '../conditional.js';
import { apiResponses, NOT_MODIFIED, RECORD_NOT_FOUND } from '../route-responses.js';

/** The paths of single records, by the collection they belong to (the method guard's 405s). */
export const RECORD_PATHS = ['/api/v1/citas/:id', '/api/v1/clientas/:id', '/api/v1/llamadas/:id'] as const;

/** The examples first list one record (limit=1, the list's defaults) and read it by its id. */
export const RECORD_SAMPLES = {
  getCita: {
    path: '/api/v1/citas/{id}',
    idFrom: { path: '/api/v1/citas', query: { limit: '1' }, items: 'citas' },
    print: ['fecha_hora'],
  },
  getClienta: {
    path: '/api/v1/clientas/{id}',
    idFrom: { path: '/api/v1/clientas', query: { limit: '1' }, items: 'clientas' },
    print: ['nombre'],
  },
  getLlamada: {
    path: '/api/v1/llamadas/{id}',
    idFrom: { path: '/api/v1/llamadas', query: { limit: '1' }, items: 'llamadas' },
    print: ['resultado'],
  },
} as const satisfies Record<string, SampleRequest>;

export interface RecordRoutesOptions {
  db: Kysely<DB>;
  now: () => number;
  tenant: (req: FastifyRequest) => ClinicContext;
  /** whether the request's key sees contact details (contacto:read) */
  seesContact: (req: FastifyRequest) => boolean;
}

type Singular = 'cita' | 'clienta' | 'llamada';

/** What differs between the three: the record's names, its schema, its reader, its reference text. */
const ROUTES = {
  citas: {
    operationId: 'getCita',
    singular: 'cita',
    body: Cita,
    summary: 'One appointment, by its id',
    what: 'appointment',
    extra: '',
  },
  clientas: {
    operationId: 'getClienta',
    singular: 'clienta',
    body: Clienta,
    summary: 'One client, by her id',
    what: 'client',
    extra: ' Her derived fields (total_citas, ultima_cita ...) are as of now.',
  },
  llamadas: {
    operationId: 'getLlamada',
    singular: 'llamada',
    body: Llamada,
    summary: 'One call, by its id',
    what: 'call',
    extra: '',
  },
} as const satisfies Record<ListResource, { operationId: keyof typeof RECORD_SAMPLES; singular: Singular; [k: string]: unknown }>;

function reader(db: Kysely<DB>, resource: ListResource) {
  switch (resource) {
    case 'citas':
      return (ctx: ClinicContext, id: string, _nowMs: number, contact: boolean) => citaRead(db, ctx, id, contact);
    case 'clientas':
      return (ctx: ClinicContext, id: string, nowMs: number, contact: boolean) => clientaRead(db, ctx, id, nowMs, contact);
    case 'llamadas':
      return (ctx: ClinicContext, id: string, _nowMs: number, contact: boolean) => llamadaRead(db, ctx, id, contact);
  }
}

/**
 * Adds GET /api/v1/<resource>/:id to `fastify` (the API scope), at once: called right after its
 * list's route, so the document lists each record beside its list.
 */
export function addRecordRoute(fastify: FastifyInstance, opts: RecordRoutesOptions, resource: ListResource): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, now, tenant, seesContact } = opts;
  const r = ROUTES[resource];
  const read = reader(db, resource);
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
          `Send the ETag back as If-None-Match: 304 while nothing changed.\n\n${samplesMarkdown(RECORD_SAMPLES[r.operationId])}`,
        params: RecordParams,
        querystring: RecordQuery,
        response: apiResponses({ body: r.body, description: `The ${r.what}`, headers: ['ETag'] }, { ...NOT_MODIFIED, ...RECORD_NOT_FOUND }),
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
      const found = await read(ctx, id, nowMs, contact);
      if (found === null) throw errors.recordNotFound(r.singular, id);
      if (answeredNotModified(req, reply, etag)) return reply;
      // For the request log: one record, and whose data it holds.
      disclose(req, 1, found.clientaId === null ? [] : [found.clientaId]);
      return found.record;
    },
  );
}
