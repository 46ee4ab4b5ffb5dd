// Import-format records -> the rows stored: search keys of a clienta's name and phone, the local
// day of a cita or call in the clinic's zone, prices in cents (already in the record). Pure.
import type { CitaRecord, ClientaRecord, ImportRecord, LlamadaRecord } from '../../domain/records.js';
import { localDate } from '../../time.js';
import { normalizeName, phoneDigits } from '../normalize.js';

export function clientaRow(r: ClientaRecord) {
  return {
    id: r.id,
    nombre: r.nombre,
    nombre_norm: normalizeName(r.nombre),
    telefono: r.telefono,
    telefono_digits: phoneDigits(r.telefono),
    email: r.email,
    idioma: r.idioma,
    vip: r.vip ? 1 : 0,
    cliente_desde: r.cliente_desde,
    created_at: r.created_at,
  };
}

export function citaRow(r: CitaRecord, zone: string) {
  return {
    id: r.id,
    clienta_id: r.clienta_id,
    fecha_hora: r.fecha_hora,
    dia: localDate(r.fecha_hora, zone),
    servicio: r.servicio,
    duracion_min: r.duracion_min,
    precio_cents: r.precio_cents,
    estado: r.estado,
    profesional_nombre: r.profesional_nombre,
    sede_nombre: r.sede_nombre,
    notas: r.notas,
    created_at: r.created_at,
  };
}

export function llamadaRow(r: LlamadaRecord, zone: string) {
  return {
    id: r.id,
    clienta_id: r.clienta_id,
    fecha_hora: r.fecha_hora,
    dia: localDate(r.fecha_hora, zone),
    cliente_nombre: r.cliente_nombre,
    telefono_caller: r.telefono_caller,
    duracion_segundos: r.duracion_segundos,
    resultado: r.resultado,
    idioma: r.idioma,
    created_at: r.created_at,
  };
}

export type RecordType = ImportRecord['type'];

/** The table of each record type, and the plural the counts use. */
export const TABLE_OF = { clienta: 'clientas', cita: 'citas', llamada: 'llamadas' } as const;

/** A record as the row of its table (without clinic_id and updated_at, which the write sets). */
export function rowOf(r: ImportRecord, zone: string): Record<string, unknown> {
  return r.type === 'clienta' ? clientaRow(r) : r.type === 'cita' ? citaRow(r, zone) : llamadaRow(r, zone);
}
