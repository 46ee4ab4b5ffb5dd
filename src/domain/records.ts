// The records the service stores, in the shape of the import format (docs/import.md).
// Import, the demo generator and the repositories all speak this shape, so there is one
// definition of "a clienta" outside the HTTP schemas.

/**
 * What a record id is: a UUID, written in any case and stored in lower case. The import checks its
 * lines' ids with it, and the API its path parameters (GET /api/v1/citas/{id} ...).
 */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A request id: an incoming X-Request-Id of this shape is kept, else the service makes a UUID. */
export const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

export const ESTADOS = ['pendiente', 'confirmada', 'completada', 'cancelada', 'no_asistio'] as const;
export type Estado = (typeof ESTADOS)[number];

export const RESULTADOS = ['agendada', 'cancelada', 'info', 'transferida', 'sin_accion'] as const;
export type Resultado = (typeof RESULTADOS)[number];

/** The types of the event log's events: record type, then what happened to it. */
export const EVENT_TYPES = [
  'clienta.creada',
  'clienta.actualizada',
  'clienta.eliminada',
  'cita.creada',
  'cita.actualizada',
  'cita.eliminada',
  'llamada.creada',
  'llamada.actualizada',
  'llamada.eliminada',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const PLANS = ['basic', 'pro', 'pro_total', 'enterprise', 'premium'] as const;
export type Plan = (typeof PLANS)[number];

export const ROLES = ['owner', 'staff', 'superadmin'] as const;
export type Role = (typeof ROLES)[number];

/** Timestamps are epoch seconds (UTC); dates are `YYYY-MM-DD` calendar dates. */
export interface ClientaRecord {
  id: string;
  nombre: string;
  telefono: string;
  email: string | null;
  idioma: string | null;
  vip: boolean;
  cliente_desde: string;
  created_at: number;
}

export interface CitaRecord {
  id: string;
  clienta_id: string;
  fecha_hora: number;
  servicio: string;
  duracion_min: number;
  /** Price in minor units (cents) so that sums and round trips are exact. */
  precio_cents: number;
  estado: Estado;
  profesional_nombre: string;
  sede_nombre: string;
  notas: string | null;
  created_at: number;
}

export interface LlamadaRecord {
  id: string;
  clienta_id: string | null;
  fecha_hora: number;
  cliente_nombre: string | null;
  telefono_caller: string;
  duracion_segundos: number;
  resultado: Resultado;
  idioma: string;
  created_at: number;
}

/** An import line that deletes a record: `{"type": "cita", "id": "...", "deleted": true}`. */
export interface DeletionRecord {
  type: 'clienta' | 'cita' | 'llamada';
  id: string;
  deleted: true;
}

export type ImportRecord = ({ type: 'clienta' } & ClientaRecord) | ({ type: 'cita' } & CitaRecord) | ({ type: 'llamada' } & LlamadaRecord);
