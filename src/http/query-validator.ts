// A route's query string (and its path parameters, and an MCP tool's arguments: the same rules,
// one place), checked by the one checker (../domain/checker.ts) compiled from the route's TypeBox
// schema, and each refusal phrased for the parameter at fault. What this file adds to the schema
// is what a query string needs: its values are text, so an integer parameter is read from its
// digits (strictly: "1e2", "+1" and "01" are not integers, where Ajv's coercion would take them);
// a repeated or unknown parameter is refused by name; and the first problem in the order the
// client wrote the parameters is the one answered.
import { compileChecker } from '../domain/checker.js';
import { describeTextProblem, textProblem } from '../domain/text.js';
import { ApiError, errors } from '../errors.js';

interface PropSchema {
  type?: string;
  format?: string;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

export interface ObjectSchema {
  properties?: Record<string, PropSchema>;
}

export interface ValidatorOptions {
  /**
   * The values came in a URL's query string (default). false: as JSON (an MCP tool's arguments),
   * where a "+" is sent as it is, so the messages show it as it is and give no URL-encoding hint.
   */
  inUrl?: boolean;
}

/** How one parameter is read from its text, explained when refused, and given to the route. */
interface Param {
  /** the text as the checker sees it (an integer parameter's digits as a number) */
  read: (raw: string) => unknown;
  /** the message for a value the checker refused */
  explain: (raw: string) => string;
  /** the value for the route, or a message: what the schema cannot say (a date's years) */
  finish: (value: unknown, raw: string) => { value: unknown } | { message: string };
}

const INT_RE = /^(0|[1-9][0-9]{0,15})$/;
const DATE_SHAPE_RE = /^\d{4}-\d{2}-\d{2}$/;
// The dates a query may name: wide enough for any clinic's history and plans, narrow enough that
// every date the databases and the time zone rules are given is one they handle alike.
const MIN_YEAR = '1900';
const MAX_YEAR = '2199';

const asText = (raw: string): unknown => raw;
const keep = (value: unknown) => ({ value });

function paramOf(name: string, s: PropSchema, inUrl: boolean): Param {
  if (s.type === 'integer') {
    const message = `${name} must be an integer from ${s.minimum ?? 0} to ${s.maximum ?? Number.MAX_SAFE_INTEGER}`;
    return { read: (raw) => (INT_RE.test(raw) ? Number(raw) : raw), explain: () => message, finish: keep };
  }
  if (s.format === 'date') {
    const range = `${name} must be a date between ${MIN_YEAR}-01-01 and ${MAX_YEAR}-12-31`;
    return {
      read: asText,
      explain: (raw) =>
        DATE_SHAPE_RE.test(raw)
          ? `${name} is not a real calendar date: ${raw}`
          : `${name} must be a date written YYYY-MM-DD, e.g. 2026-03-01`,
      finish: (value, raw) => {
        const year = raw.slice(0, 4);
        return year < MIN_YEAR || year > MAX_YEAR ? { message: range } : { value };
      },
    };
  }
  if (s.format === 'uuid') {
    // The import's rule for ids (any case, stored in lower case), so every stored id is found.
    const message = `${name} must be a UUID, e.g. 24858e88-d2f1-40a6-9fc9-91500bc9b3cd (the id field of a record)`;
    return { read: asText, explain: () => message, finish: (_value, raw) => ({ value: raw.toLowerCase() }) };
  }
  if (s.format === 'date-time') {
    const plus = inUrl ? '%2B' : '+';
    const example = `2026-03-01T10:30:00${plus}01:00 or 2026-03-01T09:30:00Z`;
    const message = `${name} must be an RFC 3339 timestamp with an offset or Z, e.g. ${example}`;
    return {
      read: asText,
      // A "+" in a query string reads as a space: the most common way to send a good offset badly.
      explain: (raw) => (inUrl && / \d{2}:\d{2}$/.test(raw) ? `${message} (a "+" in a URL must be sent as %2B)` : message),
      finish: keep,
    };
  }
  if (s.enum) {
    const message = `${name} must be one of: ${s.enum.join(', ')}`;
    return { read: asText, explain: () => message, finish: keep };
  }
  const message =
    (s.minLength ?? 0) > 0
      ? `${name} must be ${s.minLength} to ${s.maxLength} characters (leave it out to apply no filter)`
      : `${name} must be at most ${s.maxLength} characters`;
  return { read: asText, explain: () => message, finish: keep };
}

export function compileQueryValidator(schema: ObjectSchema, opts: ValidatorOptions = {}) {
  const inUrl = opts.inUrl ?? true;
  const check = compileChecker('a query schema', schema);
  const params = new Map<string, Param>();
  for (const [name, prop] of Object.entries(schema.properties ?? {})) params.set(name, paramOf(name, prop, inUrl));
  const allowed = [...params.keys()];
  return (query: unknown): { value: Record<string, unknown> } | { error: ApiError } => {
    const input = (query ?? {}) as Record<string, unknown>;
    const read: Record<string, unknown> = {};
    for (const name of Object.keys(input)) {
      const param = params.get(name);
      const raw = input[name];
      // an unknown or repeated one is answered below, in its place
      if (param && !Array.isArray(raw)) read[name] = param.read(String(raw));
    }
    const { faults } = check(read);
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(input)) {
      const param = params.get(name);
      if (!param) return { error: errors.unknownParameter(name, allowed) };
      const raw = input[name];
      if (Array.isArray(raw)) return { error: errors.repeatedParameter(name) };
      const value = String(raw);
      // Before any parameter's own check: what no database can hold is refused the same way
      // for every parameter (NUL in `q` was a 500 on both databases). Lengths are the schema's.
      const problem = textProblem(value, Infinity);
      if (problem) return { error: errors.invalidParameter(name, describeTextProblem(name, problem, Infinity)) };
      if (faults.has(name)) return { error: errors.invalidParameter(name, param.explain(value)) };
      const done = param.finish(read[name], value);
      if ('message' in done) return { error: errors.invalidParameter(name, done.message) };
      out[name] = done.value;
    }
    return { value: out };
  };
}
