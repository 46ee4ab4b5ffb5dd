// GET /api/v1/citas, /clientas, /llamadas, /eventos and /me, and one record of each list
// (./records.ts). The tenant comes from the key (req.apiKey), never from the request. With the
// TypeBox type provider, each handler's `req.query` is typed from its querystring schema and its
// return value checked against its 200 schema. Slightly over 300 lines: one route per list, each
// a few lines around the shared answerList.
//
// The lists and the feed are conditional GETs: each handler plans its request first (validation,
// defaults), then makes its ETag from the clinic's versions and answers 304 when the client has
// that page (../conditional.ts), else builds it. The lists also answer CSV when the client asks
// for text/csv (../csv.ts): the same page, its own tag, the total and the next page in headers.
//
// Each route declares the scope it needs in its config (`config: { scope }`, ../scopes.ts); the
// key's view of the records (contact details or not) is part of each plan, and so of its ETag.
//
// Each operation has an operationId (verb + resource: list<Plural> for a collection, get<Thing>
// for one object), one tag (its resource, described in plugins/openapi.ts), a summary, a
// description that ends with its examples (../code-samples.ts), and its responses from
// apiResponses() (../route-responses.ts).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { EventosList, EventosQuery, Me, MeQuery } from '../../domain/api-schemas.js';
import { CitasList, CitasQuery } from '../../collections/citas.js';
import { ClientasList, ClientasQuery } from '../../collections/clientas.js';
import { LlamadasList, LlamadasQuery } from '../../collections/llamadas.js';
import { hasScope } from '../../domain/scopes.js';
import type { AuthenticatedKey } from '../../services/api-keys.js';
import type { ClientasSearch } from '../../services/clientas-search/search.js';
import { listEtag, type ListResource } from '../../services/conditional.js';
import { feedBounds, feedEtag, feedPage, planFeed } from '../../services/feed.js';
import {
  planCitas,
  planClientas,
  planLlamadas,
  plannedCitasPage,
  plannedClientasPage,
  plannedLlamadasPage,
  type ClinicContext,
  type DisclosedClientas,
} from '../../services/listings.js';
import { whoAmI } from '../../services/me.js';
import type { PageCache } from '../../services/page-cache.js';
import { samplesMarkdown, type SampleRequest } from '../code-samples.js';
import { JSON_UTF8, sendCsvPage, sendPage } from '../cached-page.js';
import { answeredNotModified } from '../conditional.js';
import { disclose } from '../disclosure.js';
import { csvListPage, listFormat } from '../csv.js';
import { apiResponses, COMMON_HEADERS, NOT_MODIFIED, RATE_LIMIT_HEADERS } from '../route-responses.js';
import { addRecordRoute, RECORD_PATHS, RECORD_SAMPLES } from './records.js';

export const API_PATHS = ['/api/v1/citas', '/api/v1/clientas', '/api/v1/llamadas', '/api/v1/eventos', '/api/v1/me'] as const;
/** The paths with a path parameter, as routed (`/api/v1/citas/:id`). */
export { RECORD_PATHS };

/** The request each operation's examples make (they must return data on the demo clinic). */
export const SAMPLES = {
  listCitas: { path: '/api/v1/citas', query: { estado: 'confirmada' }, print: ['total'] },
  listClientas: { path: '/api/v1/clientas', query: { q: 'maria' }, print: ['total'] },
  listLlamadas: { path: '/api/v1/llamadas', query: { resultado: 'agendada' }, print: ['total'] },
  ...RECORD_SAMPLES,
  listEventos: { path: '/api/v1/eventos', query: { cursor: 'now' }, print: ['next_cursor'] },
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

/** Whether the request's key sees contact details (contacto:read). */
function seesContact(req: FastifyRequest): boolean {
  return hasScope(authenticated(req).scopeBits, 'contacto:read');
}

/** The lists' and the feed's 200 carry an ETag, and a matching If-None-Match is a 304. */
const CONDITIONAL = { headers: ['ETag' as const] };

/** A list's 200: conditional, JSON or CSV by Accept (Vary), and the CSV's paging headers. */
const LIST = {
  headers: [
    'ETag' as const,
    'Vary' as const,
    { name: 'X-Total-Count' as const, required: false as const },
    { name: 'Link' as const, required: false as const },
  ],
};
const csvDescription = (records: string) =>
  `With Accept: text/csv: the same page as CSV (RFC 4180, UTF-8, CRLF line ends): a header row with the fields of ${records} in the ` +
  `JSON's order, ` +
  'one row per record; null is an empty cell, true/false and numbers as in the JSON. The total is in X-Total-Count, the next page in ' +
  'Link (rel="next").';

/** The feed's own status: a position the log no longer has. */
const GONE = {
  410: {
    description:
      'cursor_expired: the cursor is older than the events kept (at least 30 days), or ahead of the log (a database restored from an ' +
      'earlier backup): read the collections again and follow from cursor=now',
    headers: [...COMMON_HEADERS, ...RATE_LIMIT_HEADERS],
  },
};

export interface V1Options {
  db: Kysely<DB>;
  now: () => number;
  /** the per-key rate limit, for /me */
  rateLimit: { rate: number; burst: number };
  /** the lists' built pages, by ETag */
  pages: PageCache;
  /** the app's client search (it keeps the counts of searches; services/clientas-search/) */
  search: ClientasSearch;
}

export async function v1Routes(fastify: FastifyInstance, opts: V1Options) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, now, pages, search } = opts;
  const records = { db, now, tenant, seesContact };

  /**
   * A list's answer once planned: JSON or CSV by the Accept header, each with its own ETag (304
   * from the tag alone), then the page from the cache or built. `applied` is the request's query
   * with the days the plan applied, from which the CSV's Link names the next page.
   */
  async function answerList<P extends Record<string, unknown>>(
    req: FastifyRequest,
    reply: FastifyReply,
    ctx: ClinicContext,
    resource: ListResource,
    plan: { key: string; limit: number; offset: number },
    nowMs: number,
    build: (disclosed: DisclosedClientas) => Promise<P>,
    applied: Record<string, unknown>,
  ): Promise<FastifyReply> {
    const format = listFormat(req.headers.accept);
    const etag = await listEtag(db, ctx, resource, plan.key, nowMs, format);
    reply.header('vary', 'Accept');
    if (answeredNotModified(req, reply, etag)) return reply;
    // The page's records and the clientas whose data they hold, kept with the page (the request log).
    const built = async () => {
      let clientas: string[] = [];
      const page = await build((ids) => (clientas = ids));
      const items = page[resource];
      return { page, disclosed: { records: Array.isArray(items) ? items.length : 0, clientas } };
    };
    if (format === 'json') return sendPage(reply, pages, ctx.clinicId, etag, built);
    return sendCsvPage(reply, pages, ctx.clinicId, etag, async () => {
      const b = await built();
      return { ...csvListPage(resource, b.page, plan, applied), disclosed: b.disclosed };
    });
  }

  app.get(
    '/api/v1/citas',
    {
      config: { scope: 'citas:read' },
      schema: {
        operationId: 'listCitas',
        tags: ['citas'],
        summary: 'List appointments in a date range',
        description: describe(
          "Whole local days in the clinic's time zone, both ends inclusive (default: today to today + 30 days); ordered by fecha_hora, " +
            'then id. ' +
            'With updated_since: the appointments changed since then (no default window), ordered by updated_at, then id. ' +
            'Send the ETag back as If-None-Match: 304 while nothing changed.',
          SAMPLES.listCitas,
        ),
        querystring: CitasQuery,
        response: apiResponses(
          { body: CitasList, description: 'A page of appointments, with the range applied', ...LIST, csv: csvDescription('Cita') },
          NOT_MODIFIED,
        ),
      },
    },
    async (req, reply) => {
      const ctx = tenant(req);
      const nowMs = now();
      const plan = planCitas(ctx, req.query, nowMs, seesContact(req));
      // The next page keeps the days applied, also when they were the default window.
      const applied = { ...req.query, desde: plan.desde, hasta: plan.hasta };
      return answerList(req, reply, ctx, 'citas', plan, nowMs, (d) => plannedCitasPage(db, ctx, plan, d), applied);
    },
  );
  addRecordRoute(app, records, 'citas');

  app.get(
    '/api/v1/clientas',
    {
      config: { scope: 'clientas:read' },
      schema: {
        operationId: 'listClientas',
        tags: ['clientas'],
        summary: 'List and search clients',
        description: describe(
          'Ordered by name (case- and accent-insensitive), then id. `q` searches the name, or the phone when it is made of digits ' +
            "(with contacto:read only: without it q matches names only, so no search can tell whether a phone number is a client's). " +
            'With updated_since: the clients changed since then, ordered by updated_at, then id. Send the ETag back as If-None-Match: ' +
            '304 while nothing changed.',
          SAMPLES.listClientas,
        ),
        querystring: ClientasQuery,
        response: apiResponses(
          { body: ClientasList, description: 'A page of clients', ...LIST, csv: csvDescription('Clienta') },
          NOT_MODIFIED,
        ),
      },
    },
    async (req, reply) => {
      const ctx = tenant(req);
      const nowMs = now();
      const plan = planClientas(req.query, seesContact(req));
      return answerList(req, reply, ctx, 'clientas', plan, nowMs, (d) => plannedClientasPage(db, ctx, plan, nowMs, search, d), req.query);
    },
  );
  addRecordRoute(app, records, 'clientas');

  app.get(
    '/api/v1/llamadas',
    {
      config: { scope: 'llamadas:read' },
      schema: {
        operationId: 'listLlamadas',
        tags: ['llamadas'],
        summary: "List calls answered by the clinic's voice assistant",
        description: describe(
          'Newest first (fecha_hora descending, then id descending); default: the last 7 days. ' +
            'With updated_since: the calls changed since then (no default window), ordered by updated_at, then id. Send the ETag back as ' +
            'If-None-Match: 304 while nothing changed.',
          SAMPLES.listLlamadas,
        ),
        querystring: LlamadasQuery,
        response: apiResponses(
          { body: LlamadasList, description: 'A page of calls, with the days applied', ...LIST, csv: csvDescription('Llamada') },
          NOT_MODIFIED,
        ),
      },
    },
    async (req, reply) => {
      const ctx = tenant(req);
      const nowMs = now();
      const plan = planLlamadas(ctx, req.query, nowMs, seesContact(req));
      const applied = { ...req.query, desde: plan.desde, hasta: plan.hasta };
      return answerList(req, reply, ctx, 'llamadas', plan, nowMs, (d) => plannedLlamadasPage(db, ctx, plan, d), applied);
    },
  );
  addRecordRoute(app, records, 'llamadas');

  app.get(
    '/api/v1/eventos',
    {
      config: { scope: 'eventos:read' },
      schema: {
        operationId: 'listEventos',
        tags: ['eventos'],
        summary: "Follow the clinic's changes: created, changed and deleted records, oldest first",
        description: describe(
          "Every change of the clinic's data is an event, in the order the changes were committed. Start with cursor=now " +
            "(then read the lists), and send each answer's next_cursor as the next cursor: you get exactly the events since, none " +
            'skipped. ' +
            'has_more: true means more are waiting now. Events are kept at least 30 days; an older cursor is 410 cursor_expired. ' +
            'A key sees only the event types of the collections its scopes may read (cita.* with citas:read, clienta.* with ' +
            'clientas:read, llamada.* with llamadas:read), ' +
            'and its cursor is complete for those; a tipo outside them is 403 insufficient_scope. ' +
            'Send the ETag back as If-None-Match: 304 while nothing happened.',
          SAMPLES.listEventos,
        ),
        querystring: EventosQuery,
        response: apiResponses({ body: EventosList, description: 'A page of events', ...CONDITIONAL }, { ...NOT_MODIFIED, ...GONE }),
      },
    },
    async (req, reply) => {
      const ctx = tenant(req);
      const plan = planFeed(req.query, ctx.clinicId, authenticated(req).scopeBits);
      const bounds = await feedBounds(db, ctx.clinicId);
      if (answeredNotModified(req, reply, feedEtag(ctx, plan, bounds))) return reply;
      // Already JSON (each event's datos is stored as JSON): sent as it is, not serialized again.
      // It is the JSON text of an EventosList, which the type of send() cannot say of a string.
      const page = (await feedPage(db, ctx, plan, bounds, undefined, (n, clientas) => disclose(req, n, clientas))) as unknown as Static<
        typeof EventosList
      >;
      return reply.type(JSON_UTF8).send(page);
    },
  );

  app.get(
    '/api/v1/me',
    {
      config: { scope: null },
      schema: {
        operationId: 'getMe',
        tags: ['me'],
        summary: 'Who the API key is (test the connection)',
        description: describe(
          "The key's clinic, the key itself (never its secret: its name, dates and scopes) and its rate limit: the call an integration " +
            'platform makes to test a connection. Needs no scope. Takes no parameters.',
          SAMPLES.getMe,
        ),
        querystring: MeQuery,
        response: apiResponses({ body: Me, description: "The key's clinic, the key and its rate limit" }),
      },
    },
    async (req) => whoAmI(authenticated(req), opts.rateLimit),
  );
}
