// The API's queries and responses as TypeBox schemas (plain JSON Schema, no HTTP): the single
// source of truth for the listing use-cases' input and output types (services/listings.ts, via
// Static<>), query validation (http/query-validator.ts), response serialization
// (fast-json-stringify) and the OpenAPI document (@fastify/swagger).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ESTADOS, RESULTADOS } from './records.js';

/** `type: [T, "null"]`: OpenAPI 3.1 / JSON Schema nullability that fast-json-stringify serializes fast. */
function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<T['static'] | null>({ ...schema, type: [schema.type, 'null'] });
}

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time', description: "RFC 3339 with the clinic's UTC offset, whole seconds", examples: ['2026-11-21T10:30:00+01:00'] });
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
const enumParam = <T extends string>(values: readonly T[], description: string) =>
  Type.Optional(Type.Unsafe<T>({ type: 'string', enum: [...values], description }));

export const CitasQuery = Type.Object(
  {
    desde: dateParam("First day (clinic's local date), inclusive. Default: today"),
    hasta: dateParam(`Last day, inclusive. Default: today + ${CITAS_DEFAULT_DAYS} days`),
    estado: enumParam(ESTADOS, 'Only appointments in this status'),
    limit: limitParam(DEFAULT_LIMITS.citas),
    offset: offsetParam,
  },
  { additionalProperties: false },
);

export const ClientasQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "Case- and accent-insensitive substring of the name, or digits of the phone ('600 12')" })),
    vip: enumParam(['true', 'false'], 'true: VIP clients only; false: non-VIP only'),
    limit: limitParam(DEFAULT_LIMITS.clientas),
    offset: offsetParam,
  },
  { additionalProperties: false },
);

export const LlamadasQuery = Type.Object(
  {
    desde: dateParam(`First day, inclusive. Default: today - ${LLAMADAS_DEFAULT_DAYS_BACK} days`),
    hasta: dateParam('Last day, inclusive. Default: no upper bound'),
    resultado: enumParam(RESULTADOS, 'Only calls with this outcome'),
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
});

const paging = {
  total: Type.Integer({ minimum: 0, description: 'All records matching the filters, ignoring limit and offset' }),
  limit: Type.Integer(),
  offset: Type.Integer(),
};

export const CitasResponse = Type.Object({
  citas: Type.Array(Cita),
  total: paging.total,
  rango: Type.Object({ desde: DateOnly, hasta: DateOnly }),
  limit: paging.limit,
  offset: paging.offset,
});

export const ClientasResponse = Type.Object({ clientas: Type.Array(Clienta), ...paging });

export const LlamadasResponse = Type.Object({
  llamadas: Type.Array(Llamada),
  total: paging.total,
  desde: DateOnly,
  hasta: Nullable(DateOnly),
  limit: paging.limit,
  offset: paging.offset,
});

export type CitasQuery = Static<typeof CitasQuery>;
export type ClientasQuery = Static<typeof ClientasQuery>;
export type LlamadasQuery = Static<typeof LlamadasQuery>;
export type CitasResponse = Static<typeof CitasResponse>;
export type ClientasResponse = Static<typeof ClientasResponse>;
export type LlamadasResponse = Static<typeof LlamadasResponse>;
