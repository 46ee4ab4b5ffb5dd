// Rows -> the API's records, in one place: the lists answer with these, and the event log stores
// them as each event's `datos`, so a record reads the same in a list, in the feed and (later) in
// a webhook. Timestamps carry the clinic's offset at that instant; prices its currency.
import type { Cita } from '../collections/citas.js';
import type { Clienta } from '../collections/clientas.js';
import type { Llamada } from '../collections/llamadas.js';
import type { CitaRow } from '../repos/citas.js';
import type { ClientaRow } from '../repos/clientas.js';
import type { LlamadaRow } from '../repos/llamadas.js';
import { formatTimestamp, localDate } from '../time.js';

/** The tenant, bound once from the API key (or the clinic being written). */
export interface ClinicContext {
  clinicId: string;
  timezone: string;
  currency: string;
}

export function citaOut(r: CitaRow, ctx: ClinicContext): Cita {
  const tz = ctx.timezone;
  return {
    id: r.id,
    fecha_hora: formatTimestamp(r.fecha_hora, tz),
    cliente_nombre: r.cliente_nombre,
    telefono: r.telefono,
    servicio: r.servicio,
    duracion_min: r.duracion_min,
    precio: r.precio_cents / 100,
    moneda: ctx.currency,
    estado: r.estado,
    profesional_nombre: r.profesional_nombre,
    sede_nombre: r.sede_nombre,
    notas: r.notas,
    created_at: formatTimestamp(r.created_at, tz),
    updated_at: formatTimestamp(r.updated_at, tz),
  };
}

export function clientaOut(r: ClientaRow, ctx: ClinicContext): Clienta {
  const tz = ctx.timezone;
  return {
    id: r.id,
    nombre: r.nombre,
    telefono: r.telefono,
    email: r.email,
    idioma: r.idioma,
    vip: r.vip === 1,
    total_citas: Number(r.total_citas),
    total_llamadas: Number(r.total_llamadas),
    ultima_cita: r.ultima_cita === null ? null : localDate(Number(r.ultima_cita), tz),
    ultima_llamada: r.ultima_llamada === null ? null : formatTimestamp(Number(r.ultima_llamada), tz),
    cliente_desde: r.cliente_desde,
    created_at: formatTimestamp(r.created_at, tz),
    updated_at: formatTimestamp(r.updated_at, tz),
  };
}

export function llamadaOut(r: LlamadaRow, ctx: ClinicContext): Llamada {
  const tz = ctx.timezone;
  return {
    id: r.id,
    fecha_hora: formatTimestamp(r.fecha_hora, tz),
    cliente_nombre: r.cliente_nombre,
    telefono_caller: r.telefono_caller,
    duracion_segundos: r.duracion_segundos,
    resultado: r.resultado,
    idioma: r.idioma,
    created_at: formatTimestamp(r.created_at, tz),
    updated_at: formatTimestamp(r.updated_at, tz),
  };
}
