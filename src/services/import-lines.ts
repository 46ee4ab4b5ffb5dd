// One JSON Lines record of the import format (docs/import.md), checked by the one checker
// (domain/checker.ts) against its collection's line schema (src/collections/). Returns the typed
// record, or every problem of the line (at most one per field, in the format's order), phrased so
// an operator can fix the whole line in one round.
import {
  COLLECTIONS,
  DeletionLine,
  LINE_SCHEMAS,
  LINE_TYPES,
  NAME_OF,
  REFERRING,
  SINGULAR_OF,
  type DeletionRecord,
  type ImportRecord,
  type LineType,
} from '../collections/index.js';
import { compileChecker, type Checker } from '../domain/checker.js';
import { Language, TEXT_PATTERN } from '../domain/import-schemas.js';
import { Phone } from '../domain/schema-parts.js';
import { controlCharacterIn, textProblem } from '../domain/text.js';

type Obj = Record<string, unknown>;

const DERIVED = ['total_citas', 'total_llamadas', 'ultima_cita', 'ultima_llamada'];

/** One problem of a line: the field it is about (null for the whole line) and what to fix. */
export interface FieldProblem {
  field: string | null;
  reason: string;
  /** where it sorts among the line's problems: `type` first, then the format's order, then unknown fields */
  order: number;
}

interface FieldSchema {
  type?: string | string[];
  format?: string;
  pattern?: string;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

/** What is wrong with field `f`, from the keywords its value fails, in the format's words. */
function explain(f: string, s: FieldSchema, faults: ReadonlySet<string>): string {
  if (faults.has('required')) return `missing required field "${f}"`;
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'boolean') return `${f} must be true or false`;
  if (type === 'integer') return `${f} must be an integer from ${s.minimum} to ${s.maximum}`;
  if (type === 'number') {
    return faults.size === 1 && faults.has('multipleOf')
      ? `${f} must have at most 2 decimals`
      : `${f} must be a number from ${s.minimum} to ${s.maximum}`;
  }
  if (s.enum) return `${f} must be one of: ${s.enum.join(', ')}`;
  if (s.format === 'uuid') return `${f} must be a UUID (e.g. 0b6f3c1e-2d4a-4c8e-9f1a-3b5d7e9f1a2c)`;
  if (s.format === 'date-time') return `${f} must be an RFC 3339 timestamp with an offset, e.g. 2026-03-01T10:30:00+01:00`;
  if (s.format === 'date') return `${f} must be a real date YYYY-MM-DD`;
  if (s.pattern === Phone.pattern) return `${f} must be an E.164 phone number: + then 8 to 15 digits, e.g. +34600123456`;
  if (s.pattern === Language.pattern) return `${f} must be a language code such as es, en or pt-BR`;
  // text (and an e-mail address, which is text first)
  if (faults.has('type') || faults.has('pattern')) return `${f} must be a non-empty string`;
  if (faults.has('maxLength')) return `${f} must be at most ${s.maxLength} characters`;
  return `${f} must be an e-mail address or null`;
}

/**
 * Text as people write it: tab, line feed and carriage return are kept (a note's lines); any other
 * control character (ESC, NUL, a C1 control...) and unpaired surrogates are refused, as in the
 * API's parameters (domain/text.ts): they have no use in a name or a note, break terminals and
 * spreadsheets, and PostgreSQL cannot store NUL. Checked on text the schema accepted.
 */
function textFault(f: string, s: FieldSchema, v: unknown): string | null {
  if (s.pattern !== TEXT_PATTERN || typeof v !== 'string') return null;
  const problem = textProblem(v, Number.MAX_SAFE_INTEGER, true);
  if (problem === 'control_character')
    return (
      `${f} holds a control character (${controlCharacterIn(v, true)}); ` +
      'text may hold tab, line feed and carriage return, no other: remove it'
    );
  if (problem === 'unpaired_surrogate')
    return `${f} is not valid Unicode (it holds an unpaired UTF-16 surrogate such as \\ud800): remove it`;
  return null;
}

interface LineSpec {
  check: Checker;
  /** the fields after `type`, in the format's order, with their schemas */
  fields: [string, FieldSchema][];
}

function specOf(type: string, schema: { properties: Record<string, unknown> }): LineSpec {
  return {
    check: compileChecker(`the import's ${type} lines`, schema),
    fields: Object.entries(schema.properties).filter(([f]) => f !== 'type') as [string, FieldSchema][],
  };
}

// Compiled once, when the module loads: a schema the checker cannot enforce stops the start.
const SPECS = Object.fromEntries(LINE_TYPES.map((t) => [t, specOf(t, LINE_SCHEMAS[t])])) as Record<LineType, LineSpec>;
const DELETION = compileChecker("the import's deletion lines", DeletionLine);

function orderOf(type: LineType, field: string): number {
  return 1 + SPECS[type].fields.findIndex(([f]) => f === field);
}

/**
 * The place of `clienta_id` among a line's problems. A reference that resolves to nothing is
 * known only at the end of the file and is then merged into its line's problems at this place;
 * every collection that refers has clienta_id second, so one number serves all.
 */
export const REFERENCE_ORDER = orderOf(SINGULAR_OF[REFERRING[0]!], 'clienta_id');
if (REFERRING.some((n) => orderOf(SINGULAR_OF[n], 'clienta_id') !== REFERENCE_ORDER))
  throw new Error('import-lines: clienta_id must have the same place in every collection that refers');

const lower = (v: unknown) => (v as string).toLowerCase();

/** The checked line as the record the service stores (ids in lower case, timestamps as seconds, cents). */
function recordOf(o: Obj, type: LineType): ImportRecord {
  return COLLECTIONS[NAME_OF[type]].fromLine(o);
}

function parseRecord(o: Obj, type: LineType): ParsedLine {
  const spec = SPECS[type];
  const res = spec.check(o);
  const problems: FieldProblem[] = [];
  spec.fields.forEach(([f, schema], i) => {
    const faults = res.ok ? undefined : res.faults.get(f);
    const reason = faults ? explain(f, schema, faults) : textFault(f, schema, o[f]);
    if (reason !== null) problems.push({ field: f, reason, order: i + 1 });
  });
  if (res.ok && problems.length === 0) return { record: recordOf(o, type) };
  // Fields the type does not have, in the order they appear on the line, after the known ones.
  const allowed = ['type', ...spec.fields.map(([f]) => f)];
  let order = spec.fields.length + 1;
  for (const k of res.ok ? [] : res.unknown) {
    const reason = DERIVED.includes(k)
      ? `${k} is derived by the service and cannot be imported; remove it`
      : `unknown field "${k}" for type ${type}; allowed: ${allowed.join(', ')}`;
    problems.push({ field: k, reason, order: order++ });
  }
  // The reference is still worth checking: a record it does not find is one more problem of this line.
  const ref = o.clienta_id;
  const refers = COLLECTIONS[NAME_OF[type]].refersTo !== null;
  const clientaId = refers && typeof ref === 'string' && (res.ok || !res.faults.has('clienta_id')) ? ref.toLowerCase() : null;
  return { problems, clientaId };
}

/**
 * A deletion line: `{"type": ..., "id": ..., "deleted": true}` and nothing else, so that a record
 * line with a stray "deleted" is never taken for a deletion (nor a deletion for an upsert).
 */
function parseDeletion(o: Obj, type: LineType): ParsedLine {
  const res = DELETION(o);
  if (res.ok) return { deletion: { type, id: lower(o.id), deleted: true } };
  const problems: FieldProblem[] = [];
  const id = res.faults.get('id');
  if (id) problems.push({ field: 'id', reason: explain('id', DeletionLine.properties.id, id), order: 1 });
  if (res.faults.has('deleted')) {
    problems.push({ field: 'deleted', reason: 'deleted must be true (a deletion line); leave it out to import the record', order: 2 });
  }
  let order = 3;
  for (const k of res.ok ? [] : res.unknown) {
    problems.push({ field: k, reason: `a deletion line holds only type, id and "deleted": true; remove "${k}"`, order: order++ });
  }
  return { problems, clientaId: null };
}

export type ParsedLine =
  | { record: ImportRecord }
  | { deletion: DeletionRecord }
  /** every problem of the line in report order, and its clienta_id when that one is a valid UUID */
  | { problems: FieldProblem[]; clientaId: string | null };

const wholeLine = (reason: string): ParsedLine => ({ problems: [{ field: null, reason, order: 0 }], clientaId: null });

/** Parses one line. `null` for a blank line; throws nothing. */
export function parseImportLine(line: string): ParsedLine | null {
  if (line.trim() === '') return null;
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    return wholeLine('not valid JSON');
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return wholeLine('must be a JSON object');
  const type = (o as Obj).type;
  // Without a known type there is no list of fields to check the rest against.
  if (!(LINE_TYPES as readonly unknown[]).includes(type)) {
    return { problems: [{ field: 'type', reason: `type must be one of: ${LINE_TYPES.join(', ')}`, order: 0 }], clientaId: null };
  }
  return 'deleted' in (o as Obj) ? parseDeletion(o as Obj, type as LineType) : parseRecord(o as Obj, type as LineType);
}
