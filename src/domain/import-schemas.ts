// The import format's lines (docs/import.md) as TypeBox schemas, checked by the one checker
// (./checker.ts) and phrased by services/import-lines.ts. Ids and phone numbers are the API's own
// schemas (./api-schemas.ts), so the import and the API cannot disagree on what a UUID or an E.164
// number is. Each schema's properties are in the format's order, which is also the order a line's
// problems are reported in.
import { Type, type TSchema } from '@sinclair/typebox';
import { Phone, Uuid } from './api-schemas.js';
import { ESTADOS, RESULTADOS } from './records.js';

/** The record types of the format. */
export const LINE_TYPES = ['clienta', 'cita', 'llamada'] as const;
export type LineType = (typeof LINE_TYPES)[number];

/** Absent or null: the field is left empty. */
const OrNull = <T extends TSchema>(schema: T) =>
  Type.Optional(Type.Unsafe<T['static'] | null>({ ...schema, type: [schema.type as string, 'null'] }));

/** The pattern of text: something other than spaces in it (`trim() !== ''`). */
export const TEXT_PATTERN = '\\S';
/**
 * Text up to `max` characters. Its characters are a rule of their own, checked after the schema
 * (services/import-lines.ts, textFault): tab, LF and CR only among the control characters.
 */
const Text = (max: number) => Type.String({ pattern: TEXT_PATTERN, maxLength: max });
const Timestamp = Type.String({ format: 'date-time' });
const DateOnly = Type.String({ format: 'date' });
/** A language tag such as es, en or pt-BR. */
export const Language = Type.String({ pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$' });
const Email = Type.String({ pattern: TEXT_PATTERN, maxLength: 254, format: 'email' });
const OneOf = (values: readonly string[]) => Type.Unsafe<string>({ type: 'string', enum: [...values] });

export const ClientaLine = Type.Object(
  {
    type: Type.Literal('clienta'),
    id: Uuid,
    nombre: Text(200),
    telefono: Phone,
    email: OrNull(Email),
    idioma: OrNull(Language),
    vip: Type.Boolean(),
    cliente_desde: DateOnly,
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

export const CitaLine = Type.Object(
  {
    type: Type.Literal('cita'),
    id: Uuid,
    clienta_id: Uuid,
    fecha_hora: Timestamp,
    servicio: Text(200),
    duracion_min: Type.Integer({ minimum: 1, maximum: 1440 }),
    // in the clinic's currency, at most 2 decimals (stored in cents)
    precio: Type.Number({ minimum: 0, maximum: 10_000_000, multipleOf: 0.01 }),
    estado: OneOf(ESTADOS),
    profesional_nombre: Text(200),
    sede_nombre: Text(200),
    notas: OrNull(Text(2000)),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

export const LlamadaLine = Type.Object(
  {
    type: Type.Literal('llamada'),
    id: Uuid,
    clienta_id: OrNull(Uuid),
    fecha_hora: Timestamp,
    cliente_nombre: OrNull(Text(200)),
    telefono_caller: Phone,
    duracion_segundos: Type.Integer({ minimum: 0, maximum: 86_400 }),
    resultado: OneOf(RESULTADOS),
    idioma: Language,
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

/** A deletion line: `{"type": ..., "id": ..., "deleted": true}` and nothing else. */
export const DeletionLine = Type.Object(
  {
    type: OneOf(LINE_TYPES),
    id: Uuid,
    deleted: Type.Literal(true),
  },
  { additionalProperties: false },
);

export const LINE_SCHEMAS = { clienta: ClientaLine, cita: CitaLine, llamada: LlamadaLine } as const;
