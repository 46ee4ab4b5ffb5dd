// The docs' tables of environment variables, written from the schema (src/config/variables.ts):
// docs/configuration.md's full table and the tables of one topic in docs/. A table sits between
//   <!-- config-table: GROUP -->   and   <!-- /config-table -->
// where GROUP is `all`, one of the schema's groups (http, overload, webhooks), or a
// comma-separated list of variables.
// `npm run docs:config` rewrites them (scripts/docs-config.ts); test/docs/config-docs.test.ts
// fails when a committed table differs from what the schema gives.
import { VARIABLES } from '../src/config.js';
import { VAR, type Variable } from '../src/config/kinds.js';
import { CROSS_RULES } from '../src/config/rules.js';

/** The files holding generated tables, from the repository's root. */
export const CONFIG_DOC_FILES = ['docs/configuration.md', 'docs/operations.md', 'docs/postgres.md', 'docs/webhooks.md', 'docs/oauth.md'];

const BLOCK_RE = /(<!-- config-table: ([A-Za-z0-9_,]+) -->\n)[\s\S]*?(<!-- \/config-table -->)/g;

function code(v: unknown): string {
  return `\`${Array.isArray(v) ? v.join(',') : String(v)}\``;
}

function defaultOf({ schema }: Variable): string {
  const rules = schema[VAR];
  if (rules.defaultDoc !== undefined) return rules.defaultDoc;
  return schema.default === null ? 'unset' : code(schema.default);
}

function allowedOf({ schema }: Variable): string {
  const s = schema as { minimum?: number; maximum?: number; type?: string; anyOf?: { const?: unknown }[] };
  const own =
    schema[VAR].allowedDoc ??
    (s.type === 'integer'
      ? `${s.minimum} to ${s.maximum}`
      : s.type === 'boolean'
        ? '`true`, `false`'
        : (s.anyOf ?? []).map((l) => code(l.const)).join(', '));
  return [own, ...CROSS_RULES.filter((r) => r.variable === schema.env).map((r) => r.doc)].join('; ');
}

/** The variables of `group`: `all`, a group of the schema, or a comma-separated list of names (in that order). */
function variablesOf(group: string): Variable[] {
  if (group === 'all') return VARIABLES;
  if (/^[a-z]+$/.test(group)) return VARIABLES.filter((v) => v.path.length > 1 && v.path[0] === group);
  return group.split(',').map((name) => {
    const v = VARIABLES.find((x) => x.schema.env === name);
    if (!v) throw new Error(`config-table: no variable ${name} in src/config/variables.ts`);
    return v;
  });
}

/** The markdown table of `group` (`all`: every variable). */
export function configTable(group: string): string {
  const rows = variablesOf(group);
  if (rows.length === 0) throw new Error(`config-table: no variables in group "${group}"`);
  return [
    '| variable | default | allowed | meaning |',
    '|---|---|---|---|',
    ...rows.map((v) => `| \`${v.schema.env}\` | ${defaultOf(v)} | ${allowedOf(v)} | ${v.schema.description} |`),
  ].join('\n');
}

/** `markdown` with every generated table as the schema gives it now. */
export function withConfigTables(markdown: string): string {
  return markdown.replace(BLOCK_RE, (_all, open: string, group: string, close: string) => `${open}${configTable(group)}\n${close}`);
}

/** The groups whose tables `markdown` holds, in order. */
export function configTableGroups(markdown: string): string[] {
  return [...markdown.matchAll(BLOCK_RE)].map((m) => m[2]!);
}
