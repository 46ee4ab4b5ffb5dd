// GET /api/v1/citas, /clientas, /llamadas and /me. The tenant comes from the key (req.apiKey),
// never from the request. With the TypeBox type provider, each handler's `req.query` is typed
// from its querystring schema and its return value checked against its 200 schema.
//
// Each operation has an operationId (verb + resource: list<Plural> for a collection, get<Thing>
// for one object), one tag (its resource, described in plugins/openapi.ts), a summary, a
// description that ends with its examples (../code-samples.ts), and its responses from
// apiResponses() (../route-responses.ts).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import {
  CitasList, CitasQuery, ClientasList, ClientasQuery, LlamadasList, LlamadasQuery, Me, MeQuery,
} from '../../domain/api-schemas.js';
import type { AuthenticatedKey } from '../../services/api-keys.js';
import { citasPage, clientasPage, llamadasPage, type ClinicContext } from '../../services/listings.js';
import { ClientasSearch } from '../../services/clientas-search/search.js';
import { whoAmI } from '../../services/me.js';
import { samplesMarkdown, type SampleRequest } from '../code-samples.js';
import { apiResponses } from '../route-responses.js';

export const API_PATHS = ['/api/v1/citas', '/api/v1/clientas', '/api/v1/llamadas', '/api/v1/me'] as const;

/** The request each operation's examples make (they must return data on the demo clinic). */
export const SAMPLES = {
  listCitas: { path: '/api/v1/citas', query: { estado: 'confirmada' }, print: ['total'] },
  listClientas: { path: '/api/v1/clientas', query: { q: 'maria' }, print: ['total'] },
  listLlamadas: { path: '/api/v1/llamadas', query: { resultado: 'agendada' }, print: ['total'] },
  getMe: { path: '/api/v1/me', print: ['clinica', 'nombre'] },
} as const satisfies Record<string, SampleRequest>;

const describe = (text: string, sample: SampleRequest) => `${text}\n\n${samplesMarkdown(sample)}`;

function authenticated(req: FastifyRequest): AuthenticatedKey {
  const k = req.apiKey;
  // The auth hook runs before every route here; reaching this without a key is a bug.
  if (!k) throw new Error('route reached without an authenticated key');
  return k;
}

function tenant(req: FastifyRequest): ClinicContext {
  const k = authenticated(req);
  return { clinicId: k.clinicId, timezone: k.timezone, currency: k.currency };
}

export interface V1Options {
  db: Kysely<DB>;
  now: () => number;
  /** the per-key rate limit, for /me */
  rateLimit: { rate: number; burst: number };
}

export async function v1Routes(fastify: FastifyInstance, opts: V1Options) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, now } = opts;
  // One client search per app: it keeps the counts of searches (services/clientas-search/).
  const search = new ClientasSearch();

  app.get('/api/v1/citas', {
    schema: {
      operationId: 'listCitas',
      tags: ['citas'],
      summary: 'List appointments in a date range',
      description: describe(
        "Whole local days in the clinic's time zone, both ends inclusive (default: today to today + 30 days); ordered by fecha_hora, then id.",
        SAMPLES.listCitas,
      ),
      querystring: CitasQuery,
      response: apiResponses({ body: CitasList, description: 'A page of appointments, with the range applied' }),
    },
  }, async (req) => citasPage(db, tenant(req), req.query, now()));

  app.get('/api/v1/clientas', {
    schema: {
      operationId: 'listClientas',
      tags: ['clientas'],
      summary: 'List and search clients',
      description: describe('Ordered by name (case- and accent-insensitive), then id. `q` searches the name, or the phone when it is made of digits.', SAMPLES.listClientas),
      querystring: ClientasQuery,
      response: apiResponses({ body: ClientasList, description: 'A page of clients' }),
    },
  }, async (req) => clientasPage(db, tenant(req), req.query, now(), search));

  app.get('/api/v1/llamadas', {
    schema: {
      operationId: 'listLlamadas',
      tags: ['llamadas'],
      summary: "List calls answered by the clinic's voice assistant",
      description: describe('Newest first (fecha_hora descending, then id descending); default: the last 7 days.', SAMPLES.listLlamadas),
      querystring: LlamadasQuery,
      response: apiResponses({ body: LlamadasList, description: 'A page of calls, with the days applied' }),
    },
  }, async (req) => llamadasPage(db, tenant(req), req.query, now()));

  app.get('/api/v1/me', {
    schema: {
      operationId: 'getMe',
      tags: ['me'],
      summary: 'Who the API key is (test the connection)',
      description: describe(
        "The key's clinic, the key itself (never its secret) and its rate limit: the call an integration platform makes to test a connection. Takes no parameters.",
        SAMPLES.getMe,
      ),
      querystring: MeQuery,
      response: apiResponses({ body: Me, description: "The key's clinic, the key and its rate limit" }),
    },
  }, async (req) => whoAmI(authenticated(req), opts.rateLimit));
}
