// `search` and `fetch` in the shapes ChatGPT's connectors (deep research, developer mode) expect:
// search(query) -> { results: [{ id, title, url }] }, fetch(id) -> { id, title, text, url,
// metadata }, each answered as ONE text item holding that object's JSON (which is what they read),
// and as structuredContent too. search finds clients by name or phone digits: the clients list's
// `q`, with its rules and view. An id names a record and its kind, `<type>:<uuid>` (`clienta:<uuid>`
// ...; a bare UUID is looked up in every kind the key may read); its url is the record's address in
// the REST API, readable with the same key.
import { UUID_RE } from '../../domain/records.js';
import { COLLECTIONS, LINE_TYPES, NAME_OF } from '../../collections/index.js';
import { hasScope, type Scope } from '../../domain/scopes.js';
import { DomainError } from '../../errors.js';
import { planClientas, plannedClientasPage } from '../../services/listings.js';
import { readRecord } from '../../services/records.js';
import { RECORD_RENDERINGS, type RecordRendering } from './render.js';
import { FetchInput, FetchOutput, ID_FORMS, RECORD_KINDS, SearchInput, SearchOutput, type RecordKind } from './schemas.js';
import { seesContact, ToolRefusal, type ToolCall, type ToolEnv, type ToolSpec } from './tools.js';

/** Results per search: a first page of matches, each to be fetched. */
export const SEARCH_RESULTS = 20;

const SCOPE_OF = (kind: RecordKind): Scope => COLLECTIONS[NAME_OF[kind]].scope;
/** A bare UUID is looked up in write order: the record the others refer to first (a client is what a search finds). */
const LOOKUP_ORDER: readonly RecordKind[] = LINE_TYPES;
const ID_RE = new RegExp(`^(${RECORD_KINDS.join('|')}):(.+)$`);

function recordUrl(call: ToolCall, kind: RecordKind, id: string): string {
  return `${call.origin}/api/v1/${NAME_OF[kind]}/${id}`;
}

interface Found {
  kind: RecordKind;
  id: string;
  title: string;
  text: string;
  updatedAt: string;
  /** whose data the record holds, for the request log */
  clienta: string | null;
}

async function read(kind: RecordKind, id: string, call: ToolCall, env: ToolEnv): Promise<Found | null> {
  const name = NAME_OF[kind];
  const found = await readRecord(env.db, name, call.ctx, id, call.nowMs, seesContact(call));
  if (found === null) return null;
  const r = found.record;
  const rendering = RECORD_RENDERINGS[name] as RecordRendering<typeof r>;
  return {
    kind,
    id: r.id,
    title: rendering.title(r),
    text: rendering.text(r, call.ctx.timezone),
    updatedAt: r.updated_at,
    clienta: found.clientaId,
  };
}

function refuseScope(kind: RecordKind): ToolRefusal {
  return new ToolRefusal(
    `This API key does not have the scope ${SCOPE_OF(kind)}, which reading a ${kind} needs; ` +
      'the clinic owner can grant it in the dashboard (Settings > API).',
    'insufficient_scope',
  );
}

export const SEARCH_SPECS: ToolSpec[] = [
  {
    name: 'search',
    title: "Search the clinic's clients",
    scope: 'clientas:read',
    jsonText: true,
    describe: ({ contact }) =>
      "The clinic's clients (clientas) whose name (case- and accent-insensitive, any part of it)" +
      (contact
        ? ' or digits of their phone number match query: '
        : ' matches query (not phone numbers: this key does not see contact details): ') +
      `up to ${SEARCH_RESULTS}, by name, each with an id that fetch reads in full. list_clientas gives every match with paging and ` +
      'counts; list_citas and list_llamadas give appointments and calls.',
    input: SearchInput,
    output: SearchOutput,
    run: async (args, call, env) => {
      const query = args.query as string;
      if (query.trim() === '')
        throw new DomainError('invalid_input', 'query must hold a name, or digits of a phone number', { field: 'query' });
      const page = await plannedClientasPage(
        env.db,
        call.ctx,
        planClientas({ q: query, limit: SEARCH_RESULTS }, seesContact(call)),
        call.nowMs,
        env.search,
      );
      const results = page.clientas.map((c) => ({
        id: `clienta:${c.id}`,
        title: `${c.nombre}${c.vip ? ' (VIP client)' : ' (client)'}`,
        url: recordUrl(call, 'clienta', c.id),
      }));
      return { structured: { results }, text: '', records: results.length, clientas: page.clientas.map((c) => c.id) };
    },
  },
  {
    name: 'fetch',
    title: 'One record, written out in full',
    scope: 'any-record',
    jsonText: true,
    describe: ({ tz }) =>
      'The whole record of an id that search returned (clienta:<uuid>), or of an appointment, client or call by kind and id ' +
      `(${RECORD_KINDS.map((k) => `${k}:<uuid>`).join(', ')}; a bare UUID is looked up in every kind), as text, with the link to it ` +
      `in the REST API. Times in the clinic's time zone (${tz}).`,
    input: FetchInput,
    output: FetchOutput,
    run: async (args, call, env) => {
      const raw = (args.id as string).trim();
      const m = ID_RE.exec(raw);
      const uuid = m ? m[2]! : raw;
      if (!UUID_RE.test(uuid)) {
        throw new DomainError('invalid_input', `id must be an id as search returns it: ${ID_FORMS}`, {
          field: 'id',
        });
      }
      const id = uuid.toLowerCase();
      let kinds: readonly RecordKind[];
      if (m) {
        const kind = m[1] as RecordKind;
        if (!hasScope(call.key.scopeBits, SCOPE_OF(kind))) throw refuseScope(kind);
        kinds = [kind];
      } else {
        kinds = LOOKUP_ORDER.filter((k) => hasScope(call.key.scopeBits, SCOPE_OF(k)));
      }
      for (const kind of kinds) {
        const found = await read(kind, id, call, env);
        if (found === null) continue;
        const structured = {
          id: `${kind}:${found.id}`,
          title: found.title,
          text: found.text,
          url: recordUrl(call, kind, found.id),
          metadata: { tipo: kind, zona_horaria: call.ctx.timezone, updated_at: found.updatedAt },
        };
        return { structured, text: '', records: 1, clientas: found.clienta === null ? [] : [found.clienta] };
      }
      throw new ToolRefusal(
        `No ${m ? m[1] : 'record'} with id ${id} in this clinic. Ids come from search (or the list_* tools).`,
        'not_found',
      );
    },
  },
];
