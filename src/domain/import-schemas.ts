// The parts the import format's lines (docs/import.md) are made of, as TypeBox: each collection's
// line schema (src/collections/) is built from them and from the API's ids and phone numbers
// (./schema-parts.ts), so the import and the API cannot disagree on what a UUID or an E.164 number
// is. The lines are checked by the one checker (./checker.ts) and phrased by
// services/import-lines.ts; a schema's properties are in the format's order, which is also the
// order a line's problems are reported in.
import { Type, type TSchema } from '@sinclair/typebox';

/** Absent or null: the field is left empty. */
export const OrNull = <T extends TSchema>(schema: T) =>
  Type.Optional(Type.Unsafe<T['static'] | null>({ ...schema, type: [schema.type as string, 'null'] }));

/** The pattern of text: something other than spaces in it (`trim() !== ''`). */
export const TEXT_PATTERN = '\\S';
/**
 * Text up to `max` characters. Its characters are a rule of their own, checked after the schema
 * (services/import-lines.ts, textFault): tab, LF and CR only among the control characters.
 */
export const Text = (max: number) => Type.String({ pattern: TEXT_PATTERN, maxLength: max });
export const Timestamp = Type.String({ format: 'date-time' });
export const DateOnly = Type.String({ format: 'date' });
/** A language tag such as es, en or pt-BR. */
export const Language = Type.String({ pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$' });
export const Email = Type.String({ pattern: TEXT_PATTERN, maxLength: 254, format: 'email' });
export const OneOf = (values: readonly string[]) => Type.Unsafe<string>({ type: 'string', enum: [...values] });
