// bin/clinic-api.js, from the TypeScript sources instead of dist/: lets a test run a long-lived
// command (serve) as its own process, without depending on (or racing) a build of dist/. Tests
// start it as test/helpers/built-sources.ts compiled it for the run (`builtEntry('test/cli/run-cli.ts')`);
// `node --import tsx test/cli/run-cli.ts ...` runs it by hand.
import { main } from '../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  now: () => Date.now(),
});
