// clinic-api webhooks create|list|test|disable|enable|delete (docs/cli.md), in process on a
// temporary DATA_DIR, against a real receiver: the id and the secret on stdout (the secret
// verifies the ping the `test` command sends), bad input and unknown ids exit 2 naming them, a
// plan without API access exits 3, a receiver that refuses the ping exits 1.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDirs, withRuntimeAt, type RunOptions } from '../cli/in-process.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN = '0badc0de-0000-4000-8000-000000000000';
const dirs = tempDirs('clinic-webhooks-cli-');
let dataDir: string;
let receiver: Receiver;
let accept = true;
const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true' };
const cli = (argv: string[], opts: Partial<RunOptions> = {}) => runCli(argv, { dataDir, env: ENV, ...opts });

async function ok(argv: string[], opts: Partial<RunOptions> = {}): Promise<string> {
  const r = await cli(argv, opts);
  expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout.trim();
}

beforeAll(async () => {
  dataDir = dirs.make();
  receiver = await startReceiver('/hook', () => ({ status: accept ? 200 : 500 }));
});
afterAll(async () => {
  await receiver.close();
  dirs.cleanup();
});

describe('clinic-api webhooks', () => {
  it('create prints the id and the secret; list, test, disable, enable, delete', async () => {
    const clinic = await ok(['clinics', 'create', '--name', 'Hook Clinic', '--plan', 'premium']);
    const created = await cli(['webhooks', 'create', '--clinic', clinic, '--url', receiver.url, '--events', 'cita.creada, cita.eliminada']);
    expect(created.code, created.stderr).toBe(0);
    const [id, secret, ...rest] = created.stdout.trim().split('\n');
    expect(id).toMatch(UUID_RE);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(rest).toEqual([]);
    expect(created.stderr).toMatch(/cannot be shown again/);
    // Stored only sealed.
    const stored = await withRuntimeAt(dataDir, (rt) => rt.database.db.selectFrom('webhook_endpoints').selectAll().execute());
    expect(JSON.stringify(stored)).not.toContain(secret!.slice(6));

    expect(await ok(['webhooks', 'list', '--clinic', clinic])).toBe(`${id}\tactive\t${receiver.url}\tcita.creada,cita.eliminada`);

    expect(await ok(['webhooks', 'test', id!])).toMatch(/^delivered: HTTP 200 in \d+ ms$/);
    const ping = receiver.received.at(-1)!;
    expect(JSON.parse(ping.body)).toMatchObject({ tipo: 'ping', datos: { endpoint_id: id } });
    expect(new Webhook(secret!).verify(ping.body, ping.headers as Record<string, string>)).toMatchObject({ tipo: 'ping' });

    accept = false;
    const refused = await cli(['webhooks', 'test', id!]);
    expect(refused.code).toBe(1);
    expect(refused.stdout.trim()).toMatch(/^failed: HTTP 500 in \d+ ms$/);
    expect(refused.stderr).toMatch(/did not accept the test event \(HTTP 500\)/);
    accept = true;

    expect(await ok(['webhooks', 'disable', id!])).toBe(id);
    expect(await ok(['webhooks', 'list', '--clinic', clinic])).toMatch(/\tdisabled\t.*\tdisabled by hand$/);
    expect(JSON.parse(await ok(['--json', 'webhooks', 'list', '--clinic', clinic]))[0]).toMatchObject({
      id,
      status: 'disabled',
      disabled_reason: 'manual',
    });
    // An endpoint a key subscribed by API is disabled by the key's revocation (another CLI
    // process, no server running), and the list says why.
    const key = await ok(['--json', 'keys', 'create', '--clinic', clinic, '--name', 'Zap', '--scopes', 'citas:read,webhooks:write']);
    const keyId = (JSON.parse(key) as { id: string }).id;
    const subscribed = await withRuntimeAt(dataDir, (rt) =>
      rt.webhooks.create({ clinicId: clinic, url: 'https://93.184.215.14/hook', eventTypes: null, createdBy: null, createdByKey: keyId }),
    );
    await ok(['keys', 'revoke', keyId]);
    expect((await ok(['webhooks', 'list', '--clinic', clinic])).split('\n')).toContain(
      `${subscribed.endpoint.id}\tdisabled\thttps://93.184.215.14/hook\tall\tdisabled: the API key that subscribed it was revoked`,
    );
    await ok(['webhooks', 'delete', subscribed.endpoint.id]);
    expect(await ok(['webhooks', 'enable', id!])).toBe(id);
    expect(await ok(['webhooks', 'list', '--clinic', clinic])).toMatch(/\tactive\t/);
    expect(await ok(['webhooks', 'delete', id!])).toBe(id);
    expect(await ok(['webhooks', 'list', '--clinic', clinic])).toBe('');

    const json = JSON.parse(await ok(['--json', 'webhooks', 'create', '--clinic', clinic, '--url', receiver.url])) as Record<
      string,
      unknown
    >;
    expect(json).toMatchObject({
      id: expect.stringMatching(UUID_RE),
      secret: expect.stringMatching(/^whsec_/),
      events: null,
      clinic_id: clinic,
    });
  });

  it('--test: test endpoints are in the sandbox; create, list, deliveries, resend and replay reach them, the live commands do not', async () => {
    const clinic = await ok(['clinics', 'create', '--name', 'Sandbox Hooks', '--plan', 'premium']);
    // No sandbox yet: nothing to list; a command that needs one says how it is made.
    expect(await ok(['webhooks', 'list', '--clinic', clinic, '--test'])).toBe('');
    const noSandbox = await cli(['webhooks', 'resend', '--clinic', clinic, '--test', UNKNOWN]);
    expect([noSandbox.code, noSandbox.stderr]).toEqual([
      2,
      expect.stringContaining('has no sandbox yet: its first test key or test endpoint'),
    ]);
    const noClinic = await cli(['webhooks', 'resend', '--clinic', UNKNOWN, '--test', UNKNOWN]);
    expect([noClinic.code, noClinic.stderr]).toEqual([2, expect.stringContaining(`no clinic with id ${UNKNOWN}`)]);

    const created = await cli(['webhooks', 'create', '--clinic', clinic, '--test', '--url', receiver.url]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toMatch(/^created test webhook endpoint /);
    const id = created.stdout.split('\n')[0]!;
    expect(await ok(['webhooks', 'list', '--clinic', clinic])).toBe('');
    expect(await ok(['webhooks', 'list', '--clinic', clinic, '--test'])).toBe(`${id}\tactive\t${receiver.url}\tall`);

    await ok(['webhooks', 'test', id]);
    const logged = (await ok(['webhooks', 'deliveries', '--clinic', clinic, '--test']))
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string });
    expect(logged).toEqual([expect.objectContaining({ endpoint_id: id, kind: 'test', outcome: 'delivered' })]);
    expect(await ok(['webhooks', 'deliveries', '--clinic', clinic])).toBe('');
    const live = await cli(['webhooks', 'deliveries', '--clinic', clinic, '--endpoint', id]);
    expect([live.code, live.stderr]).toEqual([2, expect.stringContaining('(a test endpoint: add --test)')]);

    const pings = receiver.received.length;
    expect(await ok(['webhooks', 'resend', '--clinic', clinic, '--test', logged[0]!.id])).toMatch(/^delivered: HTTP 200 in \d+ ms$/);
    expect(receiver.received).toHaveLength(pings + 1);
    const liveResend = await cli(['webhooks', 'resend', '--clinic', clinic, logged[0]!.id]);
    expect([liveResend.code, liveResend.stderr]).toEqual([
      2,
      expect.stringContaining(`no webhook delivery with id ${logged[0]!.id} (a test endpoint's: add --test)`),
    ]);
    expect(await ok(['webhooks', 'replay', '--clinic', clinic, '--test', '--endpoint', id, '--since', '2026-01-01'])).toBe('0');
    const liveReplay = await cli(['webhooks', 'replay', '--clinic', clinic, '--endpoint', id, '--since', '2026-01-01']);
    expect([liveReplay.code, liveReplay.stderr]).toEqual([
      2,
      expect.stringContaining(`no webhook endpoint with id ${id} in clinic ${clinic} (a test endpoint: add --test)`),
    ]);
  });

  it('names what is wrong: unknown ids and types (exit 2), http:// and private addresses without WEBHOOK_ALLOW_PRIVATE (exit 2), a plan without API (exit 3), the 11th endpoint (exit 2)', async () => {
    const clinic = await ok(['clinics', 'create', '--name', 'Strict Clinic', '--plan', 'premium']);
    for (const cmd of ['test', 'delete', 'enable', 'disable']) {
      const r = await cli(['webhooks', cmd, UNKNOWN]);
      expect([r.code, r.stderr.trim()]).toEqual([
        2,
        `clinic-api: no webhook endpoint with id ${UNKNOWN} (clinic-api webhooks list --clinic CLINIC_ID [--test] shows the ids)`,
      ]);
    }
    const noClinic = await cli(['webhooks', 'list', '--clinic', UNKNOWN]);
    expect([noClinic.code, noClinic.stderr]).toEqual([2, expect.stringContaining(`no clinic with id ${UNKNOWN}`)]);
    const badType = await cli(['webhooks', 'create', '--clinic', clinic, '--url', receiver.url, '--events', 'cita.creada,cita.borrada']);
    expect([badType.code, badType.stderr]).toEqual([2, expect.stringContaining('not: "cita.borrada"')]);
    // Each refusal names the way out: the variable, for the server and for this command.
    const wayOut = 'set WEBHOOK_ALLOW_PRIVATE=true in the environment of the server and of the clinic-api command';
    const http = await cli(['webhooks', 'create', '--clinic', clinic, '--url', receiver.url], { env: {} });
    expect([http.code, http.stderr]).toEqual([2, expect.stringContaining('url must start with https://')]);
    expect(http.stderr).toContain(wayOut);
    const loop = await cli(['webhooks', 'create', '--clinic', clinic, '--url', `https://localhost:${receiver.port}/hook`], { env: {} });
    expect([loop.code, loop.stderr]).toEqual([2, expect.stringMatching(/resolves to .* \(loopback\), which is not a public address/)]);
    expect(loop.stderr).toContain(wayOut);
    // An endpoint made with the variable, tested by a command without it: the command refuses, and says why.
    const local = (await ok(['webhooks', 'create', '--clinic', clinic, '--url', receiver.url])).split('\n')[0]!;
    const test = await cli(['webhooks', 'test', local], { env: {} });
    expect([test.code, test.stderr]).toEqual([1, expect.stringContaining('(refused_address): this command refused the address')]);
    expect(test.stderr).toContain(wayOut);
    await ok(['webhooks', 'delete', local]);
    const basic = await ok(['clinics', 'create', '--name', 'Basic Clinic', '--plan', 'basic']);
    const plan = await cli(['webhooks', 'create', '--clinic', basic, '--url', receiver.url]);
    expect([plan.code, plan.stderr]).toEqual([3, expect.stringContaining('does not include API access')]);
    for (let i = 0; i < 10; i++) await ok(['webhooks', 'create', '--clinic', clinic, '--url', `${receiver.url}?n=${i}`]);
    const eleventh = await cli(['webhooks', 'create', '--clinic', clinic, '--url', receiver.url]);
    expect([eleventh.code, eleventh.stderr]).toEqual([2, expect.stringContaining('already has 10 webhook endpoints')]);
  });
});
