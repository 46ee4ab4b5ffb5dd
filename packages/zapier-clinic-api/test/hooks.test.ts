// The instant triggers end to end, each through Zapier's app tester against a real server on
// 127.0.0.1: turning a Zap on subscribes its target URL (POST /api/v1/webhooks), a real import
// makes an event, the server's delivery worker sends the signed webhook to a real HTTP server
// standing in for Zapier's hook URL, and the trigger's perform turns what arrived into the item
// (the record exactly as the API shows it); turning the Zap off deletes the subscription. Then
// what perform refuses: a forged or replayed delivery (halted), a ping and other event types.
import type { IncomingHttpHeaders } from 'node:http';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { SCOPES } from '../../../src/domain/scopes.js';
import { startReceiver, type Received, type Receiver } from '../../../test/helpers/receiver.js';
import { until } from '../../../test/helpers/wait.js';
import { MESSAGES } from '../src/client';
import type { Subscription } from '../src/triggers';
import { A, messageOf, startClinic, uid, zapierFor, type Clinic } from './harness';

const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '10' };

/** The request as Zapier's hook receiver hands it to perform: headers prefixed with Http-, the body as received. */
function zapierRequest(r: Received) {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(r.headers as IncomingHttpHeaders)) {
    const title = name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
    headers[`Http-${title}`] = String(value);
  }
  return {
    rawRequest: { method: 'POST' as const, querystring: '', headers, content: r.body },
    cleanedRequest: JSON.parse(r.body) as object,
  };
}

type Rec = Record<string, unknown> & { id: string };

describe('instant triggers through real subscriptions and signed deliveries', () => {
  let clinic: Clinic;
  let zap: ReturnType<typeof zapierFor>;
  let key: string;
  const targets: Receiver[] = [];
  beforeAll(async () => {
    // The server's clock is the real one: deliveries are signed with its time, and perform
    // refuses a delivery more than 5 minutes from now.
    clinic = await startClinic({ env: ENV, nowMs: Date.now() });
    await clinic.t.app.webhookWorker.start();
    // Instant triggers need webhooks:write, which a key has only when chosen.
    key = (
      await clinic.t.keys.create({ clinicId: clinic.t.clinicA.id, name: 'Zapier', expiresAt: null, createdBy: null, scopes: [...SCOPES] })
    ).key;
    zap = zapierFor(clinic.baseUrl);
  });
  afterAll(async () => {
    await clinic.close();
    await Promise.all(targets.map((t) => t.close()));
  });
  beforeEach(() => clinic.tick());

  const auth = () => ({ authData: { api_key: key } });
  const trigger = (k: keyof typeof zap.app.triggers) => zap.app.triggers[k].operation;

  async function target() {
    const t = await startReceiver('/hooks/standard/1234567/abcdef0123456789/');
    targets.push(t);
    return t;
  }

  /** The next delivery of `tipo` to `t`, after the import that made it. */
  async function delivery(t: Receiver, tipo: string) {
    clinic.t.app.webhookWorker.kick();
    await until(() => t.received.some((r) => r.tipo === tipo), `a ${tipo} delivery`);
    return t.received.find((r) => r.tipo === tipo)!;
  }

  let n = 0;
  const newClienta = (over: object = {}) => ({
    type: 'clienta',
    id: uid('a', 1, 500 + ++n),
    nombre: `Nueva Clienta ${n}`,
    telefono: `+3465500${String(n).padStart(4, '0')}`,
    email: null,
    idioma: 'es',
    vip: false,
    cliente_desde: '2026-03-28',
    created_at: new Date(clinic.t.clock.now).toISOString(),
    ...over,
  });
  const cita = (id: string, estado: string) => ({
    type: 'cita',
    id,
    clienta_id: A.mario,
    fecha_hora: '2026-12-01T10:00:00+01:00',
    servicio: 'Limpieza facial',
    duracion_min: 60,
    precio: 55.5,
    estado,
    profesional_nombre: 'Laura Martín',
    sede_nombre: 'Sede Centro',
    created_at: new Date(clinic.t.clock.now).toISOString(),
  });

  const CASES = [
    {
      key: 'new_client' as const,
      tipo: 'clienta.creada',
      collection: 'clientas',
      change: async () => {
        const c = newClienta();
        await clinic.importA([c]);
        return c.id;
      },
    },
    {
      key: 'client_changed' as const,
      tipo: 'clienta.actualizada',
      collection: 'clientas',
      change: async () => {
        const c = newClienta();
        await clinic.importA([c]);
        clinic.tick();
        await clinic.importA([{ ...c, vip: true }]);
        return c.id;
      },
    },
    {
      key: 'new_appointment' as const,
      tipo: 'cita.creada',
      collection: 'citas',
      change: async () => {
        const id = uid('a', 2, 500 + ++n);
        await clinic.importA([cita(id, 'pendiente')]);
        return id;
      },
    },
    {
      key: 'appointment_changed' as const,
      tipo: 'cita.actualizada',
      collection: 'citas',
      change: async () => {
        const id = uid('a', 2, 500 + ++n);
        await clinic.importA([cita(id, 'confirmada')]);
        clinic.tick();
        // A cancellation is a change of state like any other.
        await clinic.importA([cita(id, 'cancelada')]);
        return id;
      },
    },
    {
      key: 'new_call' as const,
      tipo: 'llamada.creada',
      collection: 'llamadas',
      change: async () => {
        const id = uid('a', 3, 500 + ++n);
        const at = new Date(clinic.t.clock.now).toISOString();
        await clinic.importA([
          {
            type: 'llamada',
            id,
            clienta_id: A.maria,
            fecha_hora: at,
            telefono_caller: '+34600123456',
            duracion_segundos: 42,
            resultado: 'agendada',
            idioma: 'es',
            created_at: at,
          },
        ]);
        return id;
      },
    },
  ];

  it.each(CASES)('$key: on subscribes, a real change is delivered signed and becomes the record; off unsubscribes', async (c) => {
    const t = await target();
    const op = trigger(c.key);
    const sub = (await zap.run(op.performSubscribe, { ...auth(), targetUrl: t.url })) as Subscription;
    expect(sub).toMatchObject({ url: t.url, eventos: [c.tipo], modo: 'live' });
    expect(sub.secret).toMatch(/^whsec_/);
    const listed = await clinic.get<Rec & { descripcion: string }>(`/api/v1/webhooks/${sub.id}`, key);
    expect(listed).toMatchObject({ id: sub.id, url: t.url, eventos: [c.tipo] });
    expect(listed.descripcion).toMatch(/^Zapier: /);

    const id = await c.change();
    const received = await delivery(t, c.tipo);
    const items = (await zap.run(op.perform, { ...auth(), subscribeData: sub, ...zapierRequest(received) })) as Rec[];
    expect(items).toEqual([await clinic.get(`/api/v1/${c.collection}/${id}`)]);
    if (c.key === 'appointment_changed') expect(items[0]).toMatchObject({ estado: 'cancelada' });
    // Only the subscribed type was sent to this Zap.
    expect(t.received.every((r) => r.tipo === c.tipo)).toBe(true);

    expect(await zap.run(op.performUnsubscribe, { ...auth(), subscribeData: sub })).toEqual({});
    expect((await clinic.api(`/api/v1/webhooks/${sub.id}`, { key })).status).toBe(404);
    // Turning off a Zap whose subscription is already gone (deleted in the dashboard) is not an error.
    expect(await zap.run(op.performUnsubscribe, { ...auth(), subscribeData: sub })).toEqual({});
  });

  describe('what perform refuses', () => {
    let sub: Subscription;
    let received: Received;
    beforeAll(async () => {
      const t = await target();
      sub = (await zap.run(trigger('new_client').performSubscribe, { ...auth(), targetUrl: t.url })) as Subscription;
      await clinic.importA([newClienta()]);
      received = await delivery(t, 'clienta.creada');
    });
    afterAll(async () => {
      await zap.run(trigger('new_client').performUnsubscribe, { ...auth(), subscribeData: sub });
    });
    const perform = (bundle: object) => zap.run(trigger('new_client').perform, { ...auth(), subscribeData: sub, ...bundle });
    const halted = async (bundle: object) => {
      const err = await perform(bundle).catch((e: unknown) => e);
      expect(String(err)).toContain('HaltedError');
      return messageOf(err);
    };

    it('a body changed on the way, or signed with another secret: halted, nothing runs', async () => {
      const req = zapierRequest(received);
      const forged = req.rawRequest.content.replace('Nueva Clienta', 'Otra Clienta');
      expect(await halted({ ...req, rawRequest: { ...req.rawRequest, content: forged } })).toMatch(/signature does not match/);
      const other = { ...sub, secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}` };
      const err = await zap.run(trigger('new_client').perform, { ...auth(), ...req, subscribeData: other }).catch((e: unknown) => e);
      expect(messageOf(err)).toMatch(/signature does not match/);
      const unsigned = Object.fromEntries(Object.entries(req.rawRequest.headers).filter(([k]) => k !== 'Http-Webhook-Signature'));
      expect(await halted({ ...req, rawRequest: { ...req.rawRequest, headers: unsigned } })).toMatch(/signature does not match/);
    });

    it('a delivery replayed more than 5 minutes later: halted', async () => {
      const req = zapierRequest(received);
      const realNow = Date.now;
      Date.now = () => realNow() + 6 * 60_000;
      try {
        expect(await halted(req)).toMatch(/more than 5 minutes ago/);
      } finally {
        Date.now = realNow;
      }
      expect(((await perform(req)) as Rec[]).length).toBe(1);
    });

    it('a ping (the dashboard\'s "Send test event") starts nothing', async () => {
      const t = await target();
      const { endpoint, secret } = await clinic.t.app.webhooks.create({
        clinicId: clinic.t.clinicA.id,
        url: t.url,
        eventTypes: null,
        createdBy: null,
      });
      await clinic.t.app.webhooks.sendTest(clinic.t.clinicA.id, endpoint.id);
      await until(() => t.received.some((r) => r.tipo === 'ping'), 'the ping');
      const ping = t.received.find((r) => r.tipo === 'ping')!;
      expect(
        await zap.run(trigger('new_client').perform, { ...auth(), subscribeData: { id: endpoint.id, secret }, ...zapierRequest(ping) }),
      ).toEqual([]);
      await clinic.t.app.webhooks.delete(clinic.t.clinicA.id, endpoint.id);
    });
  });

  it('a key without webhooks:write: turning the Zap on says which permission to give', async () => {
    const t = await target();
    const err = await zap
      .run(trigger('new_call').performSubscribe, { authData: { api_key: clinic.key }, targetUrl: t.url })
      .catch((e: unknown) => e);
    expect(messageOf(err)).toBe(MESSAGES.missingScope('webhooks:write'));
  });
});
