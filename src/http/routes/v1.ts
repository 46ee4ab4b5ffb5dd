// GET /api/v1/citas, /clientas, /llamadas and /eventos. The tenant comes from the key
// (req.apiKey), never from the request. With the TypeBox type provider, each handler's
// `req.query` is typed from its querystring schema and its return value checked against its 200
// schema. Every handler plans its request first (validation, defaults), then makes its ETag
// from the clinic's versions and answers 304 when the client has that page, else builds it.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import {
  CitasQuery, CitasResponse, ClientasQuery, ClientasResponse, EventosQuery, EventosResponse, LlamadasQuery, LlamadasResponse,
} from '../../domain/api-schemas.js';
import { ClientasSearch } from '../../services/clientas-search/search.js';
import { listEtag } from '../../services/conditional.js';
import { feedBounds, feedEtag, feedPage, planFeed } from '../../services/feed.js';
import {
  planCitas, planClientas, planLlamadas, plannedCitasPage, plannedClientasPage, plannedLlamadasPage, type ClinicContext,
} from '../../services/listings.js';
import { answeredNotModified } from '../conditional.js';
import { conditionalResponses, errorResponses, goneResponse } from '../error-schemas.js';

export const API_PATHS = ['/api/v1/citas', '/api/v1/clientas', '/api/v1/llamadas', '/api/v1/eventos'] as const;

function tenant(req: FastifyRequest): ClinicContext {
  const k = req.apiKey;
  // The auth hook runs before every route here; reaching this without a key is a bug.
  if (!k) throw new Error('route reached without an authenticated key');
  return { clinicId: k.clinicId, timezone: k.timezone, currency: k.currency };
}

const JSON_UTF8 = 'application/json; charset=utf-8';

export async function v1Routes(fastify: FastifyInstance, opts: { db: Kysely<DB>; now: () => number }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, now } = opts;
  // One client search per app: it keeps the counts of searches (services/clientas-search/).
  const search = new ClientasSearch();

  app.get('/api/v1/citas', {
    schema: {
      tags: ['citas'],
      operationId: 'listCitas',
      summary: 'List appointments in a date range',
      description: "Whole local days in the clinic's time zone, both ends inclusive; ordered by fecha_hora, then id. " +
        'With updated_since: the appointments changed since then, ordered by updated_at, then id.',
      querystring: CitasQuery,
      response: { ...conditionalResponses(CitasResponse, 'A page of appointments'), ...errorResponses },
    },
  }, async (req, reply) => {
    const ctx = tenant(req);
    const nowMs = now();
    const plan = planCitas(ctx, req.query, nowMs);
    if (answeredNotModified(req, reply, await listEtag(db, ctx, 'citas', plan.key, nowMs))) return reply;
    return plannedCitasPage(db, ctx, plan);
  });

  app.get('/api/v1/clientas', {
    schema: {
      tags: ['clientas'],
      operationId: 'listClientas',
      summary: 'List and search clients',
      description: 'Ordered by name (case- and accent-insensitive), then id. With updated_since: the clients changed since then, ordered by updated_at, then id.',
      querystring: ClientasQuery,
      response: { ...conditionalResponses(ClientasResponse, 'A page of clients'), ...errorResponses },
    },
  }, async (req, reply) => {
    const ctx = tenant(req);
    const nowMs = now();
    const plan = planClientas(req.query);
    if (answeredNotModified(req, reply, await listEtag(db, ctx, 'clientas', plan.key, nowMs))) return reply;
    return plannedClientasPage(db, ctx, plan, nowMs, search);
  });

  app.get('/api/v1/llamadas', {
    schema: {
      tags: ['llamadas'],
      operationId: 'listLlamadas',
      summary: "List calls answered by the clinic's voice assistant",
      description: 'Newest first (fecha_hora descending, then id descending). With updated_since: the calls changed since then, ordered by updated_at, then id.',
      querystring: LlamadasQuery,
      response: { ...conditionalResponses(LlamadasResponse, 'A page of calls'), ...errorResponses },
    },
  }, async (req, reply) => {
    const ctx = tenant(req);
    const nowMs = now();
    const plan = planLlamadas(ctx, req.query, nowMs);
    if (answeredNotModified(req, reply, await listEtag(db, ctx, 'llamadas', plan.key, nowMs))) return reply;
    return plannedLlamadasPage(db, ctx, plan);
  });

  app.get('/api/v1/eventos', {
    schema: {
      tags: ['eventos'],
      operationId: 'listEventos',
      summary: "Follow the clinic's changes: created, changed and deleted records, oldest first",
      description: 'Every change of the clinic\'s data is an event, numbered in the order it was committed. Start with cursor=now ' +
        '(then read the lists), and send each answer\'s next_cursor as the next cursor: you get exactly the events since, none skipped. ' +
        'has_more: true means more are waiting now. Events are kept at least 30 days; an older cursor is 410 cursor_expired.',
      querystring: EventosQuery,
      response: { ...conditionalResponses(EventosResponse, 'A page of events'), 410: goneResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const ctx = tenant(req);
    const plan = planFeed(req.query, ctx.clinicId);
    const bounds = await feedBounds(db, ctx.clinicId);
    if (answeredNotModified(req, reply, feedEtag(ctx, plan, bounds))) return reply;
    // Already JSON (each event's datos is stored as JSON): sent as it is, not serialized again.
    return reply.type(JSON_UTF8).send(await feedPage(db, ctx, plan, bounds));
  });
}
