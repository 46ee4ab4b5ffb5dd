// Test mode's webhooks, in process, on both databases, to real HTTP receivers on 127.0.0.1: an
// endpoint of the sandbox (the data clinic of a test key) receives the sandbox's moves, each
// change as an event; the live clinic's endpoint receives none of them; after a reset the endpoint
// stays and receives the moves that follow, never the old data's events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/services/webhooks/worker.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { startReceiver, until, type Receiver } from '../helpers/receiver.js';

// The lease outlasts the test clock's jumps (60 s each, 120 in all): a poll that read the clock
// before a jump would otherwise claim with a lease already expired, and the next poll of the same
// worker claim the endpoint again and send the event in flight twice (seen on PostgreSQL under load).
const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '10', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MS: '600000' };

describe.each(dialects())('sandbox webhooks on %s', (dialect) => {
  let t: TestApp;
  let worker: DeliveryWorker;
  let sandboxId: string;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: ENV });
    await t.keys.create({ clinicId: t.clinicA.id, name: 'Sandbox', expiresAt: null, createdBy: null, mode: 'test' });
    sandboxId = (await t.rt.sandboxes.find(t.clinicA.id))!;
    worker = t.app.webhookWorker;
    await worker.start();
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  const receiver = async () => {
    const r = await startReceiver('/hook');
    receivers.push(r);
    return r;
  };
  const eventsOf = (r: Receiver) => r.received.map((x) => JSON.parse(x.body) as { id: string; tipo: string });

  it("delivers the sandbox's moves to its endpoints only, and after a reset only what follows", async () => {
    const test = await receiver();
    const live = await receiver();
    const endpoint = (await t.app.webhooks.create({ clinicId: sandboxId, url: test.url, eventTypes: null, createdBy: null })).endpoint;
    // The worker has recorded every delivery (its cursor at the sandbox's head): only then may the
    // test's clock jump, else the lease of a delivery still being recorded looks expired and it is
    // claimed and sent again (at least once, as documented, but not what this test counts).
    const caughtUp = async () => {
      const e = await t.app.webhooks.get(sandboxId, endpoint.id);
      const v = await t.database.db
        .selectFrom('clinic_data_versions')
        .select('events_seq')
        .where('clinic_id', '=', sandboxId)
        .executeTakeFirst();
      return e !== undefined && Number(e.cursor) >= Number(v?.events_seq ?? 0);
    };
    await t.app.webhooks.create({ clinicId: t.clinicA.id, url: live.url, eventTypes: null, createdBy: null });

    t.clock.now += 60_000;
    await t.rt.sandboxes.moveAll();
    worker.kick();
    // Every move receives a call: its event ends the move's deliveries (in order).
    await until(() => eventsOf(test).some((e) => e.tipo === 'llamada.creada'), 'the first move delivered');
    const first = eventsOf(test);
    expect(first.map((e) => e.tipo)).toContain('cita.creada');
    await until(caughtUp, 'the first move recorded');

    t.clock.now += 60_000;
    await t.rt.sandboxes.reset(t.clinicA.id);
    t.clock.now += 60_000;
    await t.rt.sandboxes.moveAll();
    worker.kick();
    await until(() => eventsOf(test).filter((e) => e.tipo === 'llamada.creada').length === 2, 'the move after the reset delivered');
    // Each event once; none of the live clinic's endpoint.
    const all = eventsOf(test);
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    expect(live.received).toEqual([]);
  });
});
