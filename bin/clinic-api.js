#!/usr/bin/env node
// The CLI entry. Runs the compiled code in dist/ (built by `npm install` through "prepare").
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('clinic-api: dist/ is missing; run `npm install` (or `npm run build`) first\n');
  process.exit(2);
}
const { main } = await import(entry.href);
const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  now: () => Date.now(),
});
// serve never returns; every other command ends here.
process.exitCode = code;
