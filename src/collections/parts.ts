// What every collection's descriptor (one file each in this folder) holds, and the
// small helpers they share. A descriptor is plain data and pure functions: no database, no HTTP.
import type { TObject } from '@sinclair/typebox';
import type { ScopeText } from '../domain/scopes.js';
import { parseTimestamp } from '../time.js';

/** A column and its PostgreSQL type. */
export type Column = readonly [name: string, pgType: string];

/** An import line's values, as the line checker accepted them. */
export type LineValues = Record<string, unknown>;

/** A line's values as a record's: ids in lower case, absent as null, timestamps as epoch seconds. */
export const lineValue = {
  id: (v: unknown) => (v as string).toLowerCase(),
  orNull: <T>(v: T | undefined): T | null => (v === undefined ? null : v),
  seconds: (v: unknown) => parseTimestamp(v as string)!,
};

/** Everything that makes a collection that collection. */
export interface CollectionShape {
  /** the plural: its table, its path under /api/v1, its list's key, its scope's prefix */
  readonly name: string;
  /** the singular: its import lines' type, its events' prefix, its MCP ids' prefix */
  readonly singular: string;
  /** the collection its records' clienta_id points to (written before it), or null */
  readonly refersTo: string | null;
  /** whether its records are deleted with the record they refer to; else these fields are emptied (unlinked) */
  readonly deletedWithReferred: boolean;
  readonly unlinked: readonly string[];
  /** what its records show of the record they refer to: a change of these changes them too */
  readonly showsOfReferred: readonly string[];
  /** its words in running English text, e.g. "appointments (citas)" */
  readonly prose: string;
  /** the API's record, list query and list answer, and the import's line (TypeBox) */
  readonly record: TObject;
  readonly query: TObject;
  readonly list: TObject;
  readonly line: TObject;
  /** page size when `limit` is left out */
  readonly defaultLimit: number;
  readonly scope: string;
  readonly scopeText: ScopeText;
  /** the record's fields that are null for a key without contacto:read */
  readonly contactFields: readonly string[];
  /** the table's columns after (clinic_id, id) and before updated_at: what an import line sets */
  readonly columns: readonly Column[];
  /** its count table (the lists' totals) and the columns it counts by */
  readonly counts: { readonly table: string; readonly by: readonly string[] };
  /** the OpenAPI tag's description */
  readonly tag: string;
  /** GET /api/v1/<name>/{id}: its operation, summary, the record in words, what more to say, what its code sample prints */
  readonly one: {
    readonly operationId: string;
    readonly summary: string;
    readonly what: string;
    readonly extra: string;
    readonly print: readonly string[];
  };
  /** a checked import line as the record stored */
  fromLine(o: LineValues): { type: string; id: string };
  /** a record as the row of its table (without clinic_id and updated_at, which the write sets) */
  toRow(r: never, zone: string): Record<string, unknown>;
  /** a row of its table (id and `columns`) as its import line, timestamps written by `at` (the clinic export) */
  toLine(row: RowValues, at: (epochSeconds: number) => string): Record<string, unknown>;
}

/** A row as a query returns it (bigints may come back as strings on PostgreSQL, booleans as 0/1). */
export type RowValues = Record<string, unknown>;
