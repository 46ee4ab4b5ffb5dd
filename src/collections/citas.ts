// Appointments (citas): in whole local days of the clinic's time zone, filtered by status; each
// belongs to a clienta, whose current name and phone it shows.
import { Type, type Static } from '@sinclair/typebox';
import * as L from '../domain/import-schemas.js';
import { ESTADOS, type Estado } from '../domain/records.js';
import {
  Contact,
  dateParam,
  enumParam,
  limitParam,
  named,
  offsetParam,
  paging,
  Phone,
  ref,
  Rango,
  Text,
  Timestamp,
  updatedSinceParam,
  UpdatedAt,
  Uuid,
} from '../domain/schema-parts.js';
import { localDate } from '../time.js';
import { lineValue as v, type CollectionShape, type LineValues, type RowValues } from './parts.js';

/** `hasta` defaults to today + this many days. */
export const CITAS_DEFAULT_DAYS = 30;
const DEFAULT_LIMIT = 100;

/** Timestamps are epoch seconds (UTC). */
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

export const CitasQuery = Type.Object(
  {
    desde: dateParam("First day (clinic's local date), inclusive. Default: today (none with updated_since)"),
    hasta: dateParam(`Last day, inclusive. Default: today + ${CITAS_DEFAULT_DAYS} days (none with updated_since)`),
    estado: enumParam(ESTADOS, 'Only appointments in this status'),
    updated_since: updatedSinceParam,
    limit: limitParam(DEFAULT_LIMIT),
    offset: offsetParam,
  },
  { additionalProperties: false },
);

export const Cita = named('Cita', 'An appointment', {
  id: Uuid,
  fecha_hora: Timestamp,
  cliente_nombre: Text(['Chloé Jiménez Sáez'], "The client's current name"),
  telefono: Contact(Phone, "The client's current phone, E.164"),
  servicio: Text(['Presoterapia']),
  duracion_min: Type.Integer({ minimum: 1, examples: [30] }),
  precio: Type.Number({ minimum: 0, description: 'In the currency named by moneda, at most 2 decimals', examples: [35] }),
  moneda: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency of precio', examples: ['EUR'] }),
  estado: Type.Unsafe<string>({ type: 'string', enum: [...ESTADOS], examples: ['confirmada'] }),
  profesional_nombre: Text(['Laura Martín Ruiz']),
  sede_nombre: Text(['Sede Nervión']),
  notas: Contact(Text(['No usar acetona']), 'Notes on the appointment; null when there are none'),
  created_at: Timestamp,
  updated_at: UpdatedAt,
});

export const CitasList = named('CitasList', 'A page of appointments', {
  citas: Type.Array(ref(Cita)),
  total: paging.total,
  rango: ref(Rango),
  limit: paging.limit,
  offset: paging.offset,
});

/** An import line of this collection (docs/import.md). */
export const CitaLine = Type.Object(
  {
    type: Type.Literal('cita'),
    id: Uuid,
    clienta_id: Uuid,
    fecha_hora: L.Timestamp,
    servicio: L.Text(200),
    duracion_min: Type.Integer({ minimum: 1, maximum: 1440 }),
    // in the clinic's currency, at most 2 decimals (stored in cents)
    precio: Type.Number({ minimum: 0, maximum: 10_000_000, multipleOf: 0.01 }),
    estado: L.OneOf(ESTADOS),
    profesional_nombre: L.Text(200),
    sede_nombre: L.Text(200),
    notas: L.OrNull(L.Text(2000)),
    created_at: L.Timestamp,
  },
  { additionalProperties: false },
);

export const citas = {
  name: 'citas',
  singular: 'cita',
  refersTo: 'clientas',
  deletedWithReferred: true,
  unlinked: [],
  showsOfReferred: ['nombre', 'telefono'],
  prose: 'appointments (citas)',
  record: Cita,
  query: CitasQuery,
  list: CitasList,
  line: CitaLine,
  defaultLimit: DEFAULT_LIMIT,
  scope: 'citas:read',
  scopeText: {
    reference: 'GET /api/v1/citas and /api/v1/citas/{id}: appointments',
    es: {
      label: 'Citas',
      description: 'Fecha y hora, servicio, precio, estado, profesional y sede de cada cita, con el nombre de la clienta.',
    },
    en: {
      label: 'Appointments',
      description: 'Date and time, service, price, status, professional and location of each appointment, with the client’s name.',
    },
  },
  contactFields: ['telefono', 'notas'],
  columns: [
    ['clienta_id', 'text'],
    ['fecha_hora', 'int8'],
    ['dia', 'text'],
    ['servicio', 'text'],
    ['duracion_min', 'int4'],
    ['precio_cents', 'int8'],
    ['estado', 'text'],
    ['profesional_nombre', 'text'],
    ['sede_nombre', 'text'],
    ['notas', 'text'],
    ['created_at', 'int8'],
  ],
  counts: { table: 'citas_por_dia', by: ['dia', 'estado'] },
  tag: "Appointments: in whole local days of the clinic's time zone, filtered by status",
  one: { operationId: 'getCita', summary: 'One appointment, by its id', what: 'appointment', extra: '', print: ['fecha_hora'] },
  fromLine: (o: LineValues): { type: 'cita' } & CitaRecord => ({
    type: 'cita',
    id: v.id(o.id),
    clienta_id: v.id(o.clienta_id),
    fecha_hora: v.seconds(o.fecha_hora),
    servicio: o.servicio as string,
    duracion_min: o.duracion_min as number,
    precio_cents: Math.round((o.precio as number) * 100),
    estado: o.estado as Estado,
    profesional_nombre: o.profesional_nombre as string,
    sede_nombre: o.sede_nombre as string,
    notas: v.orNull(o.notas as string | null | undefined),
    created_at: v.seconds(o.created_at),
  }),
  toRow: (r: CitaRecord, zone: string) => ({
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
  }),
  toLine: (r: RowValues, at: (s: number) => string) => ({
    type: 'cita',
    id: r.id,
    clienta_id: r.clienta_id,
    fecha_hora: at(Number(r.fecha_hora)),
    servicio: r.servicio,
    duracion_min: Number(r.duracion_min),
    precio: Number(r.precio_cents) / 100,
    estado: r.estado,
    profesional_nombre: r.profesional_nombre,
    sede_nombre: r.sede_nombre,
    notas: r.notas,
    created_at: at(Number(r.created_at)),
  }),
} as const satisfies CollectionShape;

export type CitasQuery = Static<typeof CitasQuery>;
export type CitasResponse = Static<typeof CitasList>;
export type Cita = Static<typeof Cita>;
