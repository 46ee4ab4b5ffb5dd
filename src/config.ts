// The only reader of process.env. loadConfig() validates every variable up front and names the
// bad one, so a mistyped deployment fails at start-up instead of misbehaving later. What the
// variables are is written once, in config/variables.ts (a TypeBox schema: name, kind, default,
// bounds, description); the rules between them in config/rules.ts.
import type { StaticDecode } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { DomainError } from './errors.js';
import { VAR, variablesOf, type VarSchema } from './config/kinds.js';
import { CROSS_RULES } from './config/rules.js';
import { ConfigSchema } from './config/variables.js';

export { ConfigSchema };

type DeepReadonly<T> = T extends readonly (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** The configuration: config/variables.ts's schema, decoded (units applied, DATA_DIR resolved), frozen. */
export type Config = DeepReadonly<StaticDecode<typeof ConfigSchema>>;
/** Timeouts and caps against slow and greedy clients (docs/operations.md). */
export type HttpLimits = Config['http'];
/** Past either threshold, requests are refused with 503 service_unavailable (0: not checked). */
export type OverloadLimits = Config['overload'];
/** Webhook deliveries (docs/webhooks.md, "Configuration"). */
export type WebhookConfig = Config['webhooks'];

/** Every variable, in the schema's order, with where its value goes in Config. */
export const VARIABLES = variablesOf(ConfigSchema);

/** An invalid variable: reason invalid_config, the variable as the field, named in the message. */
function invalid(variable: string, message: string): DomainError {
  return new DomainError('invalid_config', `${variable}: ${message}`, { field: variable });
}

type Env = Record<string, string | undefined>;

/** One variable's value before decoding: its default when unset (empty or blank), else its text read and checked. */
function readVariable(schema: VarSchema, given: string | undefined): unknown {
  const rules = schema[VAR];
  if (given === undefined || given === '' || (!rules.keepBlank && given.trim() === '')) return structuredClone(schema.default);
  const raw = rules.keepBlank ? given : given.trim();
  const value = rules.parse(raw);
  if (!Value.Check(schema, value)) throw invalid(schema.env, rules.problem(raw));
  const problem = rules.refine?.(value);
  if (problem) throw invalid(schema.env, problem);
  return value;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

export function loadConfig(env: Env = process.env): Config {
  const encoded: Record<string, unknown> = {};
  for (const { path, schema } of VARIABLES) {
    let at = encoded;
    for (const key of path.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>;
    at[path[path.length - 1]!] = readVariable(schema, env[schema.env]);
  }
  const config = Value.Decode(ConfigSchema, encoded);
  for (const rule of CROSS_RULES) {
    const problem = rule.problem(config);
    if (problem !== null) throw invalid(rule.variable, problem);
  }
  return deepFreeze(config);
}
