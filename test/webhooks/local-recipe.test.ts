// docs/webhooks.md, "Try webhooks locally", run as printed: a real `clinic-api serve` with the
// variable (step 1), the step-2 commands by /bin/sh in the checkout (`clinic-api` runs the
// CLI from the sources here), the receiver of the page (the SDK's verification) on a free port
// instead of 8080, and step 4's test event: the receiver prints the ping, then the event of an
// import. The variable is set by the steps themselves, never by the test.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { until } from '../helpers/wait.js';
import { builtEntry } from '../helpers/built-sources.js';
import { freePort } from '../../tools/net.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOC = fs.readFileSync(path.join(ROOT, 'docs/webhooks.md'), 'utf8');
const SECTION = DOC.slice(DOC.indexOf('## Try webhooks locally'), DOC.indexOf('## Decisions'));

/** The code block of the section whose first line starts with `first`. */
function block(lang: 'sh' | 'js', first: string): string {
  for (const m of SECTION.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))) if (m[1]!.startsWith(first)) return m[1]!;
  throw new Error(`docs/webhooks.md "Try webhooks locally" has no \`\`\`${lang} block starting with "${first}"`);
}

// `clinic-api ...` (the command `npm link` puts on the PATH, docs/cli.md) as this checkout runs it
// from its sources (test/cli/run-cli.ts, compiled for the run): a script of that name first on the PATH.
const BIN_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-local-hooks-bin-'));
fs.writeFileSync(
  path.join(BIN_DIR, 'clinic-api'),
  `#!/bin/sh\nexec ${[process.execPath, ...builtEntry('test/cli/run-cli.ts')].map((a) => JSON.stringify(a)).join(' ')} "$@"\n`,
  { mode: 0o755 },
);

let server: ServerProcess | null = null;
let receiver: ChildProcess | null = null;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-local-hooks-'));
afterAll(async () => {
  receiver?.kill('SIGKILL');
  await server?.kill();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(BIN_DIR, { recursive: true, force: true });
});

it('the four steps: the server and the CLI with WEBHOOK_ALLOW_PRIVATE, the SDK receiver, a ping and an event', async () => {
  // 1. the service with the variable exported
  const one = block('sh', '# 1.');
  expect(one).toMatch(/^export WEBHOOK_ALLOW_PRIVATE=true$/m);
  expect(one).toMatch(/^npm start$/m);
  server = await startServerProcess({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '20' } });
  const env = {
    PATH: [BIN_DIR, path.dirname(process.execPath), process.env.PATH ?? ''].join(path.delimiter),
    HOME: os.homedir(),
    DATA_DIR: server.dataDir,
    TZ: 'UTC',
  };
  const sh = (script: string, cwd = ROOT) => {
    const r = spawnSync('/bin/sh', ['-c', script], { cwd, env, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, `${script}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return r.stdout;
  };

  // 2. the endpoint, on a free port instead of 8080
  const port = await freePort();
  const two = block('sh', '# 2.');
  expect(two).toContain('--url http://127.0.0.1:8080/hooks');
  const [endpointId, secret] = sh(two.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`))
    .trim()
    .split('\n');
  expect(endpointId).toMatch(/^[0-9a-f-]{36}$/);
  expect(secret).toMatch(/^whsec_/);

  // 3. the receiver, as printed, beside a node_modules that has this checkout's @clinic-api/sdk
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  fs.writeFileSync(path.join(dir, 'local-receiver.mjs'), block('js', '// local-receiver.mjs'));
  const three = block('sh', '# 3.');
  expect(three).toContain('WEBHOOK_SECRET=whsec_... node local-receiver.mjs');
  let out = '';
  let err = '';
  // `exec env` keeps the line as printed and makes the receiver the shell's own process (killed at the end)
  receiver = spawn(
    '/bin/sh',
    [
      '-c',
      `exec env ${three
        .split('\n')
        .find((l) => l.startsWith('WEBHOOK_SECRET='))!
        .replace('whsec_...', secret!)}`,
    ],
    {
      cwd: dir,
      env: { ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  receiver.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  receiver.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  await until(() => err.includes(`listening on http://127.0.0.1:${port}/hooks`) || receiver!.exitCode !== null, 'the receiver to listen');
  expect(err).toContain(`listening on http://127.0.0.1:${port}/hooks`);
  const lines = () =>
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; tipo: string; record: string });

  // 4. the test event
  const four = block('sh', '# 4.');
  expect(sh(four.replace('ENDPOINT_ID', endpointId!))).toMatch(/^delivered: HTTP 204 in \d+ ms$/m);
  await until(() => lines().length === 1, 'the ping');
  expect(lines()[0]).toMatchObject({ tipo: 'ping', record: endpointId });

  // an import's change reaches it through the server's worker
  const clinic = sh('clinic-api clinics list | head -n 1 | cut -f 1').trim();
  fs.writeFileSync(
    path.join(dir, 'changes.jsonl'),
    JSON.stringify({
      type: 'clienta',
      id: '0c000001-0000-4000-8000-000000000001',
      nombre: 'Prueba Local',
      telefono: '+34600000001',
      vip: false,
      cliente_desde: '2026-01-01',
      created_at: '2026-01-01T10:00:00+01:00',
    }) + '\n',
  );
  sh(`clinic-api import --clinic ${clinic} ${path.join(dir, 'changes.jsonl')}`);
  await until(() => lines().length === 2, 'the event of the import');
  expect(lines()[1]).toMatchObject({ tipo: 'clienta.creada', record: '0c000001-0000-4000-8000-000000000001' });
  expect(err).not.toContain('refused');
}, 120_000);
