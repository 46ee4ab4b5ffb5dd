// The docs' tables of environment variables are the schema's (src/config/variables.ts): a
// variable added, removed or changed there and not in the docs fails here until
// `npm run docs:config` is run. Tables of advice (docs/deploy.md's "value | why") may stay
// hand-written, but only about variables that exist, and with the defaults they have.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig, VARIABLES } from '../../src/config.js';
import { VAR } from '../../src/config/kinds.js';
import { CROSS_RULES } from '../../src/config/rules.js';
import { CONFIG_DOC_FILES, configTable, configTableGroups, withConfigTables } from '../../tools/config-docs.js';

const ROOT = new URL('../../', import.meta.url);
const read = (file: string) => fs.readFileSync(new URL(file, ROOT), 'utf8');
const DOCS = [
  'README.md',
  ...fs
    .readdirSync(new URL('docs/', ROOT))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const NAMES = new Set(VARIABLES.map((v) => v.schema.env));

/** The markdown tables of `text` outside the generated blocks: their header and rows. */
function handWrittenTables(text: string): { header: string; rows: string[][] }[] {
  const outside = text.replace(/<!-- config-table: [A-Za-z0-9_,]+ -->[\s\S]*?<!-- \/config-table -->/g, '');
  const tables: { header: string; rows: string[][] }[] = [];
  let current: { header: string; rows: string[][] } | null = null;
  for (const line of outside.split('\n')) {
    if (!line.startsWith('|')) {
      current = null;
      continue;
    }
    if (current === null) tables.push((current = { header: line, rows: [] }));
    else if (!/^\|[-| ]+\|$/.test(line))
      current.rows.push(
        line
          .split('|')
          .slice(1, -1)
          .map((c) => c.trim()),
      );
  }
  return tables;
}

describe('the tables of environment variables', () => {
  it.each(CONFIG_DOC_FILES)('%s: every generated table is what the schema gives (else run npm run docs:config)', (file) => {
    const text = read(file);
    expect(configTableGroups(text).length).toBeGreaterThan(0);
    expect(withConfigTables(text)).toBe(text);
  });

  it("docs/configuration.md's table lists every variable; the docs' tables their group's", () => {
    expect(configTableGroups(read('docs/configuration.md'))).toEqual(['all']);
    const all = configTable('all');
    for (const name of NAMES) expect(all).toContain(`| \`${name}\` |`);
    expect(configTableGroups(read('docs/operations.md'))).toEqual(['http', 'tracing', 'overload']);
    expect(configTableGroups(read('docs/webhooks.md'))).toEqual(['webhooks']);
  });

  it('no file holds a hand-written table of variables and their defaults (only generated ones)', () => {
    for (const file of DOCS) {
      const stray = handWrittenTables(read(file)).filter((t) => /^\| variable \| default \|/.test(t.header));
      expect(stray.map((t) => `${file}: ${t.header}`)).toEqual([]);
    }
  });

  it('a table of advice names only variables that exist, with the defaults they have', () => {
    const advice = DOCS.flatMap((file) =>
      handWrittenTables(read(file))
        .filter((t) => /^\| variable \| value \|/.test(t.header))
        .flatMap((t) => t.rows.map((row) => ({ file, row }))),
    );
    expect(advice.length).toBeGreaterThan(5);
    for (const { file, row } of advice) {
      const name = /^`([A-Z0-9_]+)`$/.exec(row[0]!)?.[1];
      expect(name && NAMES.has(name), `${file}: ${row[0]} is not a variable of src/config/variables.ts`).toBe(true);
      const claimed = /^`([^`]+)` \(default\)$/.exec(row[1]!)?.[1];
      if (claimed !== undefined) {
        const schema = VARIABLES.find((v) => v.schema.env === name)!.schema;
        expect(claimed, `${file}: ${name}'s default`).toBe(String(schema.default));
      }
    }
  });
});

describe('the schema of environment variables', () => {
  it('names each variable once, with a description and its reading rules; every rule names one of them', () => {
    expect(NAMES.size).toBe(VARIABLES.length);
    for (const { schema } of VARIABLES) {
      expect(schema.env).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      expect(schema.description.length).toBeGreaterThan(5);
      expect(schema[VAR]).toBeDefined();
    }
    for (const rule of CROSS_RULES) expect(NAMES.has(rule.variable), rule.variable).toBe(true);
  });

  it('every default, written out as the variable, reads back as the default', () => {
    const defaults = loadConfig({});
    for (const { schema } of VARIABLES) {
      if (schema.default === null) continue;
      const text = Array.isArray(schema.default) ? schema.default.join(',') : String(schema.default);
      expect(loadConfig({ [schema.env]: text }), schema.env).toEqual(defaults);
    }
  });
});
