// `clinic-api serve` from the sources (as bin/clinic-api.js runs it), started on a signal: it
// loads everything, says "ready" on stdout, and serves once a line arrives on stdin. A test loads
// several instances first, then releases them at the same moment (test/cli/first-run.test.ts).
import { once } from 'node:events';
import { main } from '../../src/cli/main.js';

process.stdout.write('ready\n');
await once(process.stdin, 'data');
process.stdin.pause();
process.exitCode = await main(['serve'], {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  now: () => Date.now(),
});
