// A tool's arguments, checked by the REST validator's rules (../query-validator.ts) compiled from
// the same schema as its route: the same defaults, ranges, formats and messages. Arguments come
// as JSON, so a number or a boolean is taken as the text it stands for (`limit: 50` is `limit=50`,
// `vip: true` is `vip=true`); null, lists and objects are refused, as a repeated or malformed
// query parameter is. A refusal is a message for the model: the argument, what is wrong, the fix.
import type { TObject } from '@sinclair/typebox';
import { ApiError } from '../../errors.js';
import { compileQueryValidator, type ObjectSchema } from '../query-validator.js';

export type ArgsResult = { value: Record<string, unknown> } | { error: string; param: string | null };

/** What a JSON value is, for a refusal: "null", "a list", "an object", "a string"... */
export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

export function compileArgs(tool: string, schema: TObject): (args: Record<string, unknown> | undefined) => ArgsResult {
  const check = compileQueryValidator(schema as ObjectSchema, { inUrl: false });
  const names = Object.keys(schema.properties);
  const required = schema.required ?? [];
  const takes = names.length ? `${tool} takes: ${names.join(', ')}` : `${tool} takes no arguments`;
  const invalid = (param: string, message: string): ArgsResult => ({
    error: `Invalid argument ${param}: ${message}. Correct it and call ${tool} again.`,
    param,
  });
  return (args) => {
    const raw: Record<string, string> = {};
    for (const [name, v] of Object.entries(args ?? {})) {
      if (!names.includes(name)) return { error: `Unknown argument ${name}: ${takes}. Leave ${name} out and call again.`, param: name };
      if (typeof v === 'string') raw[name] = v;
      else if (typeof v === 'number' || typeof v === 'boolean') raw[name] = String(v);
      else if (v === null) return invalid(name, `${name} is null; leave it out to use its default`);
      else return invalid(name, `${name} must be one value, not ${describeValue(v)}`);
    }
    for (const name of required) if (!(name in raw)) return invalid(name, `${name} is required`);
    const res = check(raw);
    if ('error' in res) {
      const e: ApiError = res.error;
      if (e.code === 'unknown_parameter') return { error: `${e.message}`, param: e.param ?? null };
      return invalid(e.param ?? '?', e.message);
    }
    return res;
  };
}
