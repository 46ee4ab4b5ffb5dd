// The package as npm publishes it: `npm pack` of packages/sdk, installed from the tarball into a
// scratch project outside the repository (its dependency from the npm cache), then used there
// against a real `clinic-api serve`: an ES module script, a CommonJS one (require() of an ES
// module, Node 22.12+), and TypeScript type-checking with both module resolutions a project uses.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../../../test/helpers/server-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PKG = path.join(ROOT, 'packages/sdk');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
// How this machine reaches the registry: a proxy, the certificate authority of one that inspects
// TLS (without NODE_EXTRA_CA_CERTS there, every packument not in the cache failed on a
// self-signed certificate and npm retried until the test's time ran out), a mirror.
const NETWORK =
  /^(NODE_EXTRA_CA_CERTS|NODE_USE_SYSTEM_CA|https?_proxy|no_proxy|npm_config_(registry|cafile|ca|proxy|https_proxy|noproxy|strict_ssl))$/i;
// Only what npm and node need: not the other npm_config_* of an `npm test` around this run.
const ENV = {
  ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => NETWORK.test(e[0]) && e[1] !== undefined)),
  PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
  HOME: process.env.HOME ?? os.homedir(),
};

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(cmd, args, { cwd, env: { ...ENV, ...env }, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

const ESM = `
import { ClinicApi, ClinicApiError } from '@clinic-api/sdk';
import { verifyWebhook } from '@clinic-api/sdk/webhooks';
import { createHmac } from 'node:crypto';

const api = new ClinicApi({ baseUrl: process.env.BASE, apiKey: process.env.KEY });
const me = await api.me();
let clientas = 0;
for await (const _ of api.clientas.all()) clientas++;
const page = await api.citas.list({ limit: 3 });
const one = await api.citas.get(page.citas[0].id);
let code = null;
try {
  await api.citas.list({ limit: 501 });
} catch (err) {
  code = err instanceof ClinicApiError ? err.code + ':' + err.param : String(err);
}
const secret = 'whsec_' + btoa('a secret of the endpoint!');
const body = JSON.stringify({
  id: 'e1', tipo: 'ping', ocurrido_at: '2026-03-28T13:00:00+01:00', datos: { endpoint_id: 'x', mensaje: 'hola' },
});
const ts = String(Math.floor(Date.now() / 1000));
const sig = createHmac('sha256', Buffer.from('a secret of the endpoint!')).update('e1.' + ts + '.' + body).digest('base64');
const event = verifyWebhook(secret, body, { 'webhook-id': 'e1', 'webhook-timestamp': ts, 'webhook-signature': 'v1,' + sig });
console.log(JSON.stringify({ clinic: me.clinica.nombre, clientas, same: one.id === page.citas[0].id, code, tipo: event.tipo }));
`;

const CJS = `
const { ClinicApi } = require('@clinic-api/sdk');
new ClinicApi({ baseUrl: process.env.BASE, apiKey: process.env.KEY }).me().then((me) => console.log(me.clinica.nombre));
`;

const TS = `
import { ClinicApi, ClinicApiError, type Cita, type FeedBatch } from '@clinic-api/sdk';
import { WebhookVerifier, type WebhookEvent } from '@clinic-api/sdk/webhooks';

export async function use(baseUrl: string, apiKey: string): Promise<string[]> {
  const api = new ClinicApi({ baseUrl, apiKey, retry: { maxAttempts: 3 }, cache: true });
  const ids: string[] = [];
  for await (const cita of api.citas.all({ estado: 'confirmada' })) {
    const c: Cita = cita;
    ids.push(c.id);
  }
  // @ts-expect-error 'confirmed' is not an estado: the package's types come from the OpenAPI document
  await api.citas.list({ estado: 'confirmed' });
  for await (const batch of api.eventos.follow({ cursor: 'now' })) {
    const b: FeedBatch = batch;
    for (const e of b.eventos) ids.push(e.tipo);
    break;
  }
  const event: WebhookEvent = new WebhookVerifier('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').verify('{}', new Headers());
  ids.push(event.tipo);
  try {
    await api.me();
  } catch (err) {
    if (err instanceof ClinicApiError) ids.push(err.code, String(err.status), String(err.retryAfter));
  }
  return ids;
}
`;

describe('npm pack, installed in a project outside the repository', () => {
  let scratch: string;
  let server: ServerProcess;
  let files: string[];
  beforeAll(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-sdk-scratch-'));
    expect(scratch.startsWith(ROOT)).toBe(false);
    // --ignore-scripts: the package is built already (npm test builds the packages first; a plain
    // `npm pack` builds it through its prepack script)
    const packed = JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', scratch], PKG).stdout) as {
      filename: string;
      files: { path: string }[];
    }[];
    files = packed[0]!.files.map((f) => f.path).sort();
    fs.writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    const install = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', `./${packed[0]!.filename}`], scratch);
    expect(`${install.stdout}${install.stderr}`).not.toMatch(/npm warn/i);
    server = await startServerProcess();
  }, 180_000);
  afterAll(async () => {
    await server?.kill();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('ships the built code, its types, README and LICENSE, and nothing else', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'package.json',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/webhooks.js',
        'dist/webhooks.d.ts',
      ]),
    );
    expect(files.filter((f) => !/^(LICENSE|README\.md|package\.json|dist\/.*\.(js|d\.ts))$/.test(f))).toEqual([]);
    const manifest = JSON.parse(fs.readFileSync(path.join(scratch, 'node_modules/@clinic-api/sdk/package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest).toMatchObject({
      name: '@clinic-api/sdk',
      license: 'MIT',
      type: 'module',
      dependencies: { standardwebhooks: expect.any(String) },
    });
    expect(manifest.scripts).toMatchObject({ prepack: 'npm run build' });
  });

  it('an ES module script uses it against a real server', () => {
    fs.writeFileSync(path.join(scratch, 'use.mjs'), ESM);
    const r = run(process.execPath, ['use.mjs'], scratch, { BASE: server.baseUrl, KEY: server.key });
    expect(JSON.parse(r.stdout)).toEqual({
      clinic: 'Clínica Demo Aurora',
      clientas: 200,
      same: true,
      code: 'invalid_parameter:limit',
      tipo: 'ping',
    });
    expect(r.stderr).toBe('');
  });

  it("the README's quick start runs as printed", () => {
    const readme = fs.readFileSync(path.join(PKG, 'README.md'), 'utf8');
    const block = /```js\n(\/\/ quickstart\.mjs[\s\S]*?)```/.exec(readme);
    expect(block, 'packages/sdk/README.md has a ```js block starting with "// quickstart.mjs"').not.toBeNull();
    fs.writeFileSync(path.join(scratch, 'quickstart.mjs'), block![1]!);
    const r = run(process.execPath, ['quickstart.mjs'], scratch, { CLINIC_API_URL: server.baseUrl, CLINIC_API_KEY: server.key });
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('Clínica Demo Aurora (Europe/Madrid)');
    expect(lines.slice(1, 4).every((l) => /^\d{4}-\d\d-\d\dT\S+ .+/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^\d+ confirmed appointments in the next 30 days$/);
    expect(r.stderr).toBe('');
  });

  it('a CommonJS script require()s it', () => {
    fs.writeFileSync(path.join(scratch, 'use.cjs'), CJS);
    const r = run(process.execPath, ['use.cjs'], scratch, { BASE: server.baseUrl, KEY: server.key });
    expect(r.stdout.trim()).toBe('Clínica Demo Aurora');
  });

  it.each(['nodenext', 'bundler'])('TypeScript finds its types (moduleResolution %s)', (resolution) => {
    const dir = path.join(scratch, `ts-${resolution}`);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'use.ts'), TS);
    const module = resolution === 'bundler' ? 'esnext' : 'nodenext';
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          module,
          moduleResolution: resolution,
          lib: ['es2022', 'dom', 'dom.iterable'],
          types: [],
          skipLibCheck: false,
        },
        files: ['use.ts'],
      }),
    );
    // type-checked with the declarations of its dependency (skipLibCheck off): they must hold up
    // without Node's types, as in a browser project
    fs.writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    const r = spawnSync(process.execPath, [TSC, '-p', dir], { cwd: dir, env: ENV, encoding: 'utf8' });
    expect(`${r.stdout}${r.stderr}`).toBe('');
    expect(r.status).toBe(0);
  });
});
