// Validation of one JSON Lines record of the import format (docs/import.md). Returns the
// typed record, or every problem of the line (each field checked on its own, in the format's
// order), phrased so an operator can fix the whole line in one round. Slightly over 300 lines: one
// validator per record type of the format.
import { ESTADOS, RESULTADOS, UUID_RE, type DeletionRecord, type ImportRecord } from '../domain/records.js';
import { controlCharacterIn, textProblem } from '../domain/text.js';
import { isValidDate, parseTimestamp } from '../time.js';

type Obj = Record<string, unknown>;

const E164_RE = /^\+[0-9]{8,15}$/;
const LANG_RE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DERIVED = ['total_citas', 'total_llamadas', 'ultima_cita', 'ultima_llamada'];

/**
 * Each type's fields in the order of the format (docs/import.md), which is also the order a
 * line's problems are reported in; required or optional is decided where each is read below.
 */
const FIELDS = {
  clienta: ['id', 'nombre', 'telefono', 'email', 'idioma', 'vip', 'cliente_desde', 'created_at'],
  cita: [
    'id',
    'clienta_id',
    'fecha_hora',
    'servicio',
    'duracion_min',
    'precio',
    'estado',
    'profesional_nombre',
    'sede_nombre',
    'notas',
    'created_at',
  ],
  llamada: [
    'id',
    'clienta_id',
    'fecha_hora',
    'cliente_nombre',
    'telefono_caller',
    'duracion_segundos',
    'resultado',
    'idioma',
    'created_at',
  ],
} as const;

type RecordType = keyof typeof FIELDS;

/** One problem of a line: the field it is about (null for the whole line) and what to fix. */
export interface FieldProblem {
  field: string | null;
  reason: string;
  /** where it sorts among the line's problems: `type` first, then the format's order, then unknown fields */
  order: number;
}

function orderOf(type: RecordType, field: string): number {
  return 1 + (FIELDS[type] as readonly string[]).indexOf(field);
}

/**
 * The place of `clienta_id` among a line's problems. A reference that resolves to no clienta is
 * known only at the end of the file and is then merged into its line's problems at this place;
 * citas and llamadas both have clienta_id second, so one number serves both.
 */
export const REFERENCE_ORDER = orderOf('cita', 'clienta_id');
if (orderOf('llamada', 'clienta_id') !== REFERENCE_ORDER)
  throw new Error('import-lines: clienta_id must have the same place in citas and llamadas');

class LineError extends Error {}

function fail(message: string): never {
  throw new LineError(message);
}

/**
 * Text as people write it: tab, line feed and carriage return are kept (a note's lines); any other
 * control character (ESC, NUL, a C1 control...) and unpaired surrogates are refused, as in the
 * API's parameters (domain/text.ts): they have no use in a name or a note, break terminals and
 * spreadsheets, and PostgreSQL cannot store NUL.
 */
function text(o: Obj, f: string, max: number): string {
  const v = o[f];
  if (typeof v !== 'string' || v.trim() === '') fail(`${f} must be a non-empty string`);
  const problem = textProblem(v, max, true);
  if (problem === 'too_long') fail(`${f} must be at most ${max} characters`);
  if (problem === 'control_character')
    fail(
      `${f} holds a control character (${controlCharacterIn(v, true)}); ` +
        'text may hold tab, line feed and carriage return, no other: remove it',
    );
  if (problem === 'unpaired_surrogate')
    fail(`${f} is not valid Unicode (it holds an unpaired UTF-16 surrogate such as \\ud800): remove it`);
  return v;
}

function uuid(o: Obj, f: string): string {
  const v = o[f];
  if (typeof v !== 'string' || !UUID_RE.test(v)) fail(`${f} must be a UUID (e.g. 0b6f3c1e-2d4a-4c8e-9f1a-3b5d7e9f1a2c)`);
  return v.toLowerCase();
}

function phone(o: Obj, f: string): string {
  const v = o[f];
  if (typeof v !== 'string' || !E164_RE.test(v)) fail(`${f} must be an E.164 phone number: + then 8 to 15 digits, e.g. +34600123456`);
  return v;
}

function int(o: Obj, f: string, min: number, max: number): number {
  const v = o[f];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail(`${f} must be an integer from ${min} to ${max}`);
  return v;
}

function timestamp(o: Obj, f: string): number {
  const v = o[f];
  const t = typeof v === 'string' ? parseTimestamp(v) : null;
  if (t === null) fail(`${f} must be an RFC 3339 timestamp with an offset, e.g. 2026-03-01T10:30:00+01:00`);
  return t;
}

function date(o: Obj, f: string): string {
  const v = o[f];
  if (typeof v !== 'string' || !isValidDate(v)) fail(`${f} must be a real date YYYY-MM-DD`);
  return v;
}

function oneOf<T extends string>(o: Obj, f: string, values: readonly T[]): T {
  const v = o[f];
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) fail(`${f} must be one of: ${values.join(', ')}`);
  return v as T;
}

function lang(o: Obj, f: string): string {
  const v = o[f];
  if (typeof v !== 'string' || !LANG_RE.test(v)) fail(`${f} must be a language code such as es, en or pt-BR`);
  return v;
}

function cents(o: Obj, f: string): number {
  const v = o[f];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 10_000_000) fail(`${f} must be a number from 0 to 10000000`);
  const c = Math.round(v * 100);
  if (Math.abs(c - v * 100) > 1e-6) fail(`${f} must have at most 2 decimals`);
  return c;
}

/**
 * Reads the fields of one line, each with its own check, and keeps every problem instead of
 * stopping at the first, so a line's faults are all reported in one round. A failed check
 * yields `undefined`; the record is only used when there was no problem.
 */
class FieldReader {
  readonly problems: FieldProblem[] = [];

  constructor(
    private readonly o: Obj,
    private readonly type: RecordType,
  ) {}

  private take<T>(f: string, check: (o: Obj, f: string) => T): T {
    try {
      return check(this.o, f);
    } catch (err) {
      if (!(err instanceof LineError)) throw err;
      this.problems.push({ field: f, reason: err.message, order: orderOf(this.type, f) });
      return undefined as T;
    }
  }

  required<T>(f: string, check: (o: Obj, f: string) => T): T {
    if (this.o[f] === undefined) {
      this.problems.push({ field: f, reason: `missing required field "${f}"`, order: orderOf(this.type, f) });
      return undefined as T;
    }
    return this.take(f, check);
  }

  /** absent or null: null */
  optional<T>(f: string, check: (o: Obj, f: string) => T): T | null {
    return this.o[f] === undefined || this.o[f] === null ? null : this.take(f, check);
  }

  /** Fields the type does not have, in the order they appear on the line, after the known ones. */
  extraFields(): void {
    const spec = FIELDS[this.type] as readonly string[];
    const allowed = ['type', ...spec];
    let order = spec.length + 1;
    for (const k of Object.keys(this.o)) {
      if (allowed.includes(k)) continue;
      const reason = DERIVED.includes(k)
        ? `${k} is derived by the service and cannot be imported; remove it`
        : `unknown field "${k}" for type ${this.type}; allowed: ${allowed.join(', ')}`;
      this.problems.push({ field: k, reason, order: order++ });
    }
  }
}

function bool(o: Obj, f: string): boolean {
  const v = o[f];
  if (typeof v !== 'boolean') fail(`${f} must be true or false`);
  return v;
}

function email(o: Obj, f: string): string {
  const v = text(o, f, 254);
  if (!EMAIL_RE.test(v)) fail(`${f} must be an e-mail address or null`);
  return v;
}

// The checks with their limits, made once rather than per line.
const text200 = (o: Obj, f: string) => text(o, f, 200);
const text2000 = (o: Obj, f: string) => text(o, f, 2000);
const minutes = (o: Obj, f: string) => int(o, f, 1, 1440);
const seconds = (o: Obj, f: string) => int(o, f, 0, 86_400);
const estado = (o: Obj, f: string) => oneOf(o, f, ESTADOS);
const resultado = (o: Obj, f: string) => oneOf(o, f, RESULTADOS);

function parseRecord(obj: Obj, type: RecordType): ParsedLine {
  const r = new FieldReader(obj, type);
  // Each record literal reads its fields in the format's order, so problems come out in it.
  let record: ImportRecord;
  if (type === 'clienta') {
    record = {
      type,
      id: r.required('id', uuid),
      nombre: r.required('nombre', text200),
      telefono: r.required('telefono', phone),
      email: r.optional('email', email),
      idioma: r.optional('idioma', lang),
      vip: r.required('vip', bool),
      cliente_desde: r.required('cliente_desde', date),
      created_at: r.required('created_at', timestamp),
    };
  } else if (type === 'cita') {
    record = {
      type,
      id: r.required('id', uuid),
      clienta_id: r.required('clienta_id', uuid),
      fecha_hora: r.required('fecha_hora', timestamp),
      servicio: r.required('servicio', text200),
      duracion_min: r.required('duracion_min', minutes),
      precio_cents: r.required('precio', cents),
      estado: r.required('estado', estado),
      profesional_nombre: r.required('profesional_nombre', text200),
      sede_nombre: r.required('sede_nombre', text200),
      notas: r.optional('notas', text2000),
      created_at: r.required('created_at', timestamp),
    };
  } else {
    record = {
      type,
      id: r.required('id', uuid),
      clienta_id: r.optional('clienta_id', uuid),
      fecha_hora: r.required('fecha_hora', timestamp),
      cliente_nombre: r.optional('cliente_nombre', text200),
      telefono_caller: r.required('telefono_caller', phone),
      duracion_segundos: r.required('duracion_segundos', seconds),
      resultado: r.required('resultado', resultado),
      idioma: r.required('idioma', lang),
      created_at: r.required('created_at', timestamp),
    };
  }
  r.extraFields();
  if (r.problems.length === 0) return { record };
  // The reference is still worth checking: a clienta it does not find is one more problem of this line.
  return { problems: r.problems, clientaId: record.type === 'clienta' ? null : (record.clienta_id ?? null) };
}

/**
 * A deletion line: `{"type": ..., "id": ..., "deleted": true}` and nothing else, so that a record
 * line with a stray "deleted" is never taken for a deletion (nor a deletion for an upsert).
 */
function parseDeletion(obj: Obj, type: RecordType): ParsedLine {
  const problems: FieldProblem[] = [];
  let id: string | undefined;
  if (obj.id === undefined) problems.push({ field: 'id', reason: 'missing required field "id"', order: 1 });
  else {
    try {
      id = uuid(obj, 'id');
    } catch (err) {
      if (!(err instanceof LineError)) throw err;
      problems.push({ field: 'id', reason: err.message, order: 1 });
    }
  }
  if (obj.deleted !== true) {
    problems.push({ field: 'deleted', reason: 'deleted must be true (a deletion line); leave it out to import the record', order: 2 });
  }
  let order = 3;
  for (const k of Object.keys(obj)) {
    if (k === 'type' || k === 'id' || k === 'deleted') continue;
    problems.push({ field: k, reason: `a deletion line holds only type, id and "deleted": true; remove "${k}"`, order: order++ });
  }
  if (problems.length > 0) return { problems, clientaId: null };
  return { deletion: { type, id: id!, deleted: true } };
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
  if (type !== 'clienta' && type !== 'cita' && type !== 'llamada') {
    return { problems: [{ field: 'type', reason: 'type must be one of: clienta, cita, llamada', order: 0 }], clientaId: null };
  }
  return 'deleted' in (o as Obj) ? parseDeletion(o as Obj, type) : parseRecord(o as Obj, type);
}
