// The tools' input and output schemas, derived from the API's own (domain/api-schemas.ts): a
// tool's parameters are its REST route's, with the same rules, and its result has the shape of
// the REST answer. Only `search` and `fetch`, which have no REST route, are defined here, in the
// shapes ChatGPT's connectors expect, their rules taken from the API's where they share one.
//
// MCP clients compile each tool's schemas on their own (the official SDK's client with Ajv), so a
// published schema must stand alone: the API's named schemas point at each other by `$ref`
// (`Cita` in `CitasList`), which standalone() replaces by the schema pointed at; and no `$id` may
// remain (two tools' output schemas would declare the same id to one Ajv, which refuses that).
// A nullable value is written as `anyOf` of its type and `null`: the API's OpenAPI 3.1 document
// says `type: ["string", "null"]` (its serializer's form), which is JSON Schema too, but clients that
// map tool schemas onto a one-type dialect (Gemini's function declarations) drop or refuse it, and
// the MCP Inspector warns about it; `anyOf` accepts exactly the same values.
import { Type, type TSchema } from '@sinclair/typebox';
import { API_COMPONENTS } from '../../domain/api-schemas.js';
import { ClientasQuery } from '../../collections/clientas.js';
import { COLLECTIONS, LINE_TYPES } from '../../collections/index.js';

export type JsonSchema = { [key: string]: unknown };

const NAMED = new Map<string, TSchema>(API_COMPONENTS.map((s) => [s.$id!, s]));

function inline(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(inline);
  if (node === null || typeof node !== 'object') return node;
  const { $ref, ...rest } = node as JsonSchema;
  if (typeof $ref === 'string') {
    const target = NAMED.get($ref);
    if (!target) throw new Error(`no named schema ${$ref}`);
    return { ...(inline(JSON.parse(JSON.stringify(target))) as JsonSchema), ...(inline(rest) as JsonSchema) };
  }
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(rest)) if (k !== '$id') out[k] = inline(v);
  return nullableAsAnyOf(out);
}

/** What describes a value as a whole: kept beside `anyOf`, not in one of its branches. */
const ANNOTATIONS = new Set(['title', 'description', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly', '$comment']);

/**
 * `{type: [T, "null"], ...}` as `{anyOf: [{type: T, ...}, {type: "null"}]}`, the annotations
 * (description, examples) outside, T's own keywords (format, pattern, enum, minimum...) in its
 * branch; any other schema node as it is. Not recursive: standalone() applies it to every node.
 */
export function nullableAsAnyOf(node: JsonSchema): JsonSchema {
  const { type, ...rest } = node;
  if (!Array.isArray(type) || !type.includes('null')) return node;
  const outer: JsonSchema = {};
  const own: JsonSchema = {};
  for (const [k, v] of Object.entries(rest)) (ANNOTATIONS.has(k) ? outer : own)[k] = v;
  const branches = type.filter((t) => t !== 'null').map((t) => ({ type: t, ...own }));
  return { ...outer, anyOf: [...branches, { type: 'null' }] };
}

/**
 * A TypeBox schema as plain, self-contained JSON Schema: TypeBox's own (symbol) keys dropped by
 * the JSON round trip, every `$ref` to a named schema of the API replaced by that schema, no `$id`.
 */
export function standalone(schema: TSchema): JsonSchema {
  return inline(JSON.parse(JSON.stringify(schema))) as JsonSchema;
}

/** The kinds of record `fetch` reads, by the prefix of their ids (`cita:<uuid>`). */
export const RECORD_KINDS = Object.values(COLLECTIONS).map((c) => c.singular);
export type RecordKind = (typeof RECORD_KINDS)[number];

/** The ids search and fetch speak, `<type>:<uuid>` for each record type in write order, in words. */
export const ID_FORMS = ((forms: string[]) => `${forms.slice(0, -1).join(', ')} or ${forms[forms.length - 1]}`)(
  LINE_TYPES.map((t) => `${t}:<uuid>`),
);

const q = ClientasQuery.properties.q;

/** search: ChatGPT's shape (one `query`), with the rules of the clients list's `q`. */
export const SearchInput = Type.Object(
  {
    query: Type.String({
      minLength: q.minLength,
      maxLength: q.maxLength,
      description:
        "A client's name or part of it (case- and accent-insensitive: 'maria' finds 'María'), or digits of her phone number ('600 12')",
    }),
  },
  { additionalProperties: false },
);

export const SearchOutput = Type.Object({
  results: Type.Array(
    Type.Object({
      id: Type.String({ description: `The id to pass to fetch: ${ID_FORMS}` }),
      title: Type.String(),
      url: Type.String({ description: "The record's address in the REST API (GET it with the same key)" }),
    }),
  ),
});

/** fetch: ChatGPT's shape (one `id`, as search returned it). */
export const FetchInput = Type.Object(
  {
    id: Type.String({
      minLength: 1,
      maxLength: 100,
      description: `An id as search returns it: ${ID_FORMS} (a bare UUID is looked up in all three)`,
    }),
  },
  { additionalProperties: false },
);

export const FetchOutput = Type.Object({
  id: Type.String(),
  title: Type.String(),
  text: Type.String({ description: 'The whole record, written out' }),
  url: Type.String(),
  metadata: Type.Object({
    tipo: Type.Unsafe<RecordKind>({ type: 'string', enum: [...RECORD_KINDS] }),
    zona_horaria: Type.String({ description: "The clinic's IANA time zone: the record's dates and times are in it" }),
    updated_at: Type.String({ format: 'date-time' }),
  }),
});
