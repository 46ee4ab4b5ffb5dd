// A strict validator of a route's query string (and of its path parameters, and of an MCP tool's
// arguments: the same rules, one place), compiled from the route's TypeBox schema. Ajv would coerce ("1e2" -> 100, arrays ->
// first item) and strip unknown keys; the contract wants every malformed, repeated or unknown
// parameter refused with a message naming it.
import { UUID_RE } from '../domain/records.js';
import { describeTextProblem, textProblem } from '../domain/text.js';
import { ApiError, errors } from '../errors.js';
import { isValidDate, parseTimestamp } from '../time.js';

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

type Check = (raw: string) => { value: unknown } | { error: ApiError };

export interface ValidatorOptions {
  /**
   * The values came in a URL's query string (default). false: as JSON (an MCP tool's arguments),
   * where a "+" is sent as it is, so the messages show it as it is and give no URL-encoding hint.
   */
  inUrl?: boolean;
}

const INT_RE = /^(0|[1-9][0-9]{0,15})$/;
const MIN_YEAR = '1900';
const MAX_YEAR = '2199';

function compileProp(name: string, s: PropSchema, inUrl: boolean): Check {
  if (s.type === 'integer') {
    const min = s.minimum ?? 0;
    const max = s.maximum ?? Number.MAX_SAFE_INTEGER;
    const message = `${name} must be an integer from ${min} to ${max}`;
    return (raw) => {
      const n = INT_RE.test(raw) ? Number(raw) : NaN;
      return n >= min && n <= max ? { value: n } : { error: errors.invalidParameter(name, message) };
    };
  }
  if (s.format === 'date') {
    return (raw) => {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(raw)) {
        return { error: errors.invalidParameter(name, `${name} must be a date written YYYY-MM-DD, e.g. 2026-03-01`) };
      }
      if (!isValidDate(raw)) return { error: errors.invalidParameter(name, `${name} is not a real calendar date: ${raw}`) };
      const year = raw.slice(0, 4);
      if (year < MIN_YEAR || year > MAX_YEAR) {
        return { error: errors.invalidParameter(name, `${name} must be a date between ${MIN_YEAR}-01-01 and ${MAX_YEAR}-12-31`) };
      }
      return { value: raw };
    };
  }
  if (s.format === 'uuid') {
    // The import's rule for ids (any case, stored in lower case), so every stored id is found.
    const message = `${name} must be a UUID, e.g. 24858e88-d2f1-40a6-9fc9-91500bc9b3cd (the id field of a record)`;
    return (raw) => (UUID_RE.test(raw) ? { value: raw.toLowerCase() } : { error: errors.invalidParameter(name, message) });
  }
  if (s.format === 'date-time') {
    return (raw) => {
      if (parseTimestamp(raw) !== null) return { value: raw };
      // A "+" in a query string reads as a space: the most common way to send a good offset badly.
      const hint = inUrl && / \d{2}:\d{2}$/.test(raw) ? ' (a "+" in a URL must be sent as %2B)' : '';
      const plus = inUrl ? '%2B' : '+';
      return {
        error: errors.invalidParameter(
          name,
          `${name} must be an RFC 3339 timestamp with an offset or Z, e.g. 2026-03-01T10:30:00${plus}01:00 or 2026-03-01T09:30:00Z${hint}`,
        ),
      };
    };
  }
  if (s.enum) {
    const allowed = new Set(s.enum);
    const message = `${name} must be one of: ${s.enum.join(', ')}`;
    return (raw) => (allowed.has(raw) ? { value: raw } : { error: errors.invalidParameter(name, message) });
  }
  const minLength = s.minLength ?? 0;
  const maxLength = s.maxLength ?? 1000;
  const message =
    minLength > 0
      ? `${name} must be ${minLength} to ${maxLength} characters (leave it out to apply no filter)`
      : `${name} must be at most ${maxLength} characters`;
  return (raw) => (raw.length >= minLength && raw.length <= maxLength ? { value: raw } : { error: errors.invalidParameter(name, message) });
}

export function compileQueryValidator(schema: ObjectSchema, opts: ValidatorOptions = {}) {
  const inUrl = opts.inUrl ?? true;
  const checks = new Map<string, Check>();
  for (const [name, prop] of Object.entries(schema.properties ?? {})) checks.set(name, compileProp(name, prop, inUrl));
  const allowed = [...checks.keys()];
  return (query: unknown): { value: Record<string, unknown> } | { error: ApiError } => {
    const out: Record<string, unknown> = {};
    const input = (query ?? {}) as Record<string, unknown>;
    for (const name of Object.keys(input)) {
      const check = checks.get(name);
      if (!check) return { error: errors.unknownParameter(name, allowed) };
      const raw = input[name];
      if (Array.isArray(raw)) return { error: errors.repeatedParameter(name) };
      const value = String(raw);
      // Before any parameter's own check: what no database can hold is refused the same way
      // for every parameter (NUL in `q` was a 500 on both databases). Lengths are each check's.
      const problem = textProblem(value, Infinity);
      if (problem) return { error: errors.invalidParameter(name, describeTextProblem(name, problem, Infinity)) };
      const res = check(value);
      if ('error' in res) return res;
      out[name] = res.value;
    }
    return { value: out };
  };
}
