// The MCP server's tools: each is a REST endpoint spoken in another protocol. Its input schema is
// the route's query (or path) schema, its output schema the route's 200 body (./schemas.ts), it
// runs the route's own use-case (services/listings.ts, records.ts, feed.ts, me.ts) with the same
// plan, defaults, ordering, paging and time zone, and answers the route's body as
// `structuredContent` with a text rendering beside it (./render.ts). `search` and `fetch`, for
// ChatGPT's connectors, are in ./search.ts.
//
// Descriptions are written for a language model choosing a tool: what it returns, in which time
// zone (the clinic's, named: they are written per clinic), how to page, what `total` means.
// Slightly over 300 lines: those descriptions, one per tool, are most of it.
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { EventosList, EventosQuery, Me, MeQuery, RecordParams, type EventosQuery as EventosQueryT } from '../../domain/api-schemas.js';
import { Cita, CitasList, CitasQuery } from '../../collections/citas.js';
import { Clienta, ClientasList, ClientasQuery } from '../../collections/clientas.js';
import { Llamada, LlamadasList, LlamadasQuery } from '../../collections/llamadas.js';
import { ESTADOS, RESULTADOS } from '../../domain/records.js';
import { hasScope, RESOURCE_SCOPES, type Scope } from '../../domain/scopes.js';
import type { AuthenticatedKey } from '../../services/api-keys.js';
import type { ClientasSearch } from '../../services/clientas-search/search.js';
import { feedBounds, feedPage, planFeed } from '../../services/feed.js';
import {
  planCitas,
  planClientas,
  planLlamadas,
  plannedCitasPage,
  plannedClientasPage,
  plannedLlamadasPage,
  type ClinicContext,
} from '../../services/listings.js';
import { whoAmI } from '../../services/me.js';
import { citaRead, clientaRead, llamadaRead } from '../../services/records.js';
import { compileArgs, type ArgsResult } from './args.js';
import { citasText, citaText, clientasText, clientaText, eventosText, llamadasText, llamadaText, meText } from './render.js';
import { standalone, type JsonSchema } from './schemas.js';

/** What every tool call runs on: the app's database and client search, the key's rate limit. */
export interface ToolEnv {
  db: Kysely<DB>;
  search: ClientasSearch;
  rateLimit: { rate: number; burst: number };
}

/** One call's context: the request (for the log's disclosure), the key and its clinic, "now". */
export interface ToolCall {
  req: FastifyRequest;
  key: AuthenticatedKey;
  ctx: ClinicContext;
  clinicName: string;
  nowMs: number;
  /** `https://host` of the request, for the records' URLs; '' when unknown (URLs are then relative) */
  origin: string;
  /** the tools this key may use, by name (get_clinic lists them) */
  visible: readonly string[];
}

/** A tool's answer: the REST body, its text, and what it disclosed (records, clientas). */
export interface ToolAnswer {
  structured: Record<string, unknown>;
  text: string;
  records: number;
  clientas: readonly string[];
}

/** A refusal a model can act on (./server.ts answers it with isError: true). */
export class ToolRefusal extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export interface ToolSpec {
  name: string;
  title: string;
  /** null: any key; 'any-record': a key that may read one kind of record at least (fetch) */
  scope: Scope | null | 'any-record';
  /** `tz`: the clinic's time zone; `contact`: whether the key sees contact details (contacto:read) */
  describe: (view: { tz: string; contact: boolean }) => string;
  input: TObject;
  output: TSchema;
  /** true: the text is the JSON of the result (ChatGPT's search and fetch read it so) */
  jsonText?: boolean;
  run: (args: Record<string, unknown>, call: ToolCall, env: ToolEnv) => Promise<ToolAnswer>;
}

/** A tool ready to list and call: its schemas as published, its arguments' check compiled once. */
export interface Tool extends ToolSpec {
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  check: (args: Record<string, unknown> | undefined) => ArgsResult;
}

export function prepare(spec: ToolSpec): Tool {
  return {
    ...spec,
    inputSchema: standalone(spec.input) as JsonSchema & { type: 'object' },
    outputSchema: standalone(spec.output) as JsonSchema & { type: 'object' },
    check: compileArgs(spec.name, spec.input),
  };
}

const READ_RECORDS: readonly Scope[] = Object.values(RESOURCE_SCOPES);

/** Whether `key` may see and call `tool`: every scope decision of the MCP server is this one, or a record kind's in ./search.ts. */
export function mayUse(key: AuthenticatedKey, tool: Pick<ToolSpec, 'scope'>): boolean {
  if (tool.scope === null) return true;
  if (tool.scope === 'any-record') return READ_RECORDS.some((s) => hasScope(key.scopeBits, s));
  return hasScope(key.scopeBits, tool.scope);
}

/** The key's view of the records: with contact details (contacto:read) or with them null. */
export function seesContact(call: Pick<ToolCall, 'key'>): boolean {
  return hasScope(call.key.scopeBits, 'contacto:read');
}

const PAGING =
  'Paging: at most `limit` records from `offset` (default 0); `total` is the number of ALL records that match, whatever limit and ' +
  'offset, so while offset + returned < total there are more, from offset + returned on.';
const UPDATED_SINCE =
  'With updated_since (an RFC 3339 instant): only records changed since then, ordered by that change, with no default window.';

function notFound(kind: 'cita' | 'clienta' | 'llamada', id: string, from: string): ToolRefusal {
  return new ToolRefusal(`No ${kind} with id ${id} in this clinic. Ids come from ${from}.`, 'not_found');
}

/** The clienta whose data a record read holds, for the request log (none: an unknown caller's call). */
const whose = (found: { clientaId: string | null }): string[] => (found.clientaId === null ? [] : [found.clientaId]);

const fields = <T extends object>(q: T) => q as Record<string, string | undefined>;

export const TOOL_SPECS: ToolSpec[] = [
  {
    name: 'get_clinic',
    title: 'The clinic, its time zone, and this connection',
    scope: null,
    describe: ({ tz }) =>
      'Who this connection is: the clinic whose data every other tool reads (name, id, IANA time zone, currency), the API key in use ' +
      "(name, created, expiry), its rate limit and its mode (live data, or a test key's synthetic sandbox). Takes no arguments. " +
      `Every date of the other tools is a calendar day in the clinic's time zone (${tz}), and every time carries that zone's UTC offset.`,
    input: MeQuery,
    output: Me,
    run: async (_args, call, env) => {
      const me = whoAmI(call.key, env.rateLimit);
      return { structured: me, text: meText(me, call.visible), records: 0, clientas: [] };
    },
  },
  {
    name: 'list_citas',
    title: 'Appointments (citas) over a range of days',
    scope: 'citas:read',
    describe: ({ tz }) =>
      "The clinic's appointments (citas), oldest first (by start time, then id). desde and hasta are calendar days in the clinic's " +
      `time zone (${tz}), both included; without them: today to today + 30 days. estado filters the status (${ESTADOS.join(', ')}). Each ` +
      "appointment: its start (RFC 3339 with the clinic's UTC offset), the client's current name and phone, service, minutes, price and " +
      `currency, status, professional, site, notes and id. ${PAGING} Default limit 100, at most 500. ${UPDATED_SINCE}`,
    input: CitasQuery,
    output: CitasList,
    run: async (args, call, env) => {
      const q = args as CitasQuery;
      let clientas: string[] = [];
      const page = await plannedCitasPage(
        env.db,
        call.ctx,
        planCitas(call.ctx, q, call.nowMs, seesContact(call)),
        (ids) => (clientas = ids),
      );
      return { structured: page, text: citasText(page, call.ctx.timezone, fields(q)), records: page.citas.length, clientas };
    },
  },
  {
    name: 'get_cita',
    title: 'One appointment (cita) by its id',
    scope: 'citas:read',
    describe: ({ tz }) =>
      'One appointment (cita) by its id (a UUID from list_citas, search or list_eventos), with the fields list_citas gives, times in the ' +
      `clinic's time zone (${tz}). An id this clinic does not have is an error.`,
    input: RecordParams,
    output: Cita,
    run: async (args, call, env) => {
      const id = args.id as string;
      const found = await citaRead(env.db, call.ctx, id, seesContact(call));
      if (found === null) throw notFound('cita', id, 'list_citas, search or list_eventos');
      return { structured: found.record, text: citaText(found.record, call.ctx.timezone), records: 1, clientas: whose(found) };
    },
  },
  {
    name: 'list_clientas',
    title: 'Clients (clientas): list and search',
    scope: 'clientas:read',
    describe: ({ tz, contact }) =>
      "The clinic's clients (clientas), all or those q matches, by name (case- and accent-insensitive), then id. " +
      (contact
        ? "q finds part of the name ('maria' finds 'María José') or digits of the phone ('600 12'); "
        : "q finds part of the name ('maria' finds 'María José'), never phone digits (this key does not see contact details); ") +
      "vip 'true' or 'false' keeps VIP or non-VIP clients only. Each client: name, phone, e-mail, language, VIP, how many appointments " +
      '(every status) and calls she has, the day of her latest appointment that has started, the time of her latest call, client since, ' +
      `id; days and times in the clinic's time zone (${tz}). ${PAGING} Default limit 200, at most 500. ${UPDATED_SINCE}`,
    input: ClientasQuery,
    output: ClientasList,
    run: async (args, call, env) => {
      const q = args as ClientasQuery;
      let clientas: string[] = [];
      const page = await plannedClientasPage(
        env.db,
        call.ctx,
        planClientas(q, seesContact(call)),
        call.nowMs,
        env.search,
        (ids) => (clientas = ids),
      );
      return { structured: page, text: clientasText(page, fields(q)), records: page.clientas.length, clientas };
    },
  },
  {
    name: 'get_clienta',
    title: 'One client (clienta) by her id',
    scope: 'clientas:read',
    describe: ({ tz }) =>
      'One client (clienta) by her id (a UUID from list_clientas, search or list_eventos), with the fields list_clientas gives, as of ' +
      `now; days and times in ${tz}. An id this clinic does not have is an error.`,
    input: RecordParams,
    output: Clienta,
    run: async (args, call, env) => {
      const id = args.id as string;
      const found = await clientaRead(env.db, call.ctx, id, call.nowMs, seesContact(call));
      if (found === null) throw notFound('clienta', id, 'list_clientas, search or list_eventos');
      return { structured: found.record, text: clientaText(found.record, call.ctx.timezone), records: 1, clientas: whose(found) };
    },
  },
  {
    name: 'list_llamadas',
    title: "Calls (llamadas) answered by the clinic's voice assistant",
    scope: 'llamadas:read',
    describe: ({ tz }) =>
      "The phone calls the clinic's voice assistant answered (llamadas), newest first (by time, then id). desde and hasta are " +
      `calendar days in the clinic's time zone (${tz}), both included; without them: the last 7 days up to now. resultado filters the ` +
      `outcome: ${RESULTADOS.join(', ')} (agendada: booked an appointment; cancelada: cancelled one; info: asked for information; ` +
      "transferida: passed to the staff; sin_accion: nothing done). Each call: its time (RFC 3339 with the clinic's UTC offset), the " +
      `client's name (null for an unknown caller), the caller's number, seconds, outcome, language, id. ${PAGING} Default limit 100, ` +
      `at most 500. ${UPDATED_SINCE}`,
    input: LlamadasQuery,
    output: LlamadasList,
    run: async (args, call, env) => {
      const q = args as LlamadasQuery;
      let clientas: string[] = [];
      const page = await plannedLlamadasPage(
        env.db,
        call.ctx,
        planLlamadas(call.ctx, q, call.nowMs, seesContact(call)),
        (ids) => (clientas = ids),
      );
      return { structured: page, text: llamadasText(page, call.ctx.timezone, fields(q)), records: page.llamadas.length, clientas };
    },
  },
  {
    name: 'get_llamada',
    title: 'One call (llamada) by its id',
    scope: 'llamadas:read',
    describe: ({ tz }) =>
      'One call (llamada) by its id (a UUID from list_llamadas, search or list_eventos), with the fields list_llamadas gives, times in ' +
      `${tz}. An id this clinic does not have is an error.`,
    input: RecordParams,
    output: Llamada,
    run: async (args, call, env) => {
      const id = args.id as string;
      const found = await llamadaRead(env.db, call.ctx, id, seesContact(call));
      if (found === null) throw notFound('llamada', id, 'list_llamadas, search or list_eventos');
      return { structured: found.record, text: llamadaText(found.record, call.ctx.timezone), records: 1, clientas: whose(found) };
    },
  },
  {
    name: 'list_eventos',
    title: "The change feed (eventos): what changed in the clinic's records",
    scope: 'eventos:read',
    describe: ({ tz }) =>
      "The changes of the clinic's records, oldest first: every appointment, client or call created, changed or deleted is an event " +
      '(tipo, e.g. cita.creada, clienta.actualizada, llamada.eliminada) with the record as it was then (datos). Without cursor: from the ' +
      "oldest event kept (at least 30 days); cursor 'now': from the present; cursor the next_cursor of an earlier answer: exactly the " +
      'events after it. has_more true: more events are waiting after next_cursor. tipo: a comma-separated list of event types to keep. ' +
      `limit: events per answer (default 100, at most 500). Times in the clinic's time zone (${tz}).`,
    input: EventosQuery,
    output: EventosList,
    run: async (args, call, env) => {
      const plan = planFeed(args as EventosQueryT, call.ctx.clinicId, call.key.scopeBits);
      const bounds = await feedBounds(env.db, call.ctx.clinicId);
      // The page is the API's JSON text (each event's datos is kept as JSON): parsed once here.
      let clientas: string[] = [];
      const text = await feedPage(env.db, call.ctx, plan, bounds, undefined, (_n, ids) => (clientas = ids));
      const page = JSON.parse(text) as Static<typeof EventosList>;
      return { structured: page, text: eventosText(page, call.ctx.timezone), records: page.eventos.length, clientas };
    },
  },
];
