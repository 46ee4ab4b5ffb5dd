// The kinds of environment variable, as TypeBox schemas carrying what the loader and the docs
// need: the variable's name (`env`), its default, bounds and allowed values as plain JSON Schema
// keywords, a one-line `description` for the docs' tables, and (under VAR) how its text is read
// and what the error says when it is refused. variables.ts lists every variable with these;
// config.ts validates from them; tools/config-docs.ts writes the docs' tables from them.
import { Type, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox';

/** Where a variable's reading rules live on its schema (a symbol: never in a JSON rendering). */
export const VAR = Symbol('clinic-api.variable');

export interface VarRules {
  /** The text as given (trimmed, unless `keepBlank`) -> the value the schema checks. */
  parse: (raw: string) => unknown;
  /** What is wrong, after "NAME: ", when the schema refuses the value (never echoes a secret). */
  problem: (raw: string) => string;
  /** A check beyond the schema's (a URL's parts): the problem, or null. */
  refine?: (value: unknown) => string | null;
  /** Whitespace alone is a value (refused), not "unset": only whole numbers, as ever. */
  keepBlank?: boolean;
  /** The default as the docs say it, when the value would not (e.g. "generated into DATA_DIR"). */
  defaultDoc?: string;
  /** The allowed values as the docs say them; else from the schema's bounds or literals. */
  allowedDoc?: string;
}

/** Every variable's schema: a TypeBox schema with its name, default and description. */
export type VarSchema = TSchema & { env: string; description: string; default: unknown; [VAR]: VarRules };

interface Common {
  description: string;
  defaultDoc?: string;
  allowedDoc?: string;
}

/** The schema, with its reading rules attached (its static type stays TypeBox's own). */
function withRules<T extends TSchema>(schema: T, rules: VarRules): T {
  return Object.assign(schema, { [VAR]: rules });
}

/** A whole number from `minimum` to `maximum` (digits only: no sign, point or unit). */
export function int(env: string, o: Common & { default: number; minimum: number; maximum: number }) {
  const { defaultDoc, allowedDoc, ...schema } = o;
  return withRules(Type.Integer({ ...schema, env }), {
    keepBlank: true,
    parse: (raw) => (/^\d+$/.test(raw.trim()) ? Number(raw) : raw),
    problem: (raw) => `must be a whole number from ${o.minimum} to ${o.maximum}, got "${raw}"`,
    defaultDoc,
    allowedDoc,
  });
}

/** A whole number as int(), or unset (null: the code decides, e.g. from the machine). */
export function optionalInt(env: string, o: Common & { minimum: number; maximum: number }) {
  const { defaultDoc, allowedDoc, description, minimum, maximum } = o;
  return withRules(Type.Union([Type.Integer({ minimum, maximum }), Type.Null()], { env, description, default: null }), {
    parse: (raw) => (/^\d+$/.test(raw) ? Number(raw) : raw),
    problem: (raw) => `must be a whole number from ${minimum} to ${maximum}, got "${raw}"`,
    defaultDoc,
    allowedDoc: allowedDoc ?? `${minimum} to ${maximum}`,
  });
}

/** true or false (also 1 or 0, any case). */
export function flag(env: string, o: Common & { default: boolean }) {
  const { defaultDoc, allowedDoc, ...schema } = o;
  return withRules(Type.Boolean({ ...schema, env }), {
    parse: (raw) => ({ true: true, '1': true, false: false, '0': false })[raw.toLowerCase()] ?? raw,
    problem: (raw) => `must be true or false, got "${raw}"`,
    defaultDoc,
    allowedDoc,
  });
}

/** The words as TypeBox literals, typed as a tuple (TypeBox decodes a union's types from a tuple only). */
export function literals<const V extends readonly [string, ...string[]]>(values: V) {
  return values.map((v) => Type.Literal(v)) as unknown as LiteralTuple<V>;
}

type LiteralTuple<V extends readonly string[]> = { -readonly [K in keyof V]: TLiteral<V[K]> };

/** One of a few words, any case. */
export function oneOf<const V extends readonly [string, ...string[]]>(
  env: string,
  values: V,
  o: Common & { default: V[number]; problem?: string },
) {
  const { defaultDoc, allowedDoc, problem, ...schema } = o;
  // Typed by hand: TypeBox cannot infer a union's members from a generic tuple.
  return withRules(Type.Union(literals(values), { ...schema, env }) as unknown as TUnion<LiteralTuple<V>>, {
    parse: (raw) => raw.toLowerCase(),
    problem: () => problem ?? `must be one of ${values.join(', ')}`,
    defaultDoc,
    allowedDoc,
  });
}

/** Text matching `pattern`. */
export function text(env: string, o: Common & { default: string; pattern: string; problem: (raw: string) => string }) {
  const { defaultDoc, allowedDoc, problem, ...schema } = o;
  return withRules(Type.String({ ...schema, env }), { parse: (raw) => raw, problem, defaultDoc, allowedDoc });
}

/**
 * Text, or unset (null). `problem` never shows the value (a secret, or a URL with a password);
 * `refine` checks what a pattern cannot (a URL's parts).
 */
export function optionalText(
  env: string,
  o: Common & {
    minLength?: number;
    pattern?: string;
    problem: () => string;
    refine?: (value: string) => string | null;
  },
) {
  const { defaultDoc, allowedDoc, problem, refine, description, ...bounds } = o;
  return withRules(Type.Union([Type.String(bounds), Type.Null()], { env, description, default: null }), {
    parse: (raw) => raw,
    problem,
    refine: refine && ((v) => (typeof v === 'string' ? refine(v) : null)),
    defaultDoc,
    allowedDoc,
  });
}

/** A value of any other shape: `parse` reads the text into what `schema` checks. */
export function shaped<T extends TSchema>(
  env: string,
  schema: T,
  o: Common & { default: unknown; parse: (raw: string) => unknown; problem: (raw: string) => string },
) {
  const { defaultDoc, allowedDoc, parse, problem, description } = o;
  return withRules(Object.assign(schema, { env, description, default: o.default }), { parse, problem, defaultDoc, allowedDoc });
}

/** A TypeBox object's properties in order, for the walkers below. */
function entries(schema: TSchema): [string, TSchema][] {
  return Object.entries((schema as { properties?: Record<string, TSchema> }).properties ?? {});
}

export interface Variable {
  /** where the value sits in Config, e.g. ['http', 'headersTimeoutMs'] */
  path: string[];
  schema: VarSchema;
}

/** Every variable of `schema`, in the order written, with where its value goes. */
export function variablesOf(schema: TSchema, at: string[] = []): Variable[] {
  return entries(schema).flatMap(([key, s]) =>
    VAR in s ? [{ path: [...at, key], schema: s as VarSchema }] : variablesOf(s, [...at, key]),
  );
}
