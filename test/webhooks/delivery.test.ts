// Webhook delivery from the event log, in process, on both databases, to real HTTP receivers on
// 127.0.0.1: signed to Standard Webhooks (checked with the standardwebhooks package's own
// verifier), the body the feed's event, in order, only the chosen types; failures retried with
// back-off (the clock is the app's, moved by the test) honouring Retry-After, disabled after 3
// days with the reason; a slow or silent receiver holds only its own endpoint.
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DISABLE_AFTER_MS } from '../../src/services/webhooks/backoff.js';
import type { EndpointRow } from '../../src/services/webhooks/endpoints.js';
import { DeliveryWorker } from '../../src/services/webhooks/worker.js';
import { buildTestApp, seedRecords, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { citaRecord, clientaRecord } from '../helpers/fixtures.js';
import { gate, startReceiver, type Receiver } from '../helpers/receiver.js';
import { until } from '../helpers/wait.js';

const ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_MS: '10',
  WEBHOOK_TIMEOUT_MS: '400',
  WEBHOOK_LEASE_MS: '1400',
  WEBHOOK_RETRY_BASE_MS: '1000',
  WEBHOOK_RETRY_MAX_MS: '60000',
  WEBHOOK_MAX_IN_FLIGHT: '4',
};

let n = 0;
const id = (kind: 1 | 2) => `0c00000${kind}-0000-4000-8000-${String(++n).padStart(12, '0')}`;

describe.each(dialects())('webhook delivery on %s', (dialect) => {
  let t: TestApp;
  let worker: DeliveryWorker;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: ENV });
    worker = t.app.webhookWorker;
    await worker.start();
  });
  afterAll(async () => {
    await t.close();
    await Promise.all(receivers.map((r) => r.close()));
  });
  afterEach(async () => {
    for (const e of await t.app.webhooks.list(t.clinicA.id)) await t.app.webhooks.delete(t.clinicA.id, e.id);
  });

  async function receiver(answer?: Receiver['answer']) {
    const r = await startReceiver('/hook', answer);
    receivers.push(r);
    return r;
  }

  /** A new clienta with `citas` citas in clinic A: 1 + citas events. */
  async function write(citas = 0) {
    const c = id(1);
    await seedRecords(
      t.database,
      t.clinicA,
      [
        clientaRecord(c, `Webhook ${n}`, `+3460000${String(n).padStart(4, '0')}`),
        ...Array.from({ length: citas }, () => citaRecord(id(2), c, '2026-04-01T10:00:00+02:00')),
      ],
      t.clock.now,
    );
  }

  const endpoint = async (url: string, events: string[] | null = null) =>
    t.app.webhooks.create({ clinicId: t.clinicA.id, url, eventTypes: events, createdBy: null });
  const row = async (endpointId: string) => (await t.app.webhooks.get(t.clinicA.id, endpointId))!;

  it('delivers each new event once, in order, signed, as the feed shows it; only the chosen types', async () => {
    const all = await receiver();
    const citas = await receiver();
    const { endpoint: e, secret } = await endpoint(all.url);
    const { endpoint: onlyCitas } = await endpoint(citas.url, ['cita.creada']);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    await write(3);
    await write(1);
    worker.kick();
    await until(() => all.received.length >= 6 && citas.received.length >= 4, 'deliveries');
    await until(async () => (await row(e.id)).cursor === (await row(onlyCitas.id)).cursor, 'both cursors at the head');
    // The attempt is recorded, and the in-flight gauge set, after the cursor moves.
    await worker.idle();

    const feed = (
      await t.app.inject({
        method: 'GET',
        url: '/api/v1/eventos?cursor=' + encodeURIComponent(await cursorAt(e.cursor)),
        headers: { authorization: `Bearer ${t.keyA}` },
      })
    ).json() as { eventos: unknown[] };
    expect(all.received.map((r) => JSON.parse(r.body))).toEqual(feed.eventos);
    expect(all.received.map((r) => r.tipo)).toEqual([
      'clienta.creada',
      'cita.creada',
      'cita.creada',
      'cita.creada',
      'clienta.creada',
      'cita.creada',
    ]);
    expect(citas.received.map((r) => r.tipo)).toEqual(['cita.creada', 'cita.creada', 'cita.creada', 'cita.creada']);
    const wh = new Webhook(secret);
    for (const r of all.received) {
      expect(r.headers['webhook-id']).toBe(r.id);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toMatch(/^clinic-api-webhooks\//);
      expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(wh.verify(r.body, r.headers as Record<string, string>)).toEqual(JSON.parse(r.body));
    }
    // Another endpoint's secret does not verify it.
    const { secret: other } = await endpoint(all.url);
    expect(() => new Webhook(other).verify(all.received[0]!.body, all.received[0]!.headers as Record<string, string>)).toThrow();
    const deliveries = await t.app.webhooks.deliveries(t.clinicA.id, e.id);
    expect(deliveries).toHaveLength(6);
    expect(deliveries.every((d) => d.outcome === 'delivered' && d.status_code === 200 && d.kind === 'auto')).toBe(true);
    // /metrics: deliveries by outcome and their lag.
    const text = await t.app.metrics.registry.metrics();
    expect(text).toMatch(/^webhook_deliveries_total\{outcome="delivered"\} (\d+)$/m);
    expect(Number(/^webhook_deliveries_total\{outcome="delivered"\} (\d+)$/m.exec(text)![1])).toBeGreaterThanOrEqual(10);
    expect(text).toMatch(/^webhook_delivery_lag_seconds_count (\d+)$/m);
    expect(text).toMatch(/^webhook_deliveries_in_flight 0$/m);
  });

  const head = async () =>
    Number(
      (
        await t.database.db
          .selectFrom('clinic_data_versions')
          .select('events_seq')
          .where('clinic_id', '=', t.clinicA.id)
          .executeTakeFirstOrThrow()
      ).events_seq,
    );

  it('retries the head event with back-off until it is delivered; nothing behind it goes first', async () => {
    const r = await receiver((_r, i) => ({ status: i <= 2 ? 500 : 200 }));
    const { endpoint: e } = await endpoint(r.url);
    await write(1);
    worker.kick();
    await until(async () => (await row(e.id)).attempts === 1, 'first failure');
    let state = await row(e.id);
    // Full jitter: somewhere in [now, now + WEBHOOK_RETRY_BASE_MS] after the first failure.
    expect(state.next_attempt_ms).toBeGreaterThanOrEqual(t.clock.now);
    expect(state.next_attempt_ms).toBeLessThanOrEqual(t.clock.now + 1000);
    expect(state.failing_since_ms).toBe(t.clock.now);
    expect(state.last_error).toBe('HTTP 500');
    t.clock.now += 2_000;
    worker.kick();
    await until(async () => (await row(e.id)).attempts === 2, 'second failure');
    state = await row(e.id);
    expect(state.next_attempt_ms).toBeLessThanOrEqual(t.clock.now + 2000);
    t.clock.now += 60_000;
    worker.kick();
    await until(async () => (await row(e.id)).cursor === (await head()), 'delivered after retries');
    expect(r.received.map((x) => x.tipo)).toEqual(['clienta.creada', 'clienta.creada', 'clienta.creada', 'cita.creada']);
    expect(new Set(r.received.slice(0, 3).map((x) => x.id)).size).toBe(1);
    state = await row(e.id);
    expect([state.attempts, state.failing_since_ms, state.last_error]).toEqual([0, null, null]);
    const d = (await t.app.webhooks.deliveries(t.clinicA.id, e.id)).reverse();
    expect(d.map((x) => [x.attempt, x.outcome, x.status_code])).toEqual([
      [1, 'failed', 500],
      [2, 'failed', 500],
      [3, 'delivered', 200],
      [1, 'delivered', 200],
    ]);
  });

  it('honours Retry-After (seconds and HTTP date) exactly, without jitter', async () => {
    const r = await receiver((_r, i) =>
      i === 1
        ? { status: 503, headers: { 'retry-after': '7' } }
        : i === 2
          ? { status: 429, headers: { 'retry-after': new Date(t.clock.now + 30_000).toUTCString() } }
          : { status: 200 },
    );
    const { endpoint: e } = await endpoint(r.url);
    await write(0);
    worker.kick();
    await until(async () => (await row(e.id)).attempts === 1, 'first failure');
    expect((await row(e.id)).next_attempt_ms).toBe(t.clock.now + 7_000);
    t.clock.now += 6_999;
    expect(await worker.tick()).toBe(0);
    t.clock.now += 1;
    worker.kick();
    await until(async () => (await row(e.id)).attempts === 2, 'second failure');
    expect((await row(e.id)).next_attempt_ms).toBe(t.clock.now + 30_000);
    t.clock.now += 30_000;
    worker.kick();
    await until(async () => (await row(e.id)).cursor === (await head()), 'delivered');
    expect(r.received).toHaveLength(3);
  });

  it('disables an endpoint that keeps failing for 3 days, with the reason; enabling resumes from where it stopped', async () => {
    let up = false;
    const r = await receiver(() => ({ status: up ? 204 : 500 }));
    const { endpoint: e } = await endpoint(r.url);
    await write(1);
    worker.kick();
    await until(async () => (await row(e.id)).attempts === 1, 'first failure');
    t.clock.now += DISABLE_AFTER_MS - 1;
    worker.kick();
    await until(async () => (await row(e.id)).attempts === 2, 'a failure within the 3 days');
    expect((await row(e.id)).enabled).toBe(1);
    t.clock.now += 3_600_000;
    worker.kick();
    await until(async () => (await row(e.id)).enabled === 0, 'disabled');
    const off = await row(e.id);
    expect([off.disabled_reason, off.last_error, off.attempts]).toEqual(['failing', 'HTTP 500', 3]);
    await write(0);
    t.clock.now += 86_400_000;
    expect(await worker.tick()).toBe(0);
    expect(r.received).toHaveLength(3);
    up = true;
    await t.app.webhooks.setEnabled(t.clinicA.id, e.id, true);
    worker.kick();
    await until(async () => (await row(e.id)).cursor === (await head()), 'caught up after enabling');
    expect(r.received.slice(3).map((x) => x.tipo)).toEqual(['clienta.creada', 'cita.creada', 'clienta.creada']);
    expect((await row(e.id)).disabled_reason).toBeNull();
  });

  it('a silent receiver holds only its own endpoint: others, and the API, go on; at most WEBHOOK_MAX_IN_FLIGHT (4) requests out', async () => {
    const silent = await receiver(() => 'never');
    const fine = await receiver();
    const silentOnes: EndpointRow[] = [];
    for (let i = 0; i < 5; i++) silentOnes.push((await endpoint(silent.url)).endpoint);
    await write(2);
    worker.kick();
    // Counted, not caught at a moment: on a busy machine the first may reach its time limit
    // (400 ms) before the fourth is out, and then the fifth goes out, rightly, with three held.
    await until(() => silent.received.length >= 4, '4 requests out');
    // The fifth silent endpoint waits for a free slot: never a fifth request while four are out.
    expect(silent.mostOpen).toBeLessThanOrEqual(4);
    const api = await t.app.inject({ method: 'GET', url: '/api/v1/citas', headers: { authorization: `Bearer ${t.keyA}` } });
    expect(api.statusCode).toBe(200);
    // After the time limit (WEBHOOK_TIMEOUT_MS) each silent one is a failed attempt, 'timeout', and frees its slot.
    await until(() => silent.received.length >= 5, 'the fifth endpoint got its turn');
    expect(silent.mostOpen).toBeLessThanOrEqual(4);
    await until(
      async () => (await Promise.all(silentOnes.map((e) => row(e.id)))).every((x) => x.attempts >= 1),
      'every silent endpoint failed once',
    );
    const d = await t.app.webhooks.deliveries(t.clinicA.id, silentOnes[0]!.id);
    expect(d[0]).toMatchObject({ outcome: 'failed', status_code: null, error: 'timeout' });
    for (const e of silentOnes) await t.app.webhooks.delete(t.clinicA.id, e.id);
    const { endpoint: f } = await endpoint(fine.url);
    await write(1);
    worker.kick();
    await until(async () => (await row(f.id)).cursor === (await head()), 'the fine endpoint delivered');
    expect(fine.received.map((x) => x.tipo)).toEqual(['clienta.creada', 'cita.creada']);
  });

  it('a slow receiver (answers after a while, within the limit) is delivered, and holds only its own endpoint', async () => {
    const slow = await receiver(() => ({ status: 200, delayMs: 150 }));
    const other = await receiver();
    const { endpoint: s } = await endpoint(slow.url);
    const { endpoint: o } = await endpoint(other.url);
    await write(3);
    worker.kick();
    await until(async () => (await row(o.id)).cursor === (await head()), 'the other endpoint delivered');
    expect(other.received).toHaveLength(4);
    await until(async () => (await row(s.id)).cursor === (await head()), 'the slow endpoint delivered');
    expect(slow.received.map((x) => x.tipo)).toEqual(other.received.map((x) => x.tipo));
  });

  // The last two stop the app's worker and run one of their own, whose log they read.
  it('an endpoint deleted while its request is out: the session ends without an error', async () => {
    await worker.stop();
    const errors: unknown[] = [];
    const log = {
      info() {},
      warn() {},
      error: (o: object, m: string) => {
        errors.push([m, o]);
      },
    };
    const own = new DeliveryWorker(t.database, t.app.webhooks, { ...t.config.webhooks, log, now: () => t.clock.now });
    await own.start();
    const held = await receiver(() => ({ status: 200, delayMs: 200 }));
    const { endpoint: e } = await endpoint(held.url);
    await write(0);
    own.kick();
    await until(() => held.received.length === 1, 'the request out');
    await t.app.webhooks.delete(t.clinicA.id, e.id);
    await until(() => held.open === 0 && own.inFlight === 0, 'the session over');
    await own.stop();
    expect(errors).toEqual([]);
  });

  it('a session stalled past its lease, and the endpoint claimed again by the same process: only the new session sends', async () => {
    await worker.stop();
    const warnings: string[] = [];
    const log = { info() {}, warn: (_o: object, m: string) => void warnings.push(m), error() {} };
    // An attempt's limit long enough for the test to hold requests open.
    const own = new DeliveryWorker(t.database, t.app.webhooks, {
      ...t.config.webhooks,
      timeoutMs: 10_000,
      leaseMs: 20_000,
      log,
      now: () => t.clock.now,
    });
    await own.start();
    const [oldFirst, newSecond] = [gate(), gate()];
    // The old session's first request, and the new session's second, are answered when the test says.
    const r = await receiver((_x, i) => ({ status: 200, after: i === 1 ? oldFirst.opened : i === 3 ? newSecond.opened : undefined }));
    const { endpoint: e } = await endpoint(r.url);
    await write(2);
    own.kick();
    await until(() => r.received.length === 1, "the old session's first request out");
    // The session stalls past its lease (the clock moves on, as on a starved host): the next poll
    // of the same process claims the endpoint again and sends the head event again, then the next.
    t.clock.now += 20_001;
    own.kick();
    await until(() => r.received.length === 3, "the new session's second request out");
    // The old session resumes while the new one is still at work: the cursor is not its to move.
    oldFirst.open();
    await until(
      () => warnings.some((m) => m.includes('lost its endpoint')) || r.received.length > 3,
      'the old session finding its lease gone (or sending again)',
    );
    newSecond.open();
    await until(async () => (await row(e.id)).cursor === (await head()), 'every event delivered');
    await own.stop();
    const ids = r.received.map((x) => x.id);
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(3);
    expect(ids[1]).toBe(ids[0]);
  });

  async function cursorAt(seq: number) {
    const { encodeCursor } = await import('../../src/services/feed.js');
    return encodeCursor(seq, t.clinicA.id);
  }
});
