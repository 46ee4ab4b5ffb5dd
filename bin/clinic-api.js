#!/usr/bin/env node
// The CLI entry. Runs the compiled code in dist/ (built by `npm install` through "prepare").
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// npm refuses to install on an unsupported Node (package.json "engines" with engine-strict in
// .npmrc), but Node may be switched after installing: refuse here too, in one line, before the
// SQLite driver is loaded (on Node 20 it crashes the process). The same rule as "engines":
// ^22.15.0 || >=24.0.0 (test/cli/cli.test.ts and node-version.test.ts hold both to one table).
const [major, minor] = process.versions.node.split('.').map(Number);
if (!(major >= 24 || (major === 22 && minor >= 15))) {
  process.stderr.write(
    `clinic-api: Node.js ${process.versions.node} is not supported; use Node.js 24 LTS (or 22.15 and later), e.g. \`nvm install 24\`\n`,
  );
  process.exit(2);
}

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
