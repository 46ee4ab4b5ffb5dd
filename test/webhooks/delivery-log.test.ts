// The delivery log and replay, in process on both databases with real receivers on 127.0.0.1:
// every attempt kept with the answer's first 1 KB (secrets masked) and when the event comes next,
// filtered and paged, pruned after WEBHOOK_LOG_DAYS; a replay sends the failed events again, once
// each, in order, with their own webhook-id. Then the CLI (in process, SQLite): `webhooks
// deliveries` as JSON lines and CSV, `--failed`, `--endpoint`; `webhooks resend`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/services/accounts.js';
import { buildTestApp, seedRecords, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { clientaRecord } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { until } from '../helpers/wait.js';
import { runCli, tempDirs, type RunOptions } from '../cli/in-process.js';

const ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_MS: '10',
  WEBHOOK_TIMEOUT_MS: '400',
  WEBHOOK_LEASE_MS: '1400',
  WEBHOOK_RETRY_BASE_MS: '1000',
  WEBHOOK_RETRY_MAX_MS: '2000',
  WEBHOOK_LOG_DAYS: '28',
};
const SECRET_IN_ANSWER = 'whsec_c2VjcmV0LXRoYXQtbXVzdC1ub3QtYmUtbG9nZ2Vk';

let n = 0;

describe.each(dialects())('the delivery log on %s', (dialect) => {
  let t: TestApp;
  let receiver: Receiver;
  let accept = false;
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: ENV });
    receiver = await startReceiver('/hook', () =>
      accept
        ? { status: 204 }
        : { status: 500, body: `{"error":"bad signature for ${SECRET_IN_ANSWER} and svc_${'k'.repeat(43)}","pad":"${'x'.repeat(3000)}"}` },
    );
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  async function newClienta() {
    const id = `0c00000e-0000-4000-8000-${String(++n).padStart(12, '0')}`;
    await seedRecords(t.database, t.clinicA, [clientaRecord(id, `Log ${n}`, `+3462000${String(n).padStart(4, '0')}`)], t.clock.now);
    return id;
  }

  it('keeps every attempt: the answer masked and cut to 1 KB, when the next comes; filtered; a replay sends the failed events again', async () => {
    const { endpoint: e } = await t.app.webhooks.create({ clinicId: t.clinicA.id, url: receiver.url, eventTypes: null, createdBy: null });
    const worker = t.app.webhookWorker;
    await worker.start();
    const first = await newClienta();
    await newClienta();
    worker.kick();
    await until(() => receiver.received.length >= 1, 'the first attempt');
    await worker.idle();
    // The retry, on the app's clock.
    t.clock.now += 2_500;
    worker.kick();
    await until(() => receiver.received.length >= 2, 'the retry');
    await worker.idle();
    await t.app.webhooks.setEnabled(t.clinicA.id, e.id, false);
    const since = t.clock.now - 60_000;

    const log = await t.app.webhooks.deliveryLog({ clinicId: t.clinicA.id, endpointId: e.id, order: 'desc', limit: 10 });
    expect(log.map((d) => [d.attempt, d.outcome, d.status_code, d.kind])).toEqual([
      [2, 'failed', 500, 'auto'],
      [1, 'failed', 500, 'auto'],
    ]);
    for (const d of log) {
      expect(d.response_excerpt!.length).toBeLessThanOrEqual(1024);
      expect(d.response_excerpt).toMatch(/^\{"error":"bad signature for \[redacted\]/);
      expect(d.response_excerpt).not.toContain('whsec_');
      expect(d.response_excerpt).not.toContain('kkkk');
      expect(d.next_retry_ms).toBeGreaterThan(d.at_ms);
    }
    // Filters: by outcome, by type, by time.
    const q = { clinicId: t.clinicA.id, endpointId: e.id, order: 'desc' as const, limit: 10 };
    expect(await t.app.webhooks.deliveryLog({ ...q, outcome: 'delivered' })).toEqual([]);
    expect(await t.app.webhooks.deliveryLog({ ...q, tipo: 'clienta.creada' })).toHaveLength(2);
    expect(await t.app.webhooks.deliveryLog({ ...q, tipo: 'cita.creada' })).toEqual([]);
    expect(await t.app.webhooks.deliveryLog({ ...q, sinceMs: log[0]!.at_ms })).toHaveLength(1);
    // Paged newest first after a given attempt.
    expect(await t.app.webhooks.deliveryLog({ ...q, after: { atMs: log[0]!.at_ms, id: log[0]!.id } })).toEqual([log[1]]);
    // Another clinic sees none of it.
    expect(await t.app.webhooks.deliveryLog({ ...q, clinicId: t.clinicB.id })).toEqual([]);

    // Replay: the one event that failed (the second was never tried), once, with its id; the endpoint stays disabled.
    accept = true;
    expect(await t.app.webhooks.replay(t.clinicA.id, e.id, since)).toBe(1);
    const before = receiver.received.length;
    t.clock.now += 1_000;
    expect(await t.rt.replayer.pass()).toBe(1);
    expect(receiver.received.length).toBe(before + 1);
    const again = receiver.received.at(-1)!;
    expect(JSON.parse(again.body)).toMatchObject({ tipo: 'clienta.creada', datos: { id: first } });
    expect(again.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    const replayed = (await t.app.webhooks.deliveryLog({ ...q, limit: 1 }))[0]!;
    expect([replayed.kind, replayed.outcome, replayed.next_retry_ms]).toEqual(['replay', 'delivered', null]);
    // Delivered now: a second replay finds nothing to send.
    expect(await t.app.webhooks.replay(t.clinicA.id, e.id, since)).toBe(0);

    // The dashboard: the endpoint's log newest first, filtered; one attempt in detail (masked answer).
    const owner = await createUser(t.database.db, {
      clinicId: t.clinicA.id,
      email: `log${dialect}@clinic.test`,
      role: 'owner',
      password: 'x'.repeat(12),
    });
    const cookie = { clinic_session: await t.rt.sessions.create(owner.id, 'en') };
    const page = async (path: string) => t.app.inject({ method: 'GET', url: path, cookies: cookie });
    const base = `/dashboard/settings/api/webhooks/${e.id}`;
    const rowsOf = (html: string) => [...html.matchAll(/data-delivery-id="([^"]+)" data-outcome="([a-z]+)"/g)].map((m) => [m[1], m[2]]);
    const full = await page(base);
    expect(full.statusCode).toBe(200);
    expect(rowsOf(full.body)).toEqual([
      [replayed.id, 'delivered'],
      [log[0]!.id, 'failed'],
      [log[1]!.id, 'failed'],
    ]);
    expect(rowsOf((await page(`${base}?outcome=failed`)).body).map((r) => r[0])).toEqual([log[0]!.id, log[1]!.id]);
    expect(rowsOf((await page(`${base}?tipo=cita.creada`)).body)).toEqual([]);
    expect(rowsOf((await page(`${base}?since=2999-01-01`)).body)).toEqual([]);
    const detail = await page(`${base}/deliveries/${log[0]!.id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('id="attempt-body"');
    expect(detail.body).toContain('bad signature for [redacted]');
    expect(detail.body).not.toContain('whsec_');
    expect((await page(`${base}/deliveries/0badc0de-0000-4000-8000-000000000000`)).statusCode).toBe(404);

    // Retention: attempts older than WEBHOOK_LOG_DAYS go at the next pass.
    t.clock.now += 29 * 86_400_000;
    const report = await t.rt.webhookMaintenance.pass();
    expect(report.attemptsRemoved).toBe(3);
    expect(await t.app.webhooks.deliveryLog(q)).toEqual([]);
    await t.app.webhooks.delete(t.clinicA.id, e.id);
  });
});

describe('clinic-api webhooks deliveries and resend', () => {
  const dirs = tempDirs('clinic-webhooks-log-');
  let dataDir: string;
  let receiver: Receiver;
  let accept = true;
  const cli = (argv: string[], opts: Partial<RunOptions> = {}) =>
    runCli(argv, { dataDir, env: { WEBHOOK_ALLOW_PRIVATE: 'true' }, ...opts });
  beforeAll(async () => {
    dataDir = dirs.make();
    receiver = await startReceiver('/hook', () => (accept ? { status: 200, body: 'thanks' } : { status: 503, body: 'busy' }));
  });
  afterAll(async () => {
    await receiver.close();
    dirs.cleanup();
  });

  it('streams the log as JSON lines or CSV, filtered; resends one attempt', async () => {
    const ok = async (argv: string[]) => {
      const r = await cli(argv);
      expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
      return r;
    };
    const clinic = (await ok(['clinics', 'create', '--name', 'Log Clinic', '--plan', 'premium'])).stdout.trim();
    const a = (await ok(['webhooks', 'create', '--clinic', clinic, '--url', receiver.url])).stdout.split('\n')[0]!;
    const b = (await ok(['webhooks', 'create', '--clinic', clinic, '--url', `${receiver.url}?b`])).stdout.split('\n')[0]!;
    await ok(['webhooks', 'test', a]);
    accept = false;
    expect((await cli(['webhooks', 'test', a])).code).toBe(1);
    accept = true;
    await ok(['webhooks', 'test', b]);

    const all = await ok(['webhooks', 'deliveries', '--clinic', clinic]);
    const lines = all.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.endpoint_id, l.outcome, l.status_code, l.response])).toEqual([
      [a, 'delivered', 200, 'thanks'],
      [a, 'failed', 503, 'busy'],
      [b, 'delivered', 200, 'thanks'],
    ]);
    expect(lines[0]).toMatchObject({ tipo: 'ping', kind: 'test', attempt: 1, time: expect.stringMatching(/^\d{4}-.*[+-]\d\d:\d\d$/) });
    expect(all.stderr).toBe('3 attempts\n');
    const failed = await ok(['webhooks', 'deliveries', '--clinic', clinic, '--failed', '--format', 'csv']);
    const rows = failed.stdout.trim().split(/\r?\n/);
    expect(rows[0]).toBe('time,id,endpoint_id,event_id,tipo,kind,attempt,outcome,status_code,error,duration_ms,next_retry_at,response');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain(',failed,503,http_503,');
    const onlyB = await ok(['webhooks', 'deliveries', '--clinic', clinic, '--endpoint', b]);
    expect(onlyB.stdout.trim().split('\n')).toHaveLength(1);
    const future = await ok(['webhooks', 'deliveries', '--clinic', clinic, '--since', '2999-01-01']);
    expect(future.stdout).toBe('');
    const badFormat = await cli(['webhooks', 'deliveries', '--clinic', clinic, '--format', 'xml']);
    expect([badFormat.code, badFormat.stderr]).toEqual([2, expect.stringContaining('--format must be jsonl or csv')]);

    // Resend the failed attempt: sent now, logged as a resend.
    const failedId = String(lines[1]!.id);
    const resent = await ok(['webhooks', 'resend', '--clinic', clinic, failedId]);
    expect(resent.stdout.trim()).toMatch(/^delivered: HTTP 200 in \d+ ms$/);
    const unknown = await cli(['webhooks', 'resend', '--clinic', clinic, '0badc0de-0000-4000-8000-000000000000']);
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining('no webhook delivery with id')]);
    const after = (await ok(['webhooks', 'deliveries', '--clinic', clinic, '--endpoint', a])).stdout.trim().split('\n');
    expect(after).toHaveLength(3);
  });
});
