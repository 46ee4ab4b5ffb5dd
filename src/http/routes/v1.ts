// GET /api/v1/citas, /clientas, /llamadas. The tenant comes from the key (req.apiKey), never
// from the request. With the TypeBox type provider, each handler's `req.query` is typed from its
// querystring schema and its return value checked against its 200 schema.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import {
  CitasQuery, CitasResponse, ClientasQuery, ClientasResponse, LlamadasQuery, LlamadasResponse,
} from '../../domain/api-schemas.js';
import { citasPage, clientasPage, llamadasPage, type ClinicContext } from '../../services/listings.js';
import { ClientasSearch } from '../../services/clientas-search/search.js';
import { errorResponses } from '../error-schemas.js';

export const API_PATHS = ['/api/v1/citas', '/api/v1/clientas', '/api/v1/llamadas'] as const;

function tenant(req: FastifyRequest): ClinicContext {
  const k = req.apiKey;
  // The auth hook runs before every route here; reaching this without a key is a bug.
  if (!k) throw new Error('route reached without an authenticated key');
  return { clinicId: k.clinicId, timezone: k.timezone, currency: k.currency };
}

export async function v1Routes(fastify: FastifyInstance, opts: { db: Kysely<DB>; now: () => number }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, now } = opts;
  // One client search per app: it keeps the counts of searches (services/clientas-search/).
  const search = new ClientasSearch();

  app.get('/api/v1/citas', {
    schema: {
      tags: ['citas'],
      summary: 'List appointments in a date range',
      description: "Whole local days in the clinic's time zone, both ends inclusive; ordered by fecha_hora, then id.",
      querystring: CitasQuery,
      response: { 200: CitasResponse, ...errorResponses },
    },
  }, async (req) => citasPage(db, tenant(req), req.query, now()));

  app.get('/api/v1/clientas', {
    schema: {
      tags: ['clientas'],
      summary: 'List and search clients',
      description: 'Ordered by name (case- and accent-insensitive), then id.',
      querystring: ClientasQuery,
      response: { 200: ClientasResponse, ...errorResponses },
    },
  }, async (req) => clientasPage(db, tenant(req), req.query, now(), search));

  app.get('/api/v1/llamadas', {
    schema: {
      tags: ['llamadas'],
      summary: "List calls answered by the clinic's voice assistant",
      description: 'Newest first (fecha_hora descending, then id descending).',
      querystring: LlamadasQuery,
      response: { 200: LlamadasResponse, ...errorResponses },
    },
  }, async (req) => llamadasPage(db, tenant(req), req.query, now()));
}
