// The one checker of what clients and operators send: query strings and path parameters (the
// REST API and an MCP tool's arguments, http/query-validator.ts) and the import's lines
// (services/import-lines.ts) are checked by Ajv, compiled once from their TypeBox schemas, the
// same schemas that type the code and write the OpenAPI document. The callers only phrase what
// Ajv found, per field, in the words of docs/errors.md and docs/import.md.
//
// Ajv runs in strict mode: a schema that uses a keyword Ajv does not enforce (a typo, or one it has
// no code for, such as `formatMinimum` without ajv-formats) or a format nobody registered fails to
// compile, and since every schema is compiled when its route, tool or the import module is set
// up, the service fails at start instead of documenting a rule it does not apply.
import { Ajv, type ErrorObject } from 'ajv';
import { isValidDate, parseTimestamp } from '../time.js';
import { UUID_RE } from './records.js';

/** An e-mail address as the import takes it: something@something.tld, no spaces. */
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const ajv = new Ajv({
  strict: true,
  // `type: ["string", "null"]`: how the schemas say nullable (OpenAPI 3.1)
  allowUnionTypes: true,
  // every problem of an input, so that each field's own can be told (a line's are all reported)
  allErrors: true,
  // precio's "at most 2 decimals" (multipleOf 0.01) on binary floating point
  multipleOfPrecision: 6,
  formats: {
    // a record id: a UUID in any case (it is stored in lower case)
    uuid: (v: string) => UUID_RE.test(v),
    // a calendar date that exists, YYYY-MM-DD
    date: (v: string) => isValidDate(v),
    // RFC 3339 with an offset or Z, within RFC 3339's ranges
    'date-time': (v: string) => parseTimestamp(v) !== null,
    email: (v: string) => EMAIL_RE.test(v),
  },
});

/** What the checker found wrong with one field: the keywords its value fails (`type`, `maxLength`, `format`...). */
export type FieldFaults = ReadonlySet<string>;

export interface CheckResult {
  ok: boolean;
  /** by field (a property of the object), the keywords it fails; `required` for a missing one */
  faults: Map<string, Set<string>>;
  /** properties the schema does not have, in the input's order (additionalProperties: false) */
  unknown: string[];
}

export type Checker = (value: unknown) => CheckResult;

const PASSED: CheckResult = { ok: true, faults: new Map(), unknown: [] };

/**
 * Compiles `schema` (a TypeBox object schema: plain JSON Schema) into a checker. Throws, naming
 * `what`, when the schema uses a keyword or a format the checker does not enforce.
 */
export function compileChecker(what: string, schema: object): Checker {
  let validate: ReturnType<typeof ajv.compile>;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    const reason = (err as Error).message;
    throw new Error(`${what}: the schema has a rule the checker does not enforce (${reason}); remove it or teach the checker`, {
      cause: err,
    });
  }
  return (value) => {
    if (validate(value)) return PASSED;
    return collect(validate.errors ?? []);
  };
}

function collect(errors: readonly ErrorObject[]): CheckResult {
  const faults = new Map<string, Set<string>>();
  const unknown: string[] = [];
  const add = (field: string, keyword: string) => {
    let set = faults.get(field);
    if (!set) faults.set(field, (set = new Set()));
    set.add(keyword);
  };
  for (const e of errors) {
    if (e.keyword === 'additionalProperties') unknown.push((e.params as { additionalProperty: string }).additionalProperty);
    else if (e.keyword === 'required') add((e.params as { missingProperty: string }).missingProperty, 'required');
    // a property's own keyword: its path is /name (the schemas are flat objects)
    else add(e.instancePath.slice(1).split('/')[0]!.replace(/~1/g, '/').replace(/~0/g, '~'), e.keyword);
  }
  return { ok: false, faults, unknown };
}
