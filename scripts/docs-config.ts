// npm run docs:config: rewrites the tables of environment variables in README.md and docs/ from
// the schema (src/config/variables.ts, through tools/config-docs.ts). Run it after adding or
// changing a variable; the suite fails until the committed tables match.
import { readFileSync, writeFileSync } from 'node:fs';
import { CONFIG_DOC_FILES, withConfigTables } from '../tools/config-docs.js';

const root = new URL('../', import.meta.url);
for (const file of CONFIG_DOC_FILES) {
  const url = new URL(file, root);
  const before = readFileSync(url, 'utf8');
  const after = withConfigTables(before);
  if (after !== before) writeFileSync(url, after);
  process.stderr.write(`${after === before ? 'up to date' : 'rewrote'}: ${file}\n`);
}
