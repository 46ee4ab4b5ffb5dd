// @clinic-api/sdk/webhooks against real deliveries of the service's worker (and a ping), on both
// databases: each verified from the headers as Node's http server gives them and as a fetch
// Request has them, the body as text or bytes, typed as the feed's event; and refused with a
// WebhookVerificationError when the secret, the body, the signature or the time is wrong.
import { WebhookVerificationError, WebhookVerifier, verifyWebhook, type WebhookEvent } from '@clinic-api/sdk/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, seedRecords, type TestApp } from '../../../test/helpers/app.js';
import { dialects } from '../../../test/helpers/db.js';
import { citaRecord, clientaRecord, uid } from '../../../test/helpers/fixtures.js';
import { startReceiver, type Receiver } from '../../../test/helpers/receiver.js';
import { until } from '../../../test/helpers/wait.js';

describe.each(dialects())('verifying deliveries of the service on %s', (dialect) => {
  let t: TestApp;
  let receiver: Receiver;
  let secret: string;
  beforeAll(async () => {
    t = await buildTestApp(dialect, { seed: false, env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '20' } });
    receiver = await startReceiver('/hooks');
    ({ secret } = await t.app.webhooks.create({ clinicId: t.clinicA.id, url: receiver.url, eventTypes: null, createdBy: null }));
    await t.app.webhookWorker.start();
    const clienta = uid('a', 1, 1);
    await seedRecords(t.database, t.clinicA, [
      clientaRecord(clienta, 'Lucía Gómez', '+34600111222'),
      citaRecord(uid('a', 2, 1), clienta, '2026-04-02T10:00:00+02:00'),
    ]);
    await until(() => receiver.received.length >= 2, 'two deliveries');
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it("the feed's events, typed, from Node's headers and a fetch Request's, the body as text or bytes", async () => {
    const verifier = new WebhookVerifier(secret);
    const events: WebhookEvent[] = receiver.received.map((r) => verifier.verify(r.body, r.headers));
    expect(events.map((e) => e.tipo)).toEqual(['clienta.creada', 'cita.creada']);
    const cita = events[1]!;
    if (cita.tipo !== 'cita.creada') throw new Error('a cita.creada');
    expect(cita.datos).toMatchObject({ id: uid('a', 2, 1), cliente_nombre: 'Lucía Gómez' });

    // As an edge runtime's handler has it: a Request, its Headers, its body as bytes.
    const first = receiver.received[0]!;
    const request = new Request('http://127.0.0.1/hooks', {
      method: 'POST',
      headers: Object.entries(first.headers).map(([k, v]) => [k, String(v)] as [string, string]),
      body: first.body,
    });
    const bytes = new Uint8Array(await request.arrayBuffer());
    expect(verifyWebhook(secret, bytes, request.headers)).toEqual(events[0]);
    expect(verifier.verify(bytes.buffer, request.headers)).toEqual(events[0]);
  });

  it('a ping (the test event) verifies too', async () => {
    const endpoint = (await t.app.webhooks.list(t.clinicA.id))[0]!;
    await t.app.webhooks.sendTest(t.clinicA.id, endpoint.id);
    const ping = receiver.received.at(-1)!;
    const event = new WebhookVerifier(secret).verify(ping.body, ping.headers);
    expect(event.tipo).toBe('ping');
    if (event.tipo === 'ping') expect(event.datos.endpoint_id).toBe(endpoint.id);
  });

  it('refused: another secret, a changed body, a missing or bad signature, a timestamp out of the 5 minutes', () => {
    const r = receiver.received[0]!;
    const verifier = new WebhookVerifier(secret);
    const refused = (body: string, headers: Record<string, unknown>, v = verifier) => {
      const err = (() => {
        try {
          v.verify(body, headers as Record<string, string>);
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(err).toBeInstanceOf(WebhookVerificationError);
      return (err as Error).message;
    };
    expect(refused(r.body, r.headers, new WebhookVerifier(`whsec_${btoa('another secret entirely!!')}`))).toMatch(
      /^webhook delivery refused: No matching signature/,
    );
    expect(refused(r.body.replace('Lucía', 'Lucia'), r.headers)).toMatch(/No matching signature/);
    expect(refused(r.body, { ...r.headers, 'webhook-signature': undefined })).toMatch(/Missing required headers/);
    expect(refused(r.body, { ...r.headers, 'webhook-signature': 'v1,AAAA' })).toMatch(/No matching signature/);
    const old = String(Number(r.headers['webhook-timestamp']) - 600);
    expect(refused(r.body, { ...r.headers, 'webhook-timestamp': old })).toMatch(/too old/);
  });
});

describe('new WebhookVerifier(secret)', () => {
  it.each(['', 'secret', 'whsec_', undefined])('refuses %j, naming what a secret is', (s) => {
    expect(() => new WebhookVerifier(s as never)).toThrow(/whsec_\.\.\. \(shown once when the endpoint was added\)/);
  });
});
