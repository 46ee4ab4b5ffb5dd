// The collections the API serves and the import writes, one descriptor each (./citas.ts,
// ./clientas.ts, ./llamadas.ts: schemas, scope, contact fields, columns, count table, import
// line). Every list, union and map of the collections is derived here from COLLECTIONS; the rest
// of the code iterates them. Adding a collection: docs/architecture.md, "Add a collection".
import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from '../domain/schema-parts.js';
import { citas } from './citas.js';
import { clientas } from './clientas.js';
import { llamadas } from './llamadas.js';
import type { Column } from './parts.js';

export type { Column } from './parts.js';
export type { CitaRecord } from './citas.js';
export type { ClientaRecord } from './clientas.js';
export type { LlamadaRecord } from './llamadas.js';

/** The collections in the API's order (paths, scopes, the OpenAPI document). */
export const COLLECTIONS = { citas, clientas, llamadas } as const;

export type CollectionName = keyof typeof COLLECTIONS;
export type Collection = (typeof COLLECTIONS)[CollectionName];
/** A collection's singular: its import lines' type, its events' prefix. */
export type RecordType = Collection['singular'];

const entries = <V>(f: (c: Collection) => V) => Object.fromEntries(Object.values(COLLECTIONS).map((c) => [c.name, f(c)]));
const bySingular = <V>(f: (c: Collection) => V) => Object.fromEntries(Object.values(COLLECTIONS).map((c) => [c.singular, f(c)]));

export const COLLECTION_NAMES = Object.keys(COLLECTIONS) as CollectionName[];

/** A map of every collection to `f` of it, in COLLECTIONS order. */
export function byCollection<V>(f: (c: Collection) => V): Record<CollectionName, V> {
  return entries(f) as Record<CollectionName, V>;
}

/** The collections in the order a write applies them: those referred to before those that refer to them. */
export const WRITE_ORDER: readonly CollectionName[] = [...COLLECTION_NAMES].sort(
  (a, b) => Number(COLLECTIONS[a].refersTo !== null) - Number(COLLECTIONS[b].refersTo !== null),
);

/** A map of every collection to `f` of it, its keys in write order. */
export function inWriteOrder<V>(f: (c: Collection) => V): Record<CollectionName, V> {
  return Object.fromEntries(WRITE_ORDER.map((n) => [n, f(COLLECTIONS[n])])) as Record<CollectionName, V>;
}

/** The collection of each record type. */
export const NAME_OF = bySingular((c) => c.name) as { [C in Collection as C['singular']]: C['name'] };
/** The record type of each collection. */
export const SINGULAR_OF = entries((c) => c.singular) as { [C in Collection as C['name']]: C['singular'] };

/** The collection the others refer to (clienta_id), and those that refer to it, in write order. */
export type ReferredName = NonNullable<Collection['refersTo']>;
export type ReferringName = { [N in CollectionName]: (typeof COLLECTIONS)[N]['refersTo'] extends null ? never : N }[CollectionName];
export const REFERRED = WRITE_ORDER.find((n) => WRITE_ORDER.some((m) => COLLECTIONS[m].refersTo === n)) as ReferredName;
export const REFERRING = WRITE_ORDER.filter((n) => COLLECTIONS[n].refersTo !== null) as ReferringName[];

// --- The event log ---

export const EVENT_ACTIONS = ['creada', 'actualizada', 'eliminada'] as const;
export type EventType = `${RecordType}.${(typeof EVENT_ACTIONS)[number]}`;
/** The types of the event log's events: record type, then what happened to it (in write order). */
export const EVENT_TYPES: readonly EventType[] = WRITE_ORDER.flatMap((n) =>
  EVENT_ACTIONS.map((a): EventType => `${COLLECTIONS[n].singular}.${a}`),
);
/** The collection of an event type. */
export function collectionOfEvent(tipo: EventType): Collection {
  return COLLECTIONS[NAME_OF[tipo.slice(0, tipo.indexOf('.')) as RecordType]];
}

// --- The import format ---

/** The record types of the format, in write order. */
export const LINE_TYPES: readonly RecordType[] = WRITE_ORDER.map((n) => COLLECTIONS[n].singular);
export type LineType = RecordType;
export const LINE_SCHEMAS = bySingular((c) => c.line) as { [C in Collection as C['singular']]: C['line'] };

/** A deletion line: `{"type": ..., "id": ..., "deleted": true}` and nothing else. */
export const DeletionLine = Type.Object(
  {
    type: Type.Unsafe<string>({ type: 'string', enum: [...LINE_TYPES] }),
    id: Uuid,
    deleted: Type.Literal(true),
  },
  { additionalProperties: false },
);

/** A record as the import format gives it, typed by its collection (`type`). */
export type ImportRecord = ReturnType<Collection['fromLine']>;
/** An import line that deletes a record: `{"type": "cita", "id": "...", "deleted": true}`. */
export interface DeletionRecord {
  type: RecordType;
  id: string;
  deleted: true;
}

// --- The API ---

/** A collection's record as the API shows it. */
export type ApiRecord<N extends CollectionName> = Static<(typeof COLLECTIONS)[N]['record']>;
/** A collection's list query and list answer. */
export type ListQuery<N extends CollectionName> = Static<(typeof COLLECTIONS)[N]['query']>;
export type ListAnswer<N extends CollectionName> = Static<(typeof COLLECTIONS)[N]['list']>;

/** Page sizes when `limit` is left out. */
export const DEFAULT_LIMITS = entries((c) => c.defaultLimit) as Record<CollectionName, number>;
/** The scope that reads each collection (and its single records). */
export const RESOURCE_SCOPES = entries((c) => c.scope) as { [C in Collection as C['name']]: C['scope'] };
/** The fields that are null for a key without contacto:read, by record type. */
export const CONTACT_FIELDS = bySingular((c) => c.contactFields) as { [C in Collection as C['singular']]: C['contactFields'] };

/** The collections in running text: "appointments (citas), clients (clientas) and ...". */
export const COLLECTIONS_PROSE = ((p: string[]) => `${p.slice(0, -1).join(', ')} and ${p[p.length - 1]}`)(
  Object.values(COLLECTIONS).map((c) => c.prose),
);

// --- The tables ---

/** The record tables' columns after (clinic_id, id) and before updated_at: what a line of the import sets. */
export const RECORD_COLUMNS = entries((c): readonly Column[] => c.columns) as Record<CollectionName, readonly Column[]>;
