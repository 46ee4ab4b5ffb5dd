// api.webhooks against the real service on 127.0.0.1 (SQLite): create (typed body, the secret
// once, an Idempotency-Key on every call so a retried POST makes one endpoint), list, get and
// delete (false once gone), and a POST retried after a 503 that creates nothing twice.
import { ClinicApi, ClinicApiError, type WebhookEndpoint, type WebhookEndpointCreated } from '@clinic-api/sdk';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { listeningApp, recordingFetch, type ListeningApp } from './helpers.js';

describe('ClinicApi.webhooks', () => {
  let t: ListeningApp;
  let api: ClinicApi;
  let key: string;
  beforeAll(async () => {
    t = await listeningApp('sqlite', { env: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_RPS: '10000', RATE_LIMIT_BURST: '10000' } });
    key = (
      await t.keys.create({
        clinicId: t.clinicA.id,
        name: 'sdk',
        expiresAt: null,
        createdBy: null,
        scopes: ['citas:read', 'webhooks:write'],
      })
    ).key;
    api = new ClinicApi({ baseUrl: t.baseUrl, apiKey: key });
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates, lists, reads and deletes, typed from the document', async () => {
    const created = await api.webhooks.create({ url: 'http://127.0.0.1:9/hook', eventos: ['cita.creada'], descripcion: 'sdk' });
    expectTypeOf(created).toEqualTypeOf<WebhookEndpointCreated>();
    expect(created).toMatchObject({ url: 'http://127.0.0.1:9/hook', eventos: ['cita.creada'], modo: 'live', estado: 'active' });
    expect(created.secret).toMatch(/^whsec_/);
    const list = await api.webhooks.list();
    expectTypeOf(list).toEqualTypeOf<WebhookEndpoint[]>();
    expect(list.map((e) => e.id)).toEqual([created.id]);
    expect(list[0]).not.toHaveProperty('secret');
    expect(await api.webhooks.get(created.id)).toEqual(list[0]);
    // @ts-expect-error 'cita.borrada' is not an event type: the document's enum reaches the SDK
    await expect(api.webhooks.create({ url: 'http://127.0.0.1:9/x', eventos: ['cita.borrada'] })).rejects.toMatchObject({
      code: 'invalid_parameter',
      param: 'eventos',
      status: 400,
    });
    expect(await api.webhooks.delete(created.id)).toBe(true);
    expect(await api.webhooks.delete(created.id)).toBe(false);
    await expect(api.webhooks.get(created.id)).rejects.toBeInstanceOf(ClinicApiError);
  });

  it('sends an Idempotency-Key, and retries a POST that failed with it: one endpoint, the same secret', async () => {
    const rec = recordingFetch();
    let failNext = true;
    // The first answer is lost: the service made the endpoint, the client saw a 503.
    const lossy: typeof fetch = async (input, init) => {
      const res = await rec.fetch(input, init);
      if (failNext && init?.method === 'POST') {
        failNext = false;
        return new Response('{"error":{"code":"service_unavailable","message":"x","request_id":"r"}}', {
          status: 503,
          headers: { 'content-type': 'application/json', 'retry-after': '0' },
        });
      }
      return res;
    };
    const retrying = new ClinicApi({ baseUrl: t.baseUrl, apiKey: key, fetch: lossy, retry: { baseDelayMs: 1 } });
    const before = (await api.webhooks.list()).length;
    const created = await retrying.webhooks.create({ url: 'http://127.0.0.1:9/retry', eventos: ['*'] });
    const posts = rec.requests.filter((r) => r.status !== 'error' && r.url.endsWith('/api/v1/webhooks'));
    expect(posts).toHaveLength(2);
    expect(posts[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);
    expect((await api.webhooks.list()).length).toBe(before + 1);
    expect(created.secret).toMatch(/^whsec_/);
    // Without an Idempotency-Key of its own a POST is never retried: the SDK always sends one.
    const own = await api.webhooks.create({ url: 'http://127.0.0.1:9/own', eventos: ['*'] }, { idempotencyKey: 'mine-1' });
    const again = await api.webhooks.create({ url: 'http://127.0.0.1:9/own', eventos: ['*'] }, { idempotencyKey: 'mine-1' });
    expect(again).toEqual(own);
  });
});
