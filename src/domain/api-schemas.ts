// The API's queries and responses as TypeBox schemas (plain JSON Schema, no HTTP): the single
// source of truth for the listing use-cases' input and output types (services/listings.ts, via
// Static<>), query validation (http/query-validator.ts), response serialization
// (fast-json-stringify) and the OpenAPI document (@fastify/swagger).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ESTADOS, EVENT_TYPES, RESULTADOS } from './records.js';

/** `type: [T, "null"]`: OpenAPI 3.1 / JSON Schema nullability that fast-json-stringify serializes fast. */
function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<T['static'] | null>({ ...schema, type: [schema.type, 'null'] });
}

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time', description: "RFC 3339 with the clinic's UTC offset, whole seconds", examples: ['2026-11-21T10:30:00+01:00'] });
const UpdatedAt = Type.String({
  format: 'date-time',
  description: "When the record last changed as the API shows it (the time of its latest event), RFC 3339 with the clinic's offset",
  examples: ['2026-11-21T10:30:00+01:00'],
});
const DateOnly = Type.String({ format: 'date', examples: ['2026-11-21'] });
const Phone = Type.String({ pattern: '^\\+[0-9]{8,15}$', description: 'E.164', examples: ['+34600123456'] });

/** Page sizes when `limit` is left out. */
export const DEFAULT_LIMITS = { citas: 100, clientas: 200, llamadas: 100 } as const;
/** citas: `hasta` defaults to today + this many days. */
export const CITAS_DEFAULT_DAYS = 30;
/** llamadas: `desde` defaults to today - this many days. */
export const LLAMADAS_DEFAULT_DAYS_BACK = 7;

const MAX_OFFSET = 2_147_483_647;
const limitParam = (def: number) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: def, description: `Page size, 1 to 500 (default ${def})` }));
const offsetParam = Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: 'Records to skip, for paging' }));
const dateParam = (description: string) => Type.Optional(Type.String({ format: 'date', description }));
const updatedSinceParam = Type.Optional(Type.String({
  format: 'date-time',
  description: 'Only records changed at or after this RFC 3339 timestamp (with an offset or Z), ordered by updated_at then id; ' +
    'the default date window does not apply (an explicit desde/hasta does). For tools that cannot keep a feed cursor: see GET /api/v1/eventos for a complete change feed',
  examples: ['2026-03-28T09:00:00+01:00'],
}));
const enumParam = <T extends string>(values: readonly T[], description: string) =>
  Type.Optional(Type.Unsafe<T>({ type: 'string', enum: [...values], description }));

export const CitasQuery = Type.Object(
  {
    desde: dateParam("First day (clinic's local date), inclusive. Default: today (none with updated_since)"),
    hasta: dateParam(`Last day, inclusive. Default: today + ${CITAS_DEFAULT_DAYS} days (none with updated_since)`),
    estado: enumParam(ESTADOS, 'Only appointments in this status'),
    updated_since: updatedSinceParam,
    limit: limitParam(DEFAULT_LIMITS.citas),
    offset: offsetParam,
  },
  { additionalProperties: false },
);

export const ClientasQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "Case- and accent-insensitive substring of the name, or digits of the phone ('600 12')" })),
    vip: enumParam(['true', 'false'], 'true: VIP clients only; false: non-VIP only'),
    updated_since: updatedSinceParam,
    limit: limitParam(DEFAULT_LIMITS.clientas),
    offset: offsetParam,
  },
  { additionalProperties: false },
);

export const LlamadasQuery = Type.Object(
  {
    desde: dateParam(`First day, inclusive. Default: today - ${LLAMADAS_DEFAULT_DAYS_BACK} days (none with updated_since)`),
    hasta: dateParam('Last day, inclusive. Default: no upper bound'),
    resultado: enumParam(RESULTADOS, 'Only calls with this outcome'),
    updated_since: updatedSinceParam,
    limit: limitParam(DEFAULT_LIMITS.llamadas),
    offset: offsetParam,
  },
  { additionalProperties: false },
);

export const Cita = Type.Object({
  id: Uuid,
  fecha_hora: Timestamp,
  cliente_nombre: Type.String(),
  telefono: Phone,
  servicio: Type.String(),
  duracion_min: Type.Integer({ minimum: 1 }),
  precio: Type.Number({ minimum: 0, description: 'In the currency named by moneda, at most 2 decimals' }),
  moneda: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency of precio', examples: ['EUR'] }),
  estado: Type.Unsafe<string>({ type: 'string', enum: [...ESTADOS] }),
  profesional_nombre: Type.String(),
  sede_nombre: Type.String(),
  notas: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: UpdatedAt,
});

export const Clienta = Type.Object({
  id: Uuid,
  nombre: Type.String(),
  telefono: Phone,
  email: Nullable(Type.String()),
  idioma: Nullable(Type.String()),
  vip: Type.Boolean(),
  total_citas: Type.Integer({ minimum: 0 }),
  total_llamadas: Type.Integer({ minimum: 0 }),
  ultima_cita: Nullable(DateOnly),
  ultima_llamada: Nullable(Timestamp),
  cliente_desde: DateOnly,
  created_at: Timestamp,
  updated_at: UpdatedAt,
});

export const Llamada = Type.Object({
  id: Uuid,
  fecha_hora: Timestamp,
  cliente_nombre: Nullable(Type.String()),
  telefono_caller: Phone,
  duracion_segundos: Type.Integer({ minimum: 0 }),
  resultado: Type.Unsafe<string>({ type: 'string', enum: [...RESULTADOS] }),
  idioma: Type.String(),
  created_at: Timestamp,
  updated_at: UpdatedAt,
});

const paging = {
  total: Type.Integer({ minimum: 0, description: 'All records matching the filters, ignoring limit and offset' }),
  limit: Type.Integer(),
  offset: Type.Integer(),
};

export const CitasResponse = Type.Object({
  citas: Type.Array(Cita),
  total: paging.total,
  rango: Type.Object(
    { desde: Nullable(DateOnly), hasta: Nullable(DateOnly) },
    { description: 'The days applied; null ends only with updated_since (no default window)' },
  ),
  limit: paging.limit,
  offset: paging.offset,
});

export const ClientasResponse = Type.Object({ clientas: Type.Array(Clienta), ...paging });

export const LlamadasResponse = Type.Object({
  llamadas: Type.Array(Llamada),
  total: paging.total,
  desde: Nullable({ ...DateOnly, description: 'The first day applied; null only with updated_since and no desde' }),
  hasta: Nullable(DateOnly),
  limit: paging.limit,
  offset: paging.offset,
});

// The change feed: GET /api/v1/eventos.

/** Events per page when `limit` is left out. */
export const FEED_DEFAULT_LIMIT = 100;

export const EventosQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({
      minLength: 1, maxLength: 100,
      description: 'Where to continue: a next_cursor of an earlier answer, or "now" for the present (no events; its next_cursor follows from now on). ' +
        'Leave it out to start at the oldest event kept',
    })),
    limit: limitParam(FEED_DEFAULT_LIMIT),
    tipo: Type.Optional(Type.String({
      minLength: 1, maxLength: 400,
      description: `Only these event types, comma-separated: ${EVENT_TYPES.join(', ')}`,
    })),
  },
  { additionalProperties: false },
);

const Deleted = Type.Object({ id: Uuid }, { description: 'A deleted record (*.eliminada): its id only' });

export const Evento = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Unique; also the webhook-id of its webhook deliveries' }),
  tipo: Type.Unsafe<string>({ type: 'string', enum: [...EVENT_TYPES] }),
  ocurrido_at: Timestamp,
  datos: Type.Unsafe<unknown>({
    anyOf: [Cita, Clienta, Llamada, Deleted],
    description: "The record as the API showed it at the event (the same as its updated_at); for *.eliminada, {\"id\": ...}. A clienta's derived counters (total_citas, ultima_cita ...) are as of the event: they change without events",
  }),
});

export const EventosResponse = Type.Object({
  eventos: Type.Array(Evento, { description: 'Oldest first' }),
  next_cursor: Type.String({ description: 'Always present: send it as cursor to get what happened after this page' }),
  has_more: Type.Boolean({ description: 'true: more events are already waiting; ask again at once' }),
});

export type EventosQuery = Static<typeof EventosQuery>;
export type Cita = Static<typeof Cita>;
export type Clienta = Static<typeof Clienta>;
export type Llamada = Static<typeof Llamada>;
export type CitasQuery = Static<typeof CitasQuery>;
export type ClientasQuery = Static<typeof ClientasQuery>;
export type LlamadasQuery = Static<typeof LlamadasQuery>;
export type CitasResponse = Static<typeof CitasResponse>;
export type ClientasResponse = Static<typeof ClientasResponse>;
export type LlamadasResponse = Static<typeof LlamadasResponse>;
