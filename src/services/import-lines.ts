// Validation of one JSON Lines record of the import format (CONTRACT section 7). Returns the
// typed record or the reason it is bad, phrased so an operator can fix the line.
import { ESTADOS, RESULTADOS, type ImportRecord } from '../domain/records.js';
import { isValidDate, parseTimestamp } from '../time.js';

type Obj = Record<string, unknown>;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const E164_RE = /^\+[0-9]{8,15}$/;
const LANG_RE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DERIVED = ['total_citas', 'total_llamadas', 'ultima_cita', 'ultima_llamada'];

const FIELDS = {
  clienta: { required: ['id', 'nombre', 'telefono', 'vip', 'cliente_desde', 'created_at'], optional: ['email', 'idioma'] },
  cita: {
    required: ['id', 'clienta_id', 'fecha_hora', 'servicio', 'duracion_min', 'precio', 'estado', 'profesional_nombre', 'sede_nombre', 'created_at'],
    optional: ['notas'],
  },
  llamada: {
    required: ['id', 'fecha_hora', 'telefono_caller', 'duracion_segundos', 'resultado', 'idioma', 'created_at'],
    optional: ['clienta_id', 'cliente_nombre'],
  },
} as const;

class LineError extends Error {}

function fail(message: string): never {
  throw new LineError(message);
}

function text(o: Obj, f: string, max: number): string {
  const v = o[f];
  if (typeof v !== 'string' || v.trim() === '') fail(`${f} must be a non-empty string`);
  if (v.length > max) fail(`${f} must be at most ${max} characters`);
  return v;
}

function optText(o: Obj, f: string, max: number): string | null {
  return o[f] === undefined || o[f] === null ? null : text(o, f, max);
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

function lang(o: Obj, f: string, required: boolean): string | null {
  const v = o[f];
  if (!required && (v === undefined || v === null)) return null;
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

function checkFields(o: Obj, type: keyof typeof FIELDS): void {
  const spec = FIELDS[type];
  const allowed = new Set<string>(['type', ...spec.required, ...spec.optional]);
  for (const k of Object.keys(o)) {
    if (DERIVED.includes(k)) fail(`${k} is derived by the service and cannot be imported; remove it`);
    if (!allowed.has(k)) fail(`unknown field "${k}" for type ${type}; allowed: ${[...allowed].join(', ')}`);
  }
  for (const k of spec.required) if (o[k] === undefined) fail(`missing required field "${k}"`);
}

/** Parses one line. `null` result for a blank line; throws nothing. */
export function parseImportLine(line: string): { record: ImportRecord } | { error: string } | null {
  if (line.trim() === '') return null;
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    return { error: 'not valid JSON' };
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return { error: 'must be a JSON object' };
  const obj = o as Obj;
  try {
    const type = obj.type;
    if (type !== 'clienta' && type !== 'cita' && type !== 'llamada') fail('type must be one of: clienta, cita, llamada');
    checkFields(obj, type);
    if (type === 'clienta') {
      const email = optText(obj, 'email', 254);
      if (email !== null && !EMAIL_RE.test(email)) fail('email must be an e-mail address or null');
      if (typeof obj.vip !== 'boolean') fail('vip must be true or false');
      return {
        record: {
          type, id: uuid(obj, 'id'), nombre: text(obj, 'nombre', 200), telefono: phone(obj, 'telefono'), email,
          idioma: lang(obj, 'idioma', false), vip: obj.vip, cliente_desde: date(obj, 'cliente_desde'),
          created_at: timestamp(obj, 'created_at'),
        },
      };
    }
    if (type === 'cita') {
      return {
        record: {
          type, id: uuid(obj, 'id'), clienta_id: uuid(obj, 'clienta_id'), fecha_hora: timestamp(obj, 'fecha_hora'),
          servicio: text(obj, 'servicio', 200), duracion_min: int(obj, 'duracion_min', 1, 1440), precio_cents: cents(obj, 'precio'),
          estado: oneOf(obj, 'estado', ESTADOS), profesional_nombre: text(obj, 'profesional_nombre', 200),
          sede_nombre: text(obj, 'sede_nombre', 200), notas: optText(obj, 'notas', 2000), created_at: timestamp(obj, 'created_at'),
        },
      };
    }
    return {
      record: {
        type, id: uuid(obj, 'id'), clienta_id: obj.clienta_id === undefined || obj.clienta_id === null ? null : uuid(obj, 'clienta_id'),
        fecha_hora: timestamp(obj, 'fecha_hora'), cliente_nombre: optText(obj, 'cliente_nombre', 200),
        telefono_caller: phone(obj, 'telefono_caller'), duracion_segundos: int(obj, 'duracion_segundos', 0, 86_400),
        resultado: oneOf(obj, 'resultado', RESULTADOS), idioma: lang(obj, 'idioma', true) as string, created_at: timestamp(obj, 'created_at'),
      },
    };
  } catch (err) {
    if (err instanceof LineError) return { error: err.message };
    throw err;
  }
}
