// The test suite's records: one builder per record type (with defaults every field can override),
// and the hand-made fixtures built with them, whose every expected answer can be worked out by hand.
// Clinic A is in Europe/Madrid around the 2026 DST start (Sun 29 March, 02:00 -> 03:00) and the
// DST end (Sun 25 October, 03:00 -> 02:00). "Now" is Saturday 2026-03-28 12:00 UTC (13:00 in
// Madrid), so A's today is 2026-03-28, today+30 is 2026-04-27 and today-7 is 2026-03-21.
// Clinic B (America/Mexico_City) holds look-alike data that must never show up for A.
import type { ImportRecord } from '../../src/domain/records.js';
import { parseTimestamp } from '../../src/time.js';

export const FIXTURE_NOW_MS = Date.UTC(2026, 2, 28, 12, 0, 0);

/** Epoch seconds of an RFC 3339 timestamp with its offset (throws on a malformed one). */
export function ts(s: string): number {
  const v = parseTimestamp(s);
  if (v === null) throw new Error(`bad test timestamp ${s}`);
  return v;
}

type Over = Partial<Record<string, unknown>>;

/** A clienta of the import format; `over` replaces any field (vip, email, idioma...). */
export function clientaRecord(id: string, nombre: string, telefono: string, over: Over = {}): ImportRecord {
  return {
    type: 'clienta',
    id,
    nombre,
    telefono,
    email: null,
    idioma: 'es',
    vip: false,
    cliente_desde: '2024-05-10',
    created_at: ts('2024-05-10T10:00:00+02:00'),
    ...over,
  } as ImportRecord;
}

/** A cita at `fecha` (RFC 3339 with offset); `over` replaces any field. */
export function citaRecord(id: string, clientaId: string, fecha: string, over: Over = {}): ImportRecord {
  return {
    type: 'cita',
    id,
    clienta_id: clientaId,
    fecha_hora: ts(fecha),
    servicio: 'Limpieza facial',
    duracion_min: 60,
    precio_cents: 5550,
    estado: 'confirmada',
    profesional_nombre: 'Laura Martín',
    sede_nombre: 'Sede Centro',
    notas: null,
    created_at: ts('2026-03-01T09:00:00+01:00'),
    ...over,
  } as ImportRecord;
}

/** A llamada at `fecha` (clientaId null: an unknown caller); `over` replaces any field. */
export function llamadaRecord(id: string, clientaId: string | null, fecha: string, over: Over = {}): ImportRecord {
  return {
    type: 'llamada',
    id,
    clienta_id: clientaId,
    fecha_hora: ts(fecha),
    cliente_nombre: null,
    telefono_caller: '+34600123456',
    duracion_segundos: 95,
    resultado: 'info',
    idioma: 'es',
    created_at: ts(fecha),
    ...over,
  } as ImportRecord;
}

/** Deterministic UUIDs that also sort in the order of their number. */
export const uid = (prefix: 'a' | 'b', kind: 1 | 2 | 3, n: number) =>
  `${prefix === 'a' ? '0a' : '0b'}00000${kind}-0000-4000-8000-${String(n).padStart(12, '0')}`;

export const A = {
  maria: uid('a', 1, 1),
  mario: uid('a', 1, 2),
  angela: uid('a', 1, 3),
  mariaLopez: uid('a', 1, 4),
  pct: uid('a', 1, 5),
};

const clienta = clientaRecord;

// The fixtures' citas and llamadas are numbered in the order they are made.
let citaN = 0;
const cita = (prefix: 'a' | 'b', clientaId: string, fecha: string, over: Over = {}) =>
  citaRecord(uid(prefix, 2, ++citaN), clientaId, fecha, over);

let callN = 0;
const llamada = (prefix: 'a' | 'b', clientaId: string | null, fecha: string, over: Over = {}) =>
  llamadaRecord(uid(prefix, 3, ++callN), clientaId, fecha, over);

/** Citas of clinic A by name, so tests can refer to them. */
export const citasA: Record<string, ImportRecord> = {};

export function clinicARecords(): ImportRecord[] {
  citaN = 0;
  callN = 0;
  const cs: [string, ImportRecord][] = [
    ['yesterdayLate', cita('a', A.maria, '2026-03-27T23:59:59+01:00')],
    ['todayMorning', cita('a', A.maria, '2026-03-28T09:00:00+01:00', { precio_cents: 2550, notas: 'Alergia al látex' })],
    ['todayMorningTwin', cita('a', A.mario, '2026-03-28T09:00:00+01:00', { estado: 'pendiente' })],
    ['dstDayEarly', cita('a', A.angela, '2026-03-29T00:30:00+01:00', { estado: 'cancelada' })],
    ['dstDayAfterJump', cita('a', A.maria, '2026-03-29T03:00:00+02:00', { estado: 'completada' })],
    ['dstDayLate', cita('a', A.mario, '2026-03-29T23:30:00+02:00', { estado: 'no_asistio' })],
    ['nextMidnight', cita('a', A.angela, '2026-03-30T00:00:00+02:00')],
    ['lastDefaultDay', cita('a', A.maria, '2026-04-27T20:00:00+02:00')],
    ['afterDefault', cita('a', A.maria, '2026-04-28T09:00:00+02:00')],
    ['dstEndFirst', cita('a', A.mario, '2026-10-25T02:30:00+02:00')],
    ['dstEndSecond', cita('a', A.mario, '2026-10-25T02:30:00+01:00')],
    ['dstEndLate', cita('a', A.mario, '2026-10-25T23:30:00+01:00')],
    ['past', cita('a', A.angela, '2026-02-10T11:00:00+01:00', { estado: 'completada', precio_cents: 1999 })],
  ];
  for (const [name, r] of cs) citasA[name] = r;
  return [
    clienta(A.maria, 'María José Núñez', '+34600123456', { vip: true, email: 'mj@example.com' }),
    clienta(A.mario, 'Mario Pérez', '+34611222333', { idioma: 'en' }),
    clienta(A.angela, 'Ángela Ibáñez', '+34699887766', { idioma: null }),
    clienta(A.mariaLopez, 'maria lopez', '+34622000111', { vip: true }),
    clienta(A.pct, 'Ana 100%_Ruiz', '+34633444555'),
    ...cs.map(([, r]) => r),
    // calls: today-7 is 2026-03-21 (Madrid)
    llamada('a', A.maria, '2026-03-28T12:30:00+01:00', { resultado: 'agendada', cliente_nombre: 'Old Name' }),
    llamada('a', null, '2026-03-27T18:00:00+01:00', { resultado: 'sin_accion', telefono_caller: '+441632960000', idioma: 'en' }),
    llamada('a', A.mario, '2026-03-21T00:00:00+01:00', { resultado: 'cancelada', telefono_caller: '+34611222333' }),
    llamada('a', A.mario, '2026-03-20T23:59:59+01:00', { resultado: 'transferida', telefono_caller: '+34611222333' }),
    llamada('a', A.angela, '2026-03-25T10:00:00+01:00', { resultado: 'info', telefono_caller: '+34699887766' }),
  ];
}

export const B = { maria: uid('b', 1, 1) };

export function clinicBRecords(): ImportRecord[] {
  citaN = 0;
  callN = 0;
  return [
    clienta(B.maria, 'María Fernández', '+525512345678', { vip: true }),
    cita('b', B.maria, '2026-03-28T10:00:00-06:00', { estado: 'pendiente' }),
    cita('b', B.maria, '2026-03-29T10:00:00-06:00'),
    llamada('b', B.maria, '2026-03-27T10:00:00-06:00', { telefono_caller: '+525512345678' }),
  ];
}
