// At least once across crashes and instances, with real server processes (`clinic-api serve`),
// a real receiver and events written by an import in this process:
//  - a server killed (SIGKILL) in the middle of deliveries, then started again: every event
//    still reaches the endpoint, in order (the one in flight at the kill is sent again);
//  - PostgreSQL, two servers on one database: each event is delivered once while both run, and
//    none is lost when one of them is killed (its leases expire and the other takes over).
// "Arrived" is what the receiver answered: a request cut by the kill does not count.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { createClinic } from '../../src/services/accounts.js';
import { seedRecords } from '../helpers/app.js';
import { dialects, newPgDatabaseUrl } from '../helpers/db.js';
import { citaRecord, clientaRecord } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { until } from '../helpers/wait.js';
import { builtEntry } from '../helpers/built-sources.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PEPPER = 'webhook-processes-pepper-0123456789abcdefghij';
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const f of cleanups.splice(0)) await f();
});

async function setup(dialect: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-webhooks-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    API_KEY_PEPPER: PEPPER,
    PORT: '0',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_POLL_MS: '20',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_LEASE_MS: '2000',
    WEBHOOK_RETRY_BASE_MS: '50',
    WEBHOOK_RETRY_MAX_MS: '200',
  };
  if (dialect === 'postgres') env.DATABASE_URL = await newPgDatabaseUrl();
  const rt = await openRuntime(loadConfig(env), { logTo: false });
  cleanups.push(() => rt.close());
  const clinic = await createClinic(rt.database.db, { name: 'Hooks', plan: 'premium', timezone: 'Europe/Madrid' }, Date.now());
  return { env, rt, clinic };
}

/** `clinic-api serve` as its own process; resolves once it listens. */
async function serve(env: Record<string, string>): Promise<ChildProcess> {
  const proc = spawn(process.execPath, [...builtEntry('test/cli/run-cli.ts'), 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  proc.stderr!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  await until(() => out.includes('clinic-api is serving') || proc.exitCode !== null, 'the server to listen');
  if (proc.exitCode !== null) throw new Error(`serve exited: ${out}`);
  return proc;
}

let n = 0;
/** `k` clientas with a cita each: 2k events. */
async function write(rt: Runtime, clinic: Awaited<ReturnType<typeof setup>>['clinic'], k: number) {
  const records = [];
  for (let i = 0; i < k; i++) {
    const c = `0e000001-0000-4000-8000-${String(++n).padStart(12, '0')}`;
    records.push(
      clientaRecord(c, `Proceso ${n}`, `+3461${String(n).padStart(7, '0')}`),
      citaRecord(`0e000002-0000-4000-8000-${String(n).padStart(12, '0')}`, c, '2026-04-01T10:00:00+02:00'),
    );
  }
  await seedRecords(rt.database, clinic, records, Date.now());
}

async function eventIds(rt: Runtime, clinicId: string): Promise<string[]> {
  return (await rt.database.db.selectFrom('events').select('id').where('clinic_id', '=', clinicId).orderBy('seq').execute()).map(
    (r) => r.id,
  );
}

async function killed(proc: ChildProcess) {
  proc.kill('SIGKILL');
  await new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r(null) : proc.once('exit', r)));
}

describe.each(dialects())('webhook deliveries across processes on %s', (dialect) => {
  it('a server killed mid-delivery and started again: every event arrives, in order', async () => {
    const { env, rt, clinic } = await setup(dialect);
    // The 10th request is held open: the server is killed while it waits for the answer. Every
    // later one too: a test slower than the time limit (1 s) must not see a resend answered.
    const r: Receiver = await startReceiver('/hook', (_r, i) => (i >= 10 ? 'never' : { status: 200 }));
    cleanups.push(() => r.close());
    await rt.webhooks.create({ clinicId: clinic.id, url: r.url, eventTypes: null, createdBy: null });
    await write(rt, clinic, 15);
    const first = await serve(env);
    await until(() => r.received.length >= 10 && r.open >= 1, 'the 10th delivery under way');
    await killed(first);
    r.answer = () => ({ status: 200 });
    await write(rt, clinic, 5);
    const all = await eventIds(rt, clinic.id);
    expect(r.answered).toHaveLength(9);
    await serve(env);
    await until(() => r.answered.length >= all.length, 'every event after the restart');
    expect(r.answered.map((x) => x.id)).toEqual(all);
    expect(r.received[9]!.id).toBe(all[9]);
  });

  it('a graceful shutdown (SIGTERM) cuts the delivery held open, releases the lease and exits 0; the next start goes on at once', async () => {
    const { env, rt, clinic } = await setup(dialect);
    const r: Receiver = await startReceiver('/hook', (_r, i) => (i >= 3 ? 'never' : { status: 200 }));
    cleanups.push(() => r.close());
    const { endpoint } = await rt.webhooks.create({ clinicId: clinic.id, url: r.url, eventTypes: null, createdBy: null });
    await write(rt, clinic, 3);
    const proc = await serve(env);
    await until(() => r.received.length >= 3 && r.open >= 1, 'the 3rd delivery under way');
    const exit = new Promise<number | null>((ok) => proc.once('exit', (code) => ok(code)));
    proc.kill('SIGTERM');
    expect(await exit).toBe(0);
    const row = (await rt.webhooks.get(clinic.id, endpoint.id))!;
    expect([row.lease_owner, row.lease_until_ms]).toEqual([null, 0]);
    const all = await eventIds(rt, clinic.id);
    expect(r.answered.map((x) => x.id)).toEqual(all.slice(0, 2));
    r.answer = () => ({ status: 200 });
    await serve(env);
    await until(() => r.answered.length >= all.length, 'the rest after the restart');
    expect(r.answered.map((x) => x.id)).toEqual(all);
  });
});

describe.runIf(dialects().includes('postgres'))(
  'webhook deliveries across two processes on postgres (PostgreSQL only: leases by FOR UPDATE SKIP LOCKED)',
  () => {
    const dialect = 'postgres';
    it('two servers on one database: each event once while both run, none lost when one is killed', async () => {
      const { env, rt, clinic } = await setup(dialect);
      const receivers: Receiver[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await startReceiver(`/hook${i}`, () => ({ status: 200, delayMs: 5 }));
        cleanups.push(() => r.close());
        receivers.push(r);
        await rt.webhooks.create({ clinicId: clinic.id, url: r.url, eventTypes: null, createdBy: null });
      }
      const a = await serve(env);
      await serve(env);
      for (let i = 0; i < 5; i++) await write(rt, clinic, 10);
      let all = await eventIds(rt, clinic.id);
      await until(() => receivers.every((r) => r.answered.length >= all.length), 'every endpoint caught up');
      for (const r of receivers) {
        expect(r.received.map((x) => x.id)).toEqual(all);
      }

      // Every endpoint's next request is held open (by whichever server sent it); then one server is killed.
      for (const r of receivers) r.answer = () => 'never';
      await write(rt, clinic, 20);
      await until(() => receivers.every((r) => r.open === 1), 'a delivery under way on every endpoint');
      await killed(a);
      for (const r of receivers) r.answer = () => ({ status: 200 });
      await write(rt, clinic, 5);
      all = await eventIds(rt, clinic.id);
      await until(() => receivers.every((r) => r.answered.length >= all.length), 'every event after the kill');
      for (const r of receivers) expect(r.answered.map((x) => x.id)).toEqual(all);
    });
  },
);
