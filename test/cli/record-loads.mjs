// `node --import ./test/cli/record-loads.mjs ...`: appends the URL of every module the process
// loads through `import` to the file named by RECORD_LOADS, one per line, so a test can see what
// a command loaded (test/cli/cli.test.ts). The same file is the loader hooks' module: imported by
// --import on the main thread it registers itself; on the hooks' own thread it records.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

let file;

export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(file, `${resolved.url}\n`);
  return resolved;
}

if (isMainThread) register(import.meta.url, { data: { file: process.env.RECORD_LOADS } });
