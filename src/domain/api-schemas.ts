// The API's queries and responses as TypeBox schemas (plain JSON Schema, no HTTP): the single
// source of truth for the listing use-cases' input and output types (services/listings.ts, via
// Static<>), query validation (http/query-validator.ts), response serialization
// (fast-json-stringify) and the OpenAPI document (@fastify/swagger).
//
// Every object a client receives is a named schema (named(): its `$id` is its name under the
// OpenAPI document's components.schemas), and other schemas and routes point at it with ref(),
// so code generators produce named types (`Cita`, `CitasList`, ...) instead of anonymous ones.
// Names: a record in the singular (`Cita`), a list response `<Plural>List`, any other object by
// what it is (`Me`, `Clinica`). A new named schema goes into API_COMPONENTS.
import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import { ESTADOS, RESULTADOS } from './records.js';

/** An object schema with a name: `$id` (its key in components.schemas) and a description. */
function named<T extends TProperties>(name: string, description: string, properties: T): TObject<T> {
  return Type.Object(properties, { $id: name, description });
}

/** A reference to a named schema, typed as that schema. */
export function ref<T extends TSchema>(schema: T) {
  if (!schema.$id) throw new Error('ref() needs a named schema');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
}

/** `type: [T, "null"]`: OpenAPI 3.1 / JSON Schema nullability that fast-json-stringify serializes fast. */
function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<T['static'] | null>({ ...schema, type: [schema.type, 'null'] });
}

const Uuid = Type.String({ format: 'uuid', examples: ['24858e88-d2f1-40a6-9fc9-91500bc9b3cd'] });
const Timestamp = Type.String({ format: 'date-time', description: "RFC 3339 with the clinic's UTC offset, whole seconds", examples: ['2026-11-21T10:30:00+01:00'] });
const DateOnly = Type.String({ format: 'date', examples: ['2026-11-21'] });
const Phone = Type.String({ pattern: '^\\+[0-9]{8,15}$', description: 'E.164', examples: ['+34600123456'] });
const Text = (examples: string[], description?: string) => Type.String(description ? { description, examples } : { examples });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code', examples: ['EUR'] });

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

export const Cita = named('Cita', 'An appointment', {
  id: Uuid,
  fecha_hora: Timestamp,
  cliente_nombre: Text(['Chloé Jiménez Sáez'], "The client's current name"),
  telefono: Phone,
  servicio: Text(['Presoterapia']),
  duracion_min: Type.Integer({ minimum: 1, examples: [30] }),
  precio: Type.Number({ minimum: 0, description: 'In the currency named by moneda, at most 2 decimals', examples: [35] }),
  moneda: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency of precio', examples: ['EUR'] }),
  estado: Type.Unsafe<string>({ type: 'string', enum: [...ESTADOS], examples: ['confirmada'] }),
  profesional_nombre: Text(['Laura Martín Ruiz']),
  sede_nombre: Text(['Sede Nervión']),
  notas: Nullable(Text(['No usar acetona'])),
  created_at: Timestamp,
});

export const Clienta = named('Clienta', 'A client of the clinic', {
  id: Uuid,
  nombre: Text(['María López García']),
  telefono: Phone,
  email: Nullable(Text(['maria.lopez@example.com'])),
  idioma: Nullable(Text(['es'], 'Preferred language')),
  vip: Type.Boolean(),
  total_citas: Type.Integer({ minimum: 0, description: "All of the client's appointments, every status", examples: [12] }),
  total_llamadas: Type.Integer({ minimum: 0, description: 'All calls linked to the client', examples: [3] }),
  ultima_cita: Nullable(Type.String({ format: 'date', description: 'Local date of the latest appointment that starts at or before now', examples: ['2026-11-14'] })),
  ultima_llamada: Nullable(Type.String({ format: 'date-time', description: 'Timestamp of the latest linked call', examples: ['2026-11-20T18:02:11+01:00'] })),
  cliente_desde: DateOnly,
  created_at: Timestamp,
});

export const Llamada = named('Llamada', "A call answered by the clinic's voice assistant", {
  id: Uuid,
  fecha_hora: Timestamp,
  cliente_nombre: Nullable(Text(['María López García'], 'null for an unknown caller')),
  telefono_caller: Phone,
  duracion_segundos: Type.Integer({ minimum: 0, examples: [95] }),
  resultado: Type.Unsafe<string>({ type: 'string', enum: [...RESULTADOS], examples: ['agendada'] }),
  idioma: Text(['es']),
  created_at: Timestamp,
});

const paging = {
  total: Type.Integer({ minimum: 0, description: 'All records matching the filters, ignoring limit and offset', examples: [78] }),
  limit: Type.Integer({ description: 'The page size applied', examples: [100] }),
  offset: Type.Integer({ description: 'The offset applied', examples: [0] }),
};

export const Rango = named('Rango', 'The date range applied (local dates, both inclusive)', { desde: DateOnly, hasta: DateOnly });

export const CitasList = named('CitasList', 'A page of appointments', {
  citas: Type.Array(ref(Cita)),
  total: paging.total,
  rango: ref(Rango),
  limit: paging.limit,
  offset: paging.offset,
});

export const ClientasList = named('ClientasList', 'A page of clients', { clientas: Type.Array(ref(Clienta)), ...paging });

export const LlamadasList = named('LlamadasList', 'A page of calls', {
  llamadas: Type.Array(ref(Llamada)),
  total: paging.total,
  desde: Type.String({ format: 'date', description: 'The first day applied', examples: ['2026-11-14'] }),
  hasta: Nullable(Type.String({ format: 'date', description: 'The last day applied; null: no upper bound' })),
  limit: paging.limit,
  offset: paging.offset,
});

/** GET /me takes no parameters: any is an unknown_parameter. */
export const MeQuery = Type.Object({}, { additionalProperties: false });

export const Clinica = named('Clinica', "The API key's clinic", {
  id: Uuid,
  nombre: Text(['Clínica Sol']),
  zona_horaria: Text(['Europe/Madrid'], 'IANA time zone: dates and timestamps of the API are in it'),
  moneda: Currency,
});

export const ApiKey = named('ApiKey', 'The API key of the request (never the key itself)', {
  id: Uuid,
  nombre: Text(['Zapier'], 'The name given at creation'),
  created_at: Timestamp,
  expires_at: Nullable(Type.String({ format: 'date-time', description: "When the key stops working (RFC 3339 with the clinic's offset); null: never", examples: ['2027-11-21T10:30:00+01:00'] })),
});

export const RateLimitPolicy = named('RateLimitPolicy', "The key's rate limit: a token bucket", {
  rps: Type.Integer({ minimum: 1, description: 'Requests per second, sustained', examples: [60] }),
  burst: Type.Integer({ minimum: 1, description: 'Requests allowed at once, in a burst', examples: [120] }),
});

export const Me = named('Me', 'Who the API key is: its clinic, the key, its rate limit', {
  clinica: ref(Clinica),
  api_key: ref(ApiKey),
  rate_limit: ref(RateLimitPolicy),
});

/** The named schemas, in document order: each is a components.schemas entry. */
export const API_COMPONENTS: readonly TSchema[] = [Cita, Clienta, Llamada, Rango, CitasList, ClientasList, LlamadasList, Clinica, ApiKey, RateLimitPolicy, Me];

export type CitasQuery = Static<typeof CitasQuery>;
export type ClientasQuery = Static<typeof ClientasQuery>;
export type LlamadasQuery = Static<typeof LlamadasQuery>;
export type CitasResponse = Static<typeof CitasList>;
export type ClientasResponse = Static<typeof ClientasList>;
export type LlamadasResponse = Static<typeof LlamadasList>;
export type MeResponse = Static<typeof Me>;
