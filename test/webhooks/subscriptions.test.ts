// Subscriptions by API (POST, GET, DELETE /api/v1/webhooks) on both databases, in process, with
// real receivers on 127.0.0.1: the scope webhooks:write (never a default), the body's rules (JSON
// only, 16 KB, each field named when refused), the event types and contact details a key may
// read, Idempotency-Key, the endpoint limit, deletion stopping deliveries, and endpoints of a
// revoked or expired key disabled with the reason.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/domain/scopes.js';
import { createUser } from '../../src/services/accounts.js';
import { buildTestApp, seedRecords, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { clientaRecord } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { until } from '../helpers/wait.js';
import { call, expectError, tick } from '../http/helpers.js';

const ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_MS: '10',
  WEBHOOK_TIMEOUT_MS: '400',
  WEBHOOK_LEASE_MS: '1400',
  WEBHOOK_RETRY_BASE_MS: '10',
  WEBHOOK_RETRY_MAX_MS: '20',
};
const READS: Scope[] = ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read'];
const PATH = '/api/v1/webhooks';

let n = 0;

describe.each(dialects())('subscriptions by API on %s', (dialect) => {
  let t: TestApp;
  let writer: string;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: ENV });
    writer = await keyWith([...READS, 'webhooks:write']);
  });
  afterAll(async () => {
    await t.close();
    await Promise.all(receivers.map((r) => r.close()));
  });
  afterEach(async () => {
    await t.app.webhookWorker.idle();
    for (const c of [t.clinicA, t.clinicB]) for (const e of await t.app.webhooks.list(c.id)) await t.app.webhooks.delete(c.id, e.id);
    tick(t);
  });

  async function keyWith(scopes: Scope[], clinicId = t.clinicA.id, expiresAt: number | null = null) {
    return (await t.keys.create({ clinicId, name: `sub ${++n}`, expiresAt, createdBy: null, scopes })).key;
  }

  async function receiver(answer?: Receiver['answer']) {
    const r = await startReceiver('/hook', answer);
    receivers.push(r);
    return r;
  }

  function post(body: unknown, opts: { key?: string; headers?: Record<string, string>; raw?: string } = {}) {
    return t.app.inject({
      method: 'POST',
      url: PATH,
      headers: { authorization: `Bearer ${opts.key ?? writer}`, 'content-type': 'application/json', ...opts.headers },
      payload: opts.raw ?? JSON.stringify(body),
    });
  }

  async function newClienta() {
    const id = `0c00000f-0000-4000-8000-${String(++n).padStart(12, '0')}`;
    await seedRecords(t.database, t.clinicA, [clientaRecord(id, `Sub ${n}`, `+3461000${String(n).padStart(4, '0')}`)], t.clock.now);
    return id;
  }

  it('needs webhooks:write, which a new key does not get unless chosen; /me lists it', async () => {
    // keyA was made without naming scopes: the default set, every reading scope and not this one.
    const me = (await call(t, '/api/v1/me')).json();
    expect(me.api_key.scopes).toEqual(READS);
    for (const [method, url] of [
      ['POST', PATH],
      ['GET', PATH],
      ['GET', `${PATH}/00000000-0000-4000-8000-000000000001`],
      ['DELETE', `${PATH}/00000000-0000-4000-8000-000000000001`],
    ] as const) {
      const res = await t.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${t.keyA}`, 'content-type': 'application/json' },
        ...(method === 'POST' ? { payload: '{}' } : {}),
      });
      expect([res.statusCode, res.json().error.code, res.json().error.scope]).toEqual([403, 'insufficient_scope', 'webhooks:write']);
    }
    expect((await call(t, '/api/v1/me', { key: writer })).json().api_key.scopes).toEqual([...READS, 'webhooks:write']);
  });

  it('subscribes (201, the secret once), lists and reads without the secret, delivers, and deletes (204)', async () => {
    const r = await receiver();
    const res = await post({ url: r.url, eventos: ['clienta.creada'], descripcion: 'Zapier: new clients' });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json();
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: r.url,
      eventos: ['clienta.creada'],
      modo: 'live',
      descripcion: 'Zapier: new clients',
      estado: 'active',
      motivo: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/),
      secret: expect.stringMatching(/^whsec_/),
    });
    const { secret, ...shown } = created;
    const list = await call(t, PATH, { key: writer });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ webhooks: [shown] });
    expect(list.body).not.toContain(secret);
    expect((await call(t, `${PATH}/${created.id}`, { key: writer })).json()).toEqual(shown);
    // The dashboard's endpoint records the key, and names it.
    const row = (await t.app.webhooks.get(t.clinicA.id, created.id))!;
    const sub = await t.app.webhooks.subscriber(row);
    expect(sub).toMatchObject({ kind: 'key', name: expect.stringMatching(/^sub /) });
    const owner = await createUser(t.database.db, {
      clinicId: t.clinicA.id,
      email: `sub${dialect}@clinic.test`,
      role: 'owner',
      password: 'x'.repeat(12),
    });
    const cookies = { clinic_session: await t.rt.sessions.create(owner.id, 'en') };
    for (const path of ['/dashboard/settings/api/webhooks', `/dashboard/settings/api/webhooks/${created.id}`]) {
      const page = await t.app.inject({ method: 'GET', url: path, cookies });
      expect(page.body, path).toContain(`API key “${sub!.name}”`);
    }
    // An event after it is delivered.
    await t.app.webhookWorker.start();
    const clienta = await newClienta();
    t.app.webhookWorker.kick();
    await until(() => r.received.length >= 1, 'the delivery');
    expect(JSON.parse(r.received[0]!.body)).toMatchObject({ tipo: 'clienta.creada', datos: { id: clienta } });

    const del = await call(t, `${PATH}/${created.id}`, { key: writer, method: 'DELETE' });
    expect(del.statusCode, del.body).toBe(204);
    expect(del.body).toBe('');
    expectError(await call(t, `${PATH}/${created.id}`, { key: writer }), 404, 'not_found');
    expectError(await call(t, `${PATH}/${created.id}`, { key: writer, method: 'DELETE' }), 404, 'not_found');
  });

  it("never shows or deletes another clinic's endpoint", async () => {
    const r = await receiver();
    const other = (
      await post({ url: r.url, eventos: ['*'] }, { key: await keyWith(['citas:read', 'webhooks:write'], t.clinicB.id) })
    ).json();
    expect((await call(t, PATH, { key: writer })).json()).toEqual({ webhooks: [] });
    expectError(await call(t, `${PATH}/${other.id}`, { key: writer }), 404, 'not_found');
    expectError(await call(t, `${PATH}/${other.id}`, { key: writer, method: 'DELETE' }), 404, 'not_found');
    expect(await t.app.webhooks.get(t.clinicB.id, other.id)).toBeDefined();
  });

  it('sends only the event types and the contact details the key may read', async () => {
    const r = await receiver();
    const noContact = await keyWith(['clientas:read', 'citas:read', 'webhooks:write']);
    const all = (await post({ url: r.url, eventos: ['*'] }, { key: noContact })).json();
    expect(all.eventos).toEqual([
      'clienta.creada',
      'clienta.actualizada',
      'clienta.eliminada',
      'cita.creada',
      'cita.actualizada',
      'cita.eliminada',
    ]);
    const refused = await post({ url: r.url, eventos: ['llamada.creada'] }, { key: noContact });
    expect([refused.statusCode, refused.json().error.code, refused.json().error.scope]).toEqual([
      403,
      'insufficient_scope',
      'llamadas:read',
    ]);
    expectError(await post({ url: r.url, eventos: ['cita.borrada'] }), 400, 'invalid_parameter', 'eventos');
    expectError(await post({ url: r.url, eventos: ['*', 'cita.creada'] }), 400, 'invalid_parameter', 'eventos');
    // A key that reads everything asking for everything gets every type, later ones too.
    expect((await post({ url: r.url, eventos: ['*'] })).json().eventos).toEqual(['*']);

    await t.app.webhookWorker.start();
    await newClienta();
    t.app.webhookWorker.kick();
    await until(() => r.received.length >= 2, 'both deliveries');
    const bodies = r.received.map((x) => JSON.parse(x.body) as { datos: { telefono: string | null } });
    expect(bodies.map((b) => b.datos.telefono).sort()).toEqual([expect.stringMatching(/^\+346/), null]);
  });

  it('refuses what is not a subscription: each field named, JSON only, 16 KB at most', async () => {
    const r = await receiver();
    expectError(await post({ url: 'ftp://example.com/x', eventos: ['*'] }), 400, 'invalid_parameter', 'url');
    expect(expectError(await post({ eventos: ['*'] }), 400, 'invalid_parameter', 'url').message).toMatch(/^url is required: an https:/);
    expect(expectError(await post({ url: 5, eventos: ['*'] }), 400, 'invalid_parameter', 'url').message).toMatch(/^url must be an https:/);
    expect(expectError(await post({ url: r.url }), 400, 'invalid_parameter', 'eventos').message).toMatch(/^eventos is required: \["\*"\]/);
    // Present but wrong is not "required": the message says what was sent that is not an event type.
    for (const eventos of [[], 'cita.creada', [7]])
      expect(expectError(await post({ url: r.url, eventos }), 400, 'invalid_parameter', 'eventos').message).toMatch(
        /^eventos must be \["\*"\]/,
      );
    const unknownType = expectError(await post({ url: r.url, eventos: ['cita.creada', 'cita.nope'] }), 400, 'invalid_parameter', 'eventos');
    expect(unknownType.message).toMatch(/^eventos must be \["\*"\] or a list of: .*cita\.creada.*; not: "cita\.nope"$/);
    expectError(await post({ url: r.url, eventos: ['*'], descripcion: 'x'.repeat(501) }), 400, 'invalid_parameter', 'descripcion');
    expectError(await post({ url: r.url, eventos: ['*'], descripcion: 'a\u0000b' }), 400, 'invalid_parameter', 'descripcion');
    expectError(await post({ url: r.url, eventos: ['*'], secret: 'mine' }), 400, 'unknown_parameter', 'secret');
    expectError(await post([r.url]), 400, 'invalid_parameter', 'body');
    expectError(await post(null, { raw: '{"url": ' }), 400, 'invalid_parameter');
    const text = await post(null, { raw: 'url=x', headers: { 'content-type': 'text/plain' } });
    expectError(text, 415, 'unsupported_media_type');
    expect(text.json().error.message).toContain('text/plain');
    expectError(
      await post(null, { raw: 'url=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported_media_type',
    );
    const none = await t.app.inject({ method: 'POST', url: PATH, headers: { authorization: `Bearer ${writer}` } });
    expectError(none, 415, 'unsupported_media_type');
    expectError(await post({ url: r.url, eventos: ['*'], descripcion: 'x'.repeat(17_000) }), 413, 'payload_too_large');
    // The body is never read for a request without a valid key.
    expectError(await post(null, { key: 'nope', raw: 'x', headers: { 'content-type': 'text/plain' } }), 401, 'invalid_api_key');
    expect(await t.app.webhooks.list(t.clinicA.id)).toEqual([]);
    // Other methods: 405 with what the path takes.
    const put = await call(t, PATH, { key: writer, method: 'PUT' });
    expectError(put, 405, 'method_not_allowed');
    expect(put.headers['allow']).toBe('GET, HEAD, POST');
    const patch = await call(t, `${PATH}/00000000-0000-4000-8000-000000000001`, { key: writer, method: 'PATCH' });
    expect(patch.headers['allow']).toBe('GET, HEAD, DELETE');
    expectError(await call(t, `${PATH}/not-a-uuid`, { key: writer }), 400, 'invalid_parameter', 'id');
  });

  it('refuses a private destination without WEBHOOK_ALLOW_PRIVATE, saying why', async () => {
    const strict = await buildTestApp(dialect, { seed: false });
    try {
      const key = (
        await strict.keys.create({
          clinicId: strict.clinicA.id,
          name: 'w',
          expiresAt: null,
          createdBy: null,
          scopes: ['citas:read', 'webhooks:write'],
        })
      ).key;
      const res = await strict.app.inject({
        method: 'POST',
        url: PATH,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ url: 'https://127.0.0.1/hook', eventos: ['*'] }),
      });
      const err = expectError(res, 400, 'invalid_parameter', 'url');
      expect(err.message).toMatch(/private|loopback/);
    } finally {
      await strict.close();
    }
  });

  it('Idempotency-Key: the same key answers the same endpoint and secret, and creates nothing', async () => {
    const r = await receiver();
    const body = { url: r.url, eventos: ['cita.creada'] };
    const first = await post(body, { headers: { 'idempotency-key': 'order-42' } });
    expect(first.statusCode).toBe(201);
    const again = await post(body, { headers: { 'idempotency-key': 'order-42' } });
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(await t.app.webhooks.list(t.clinicA.id)).toHaveLength(1);
    // Another body with the same key: refused, nothing made.
    expectError(
      await post({ ...body, descripcion: 'other' }, { headers: { 'idempotency-key': 'order-42' } }),
      409,
      'conflict',
      'Idempotency-Key',
    );
    // Another key, or another API key with the same one: a new endpoint.
    expect((await post(body, { headers: { 'idempotency-key': 'order-43' } })).json().id).not.toBe(first.json().id);
    const otherKey = await keyWith(['citas:read', 'webhooks:write']);
    expect((await post(body, { key: otherKey, headers: { 'idempotency-key': 'order-42' } })).json().id).not.toBe(first.json().id);
    // After 24 hours the key is free again.
    t.clock.now += 24 * 3_600_000 + 1;
    expect((await post(body, { headers: { 'idempotency-key': 'order-42' } })).json().id).not.toBe(first.json().id);
    expectError(await post(body, { headers: { 'idempotency-key': 'bad key' } }), 400, 'invalid_parameter', 'Idempotency-Key');
    // The keys are stored hashed.
    const stored = await t.database.db.selectFrom('webhook_idempotency').select('key_hash').execute();
    expect(stored.length).toBeGreaterThan(0);
    expect(JSON.stringify(stored)).not.toContain('order-42');
  });

  it('allows at most 10 endpoints per clinic (409)', async () => {
    const r = await receiver();
    for (let i = 0; i < 10; i++) expect((await post({ url: `${r.url}?n=${i}`, eventos: ['*'] })).statusCode).toBe(201);
    expectError(await post({ url: r.url, eventos: ['*'] }), 409, 'conflict', 'url');
  });

  it('a deletion stops deliveries to a failing endpoint at once', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const created = (await post({ url: r.url, eventos: ['*'] })).json();
    await t.app.webhookWorker.start();
    await newClienta();
    t.app.webhookWorker.kick();
    await until(() => r.received.length >= 1, 'the first attempt');
    // The retry is due on the app's clock, which the test moves.
    await t.app.webhookWorker.idle();
    tick(t);
    t.app.webhookWorker.kick();
    await until(() => r.received.length >= 2, 'the retry');
    expect((await call(t, `${PATH}/${created.id}`, { key: writer, method: 'DELETE' })).statusCode).toBe(204);
    await t.app.webhookWorker.idle();
    const seen = r.received.length;
    await newClienta();
    t.app.webhookWorker.kick();
    // Due again, and several polls of the worker later: nothing more came.
    tick(t);
    for (let i = 0; i < 10; i++) {
      await t.app.webhookWorker.tick();
      await t.app.webhookWorker.idle();
    }
    expect(r.received.length).toBe(seen);
  });

  it('disables the endpoints of a key at once when it is revoked, and at the next pass when it expires, saying why; a rolled key hands them over', async () => {
    const r = await receiver();
    const subscriber = (name: string, expiresAt: number | null = null) =>
      t.keys.create({ clinicId: t.clinicA.id, name, expiresAt, createdBy: null, scopes: ['citas:read', 'webhooks:write'] });
    const revoked = await subscriber('to revoke');
    const expiring = await subscriber('to expire', Math.floor(t.clock.now / 1000) + 3600);
    const rolled = await subscriber('to roll');
    const a = (await post({ url: r.url, eventos: ['*'] }, { key: revoked.key })).json();
    const b = (await post({ url: r.url, eventos: ['*'] }, { key: expiring.key })).json();
    const c = (await post({ url: r.url, eventos: ['*'] }, { key: rolled.key })).json();
    const replacement = await t.keys.roll(t.clinicA.id, rolled.id, 60, null);
    const state = async (id: string) => (await call(t, `${PATH}/${id}`, { key: writer })).json();
    // A revocation disables its key's endpoints itself, before any maintenance pass.
    await t.keys.revoke(t.clinicA.id, revoked.id);
    expect(await state(a.id)).toMatchObject({ estado: 'disabled', motivo: 'key_revoked' });
    expect(await state(b.id)).toMatchObject({ estado: 'active' });
    t.clock.now += 3600_000;
    const report = await t.rt.webhookMaintenance.pass();
    expect(report.disabled.map((d) => [d.id, d.reason])).toEqual([[b.id, 'key_expired']]);
    expect(await state(a.id)).toMatchObject({ estado: 'disabled', motivo: 'key_revoked' });
    expect(await state(b.id)).toMatchObject({ estado: 'disabled', motivo: 'key_expired' });
    // The rolled key's endpoint belongs to its replacement now, and keeps going.
    expect(await state(c.id)).toMatchObject({ estado: 'active' });
    const row = (await t.app.webhooks.get(t.clinicA.id, c.id))!;
    expect(row.created_by_key).toBe(replacement!.issued.id);
    // Revoking a rolled key alone ends its overlap; its endpoints still go to its replacement.
    const again = await subscriber('rolled, then revoked alone');
    const d = (await post({ url: r.url, eventos: ['*'] }, { key: again.key })).json();
    const next = await t.keys.roll(t.clinicA.id, again.id, 60, null);
    await t.keys.revoke(t.clinicA.id, again.id);
    expect(await state(d.id)).toMatchObject({ estado: 'active' });
    expect((await t.rt.webhookMaintenance.pass()).disabled).toEqual([]);
    expect((await t.app.webhooks.get(t.clinicA.id, d.id))!.created_by_key).toBe(next!.issued.id);
    expect(await state(d.id)).toMatchObject({ estado: 'active' });
    // Not deleted: the dashboard shows them with the reason.
    expect(await t.app.webhooks.list(t.clinicA.id)).toHaveLength(4);
  });

  it('is in the OpenAPI document: scope, request body, 201 and 204, the idempotency header', async () => {
    const doc = (await call(t, '/api/v1/openapi.json', { key: null })).json();
    const create = doc.paths[PATH].post;
    expect(create.operationId).toBe('createWebhook');
    expect(create['x-scope']).toBe('webhooks:write');
    expect(Object.keys(create.requestBody.content)).toEqual(['application/json']);
    expect(Object.keys(create.requestBody.content['application/json'].schema.properties)).toEqual(['url', 'eventos', 'descripcion']);
    expect(create.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WebhookEndpointCreated' });
    for (const status of ['409', '413', '415']) expect(create.responses[status], status).toBeDefined();
    expect(create.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'idempotency-key' }));
    const del = doc.paths[`${PATH}/{id}`].delete;
    expect(del.responses['204'].content).toBeUndefined();
    expect(doc.paths[PATH].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/WebhookEndpointsList',
    });
    expect(Object.keys(doc.components.schemas.WebhookEndpoint.properties)).not.toContain('secret');
  });

  it('logs the API calls in the request log, as any other', async () => {
    const r = await receiver();
    await post({ url: r.url, eventos: ['*'] });
    await t.rt.requestLog!.flush();
    const rows = await t.database.db.selectFrom('request_log').select(['method', 'path', 'status']).where('method', '=', 'POST').execute();
    expect(rows).toContainEqual({ method: 'POST', path: PATH, status: 201 });
  });
});
