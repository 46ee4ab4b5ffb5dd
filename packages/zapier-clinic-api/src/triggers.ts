// Instant triggers ("REST hooks"): turning a Zap on subscribes its Zapier URL to the clinic's
// events (POST /api/v1/webhooks), turning it off deletes that subscription. Each delivery is a
// signed event ({id, tipo, ocurrido_at, datos}); the Zap gets `datos`, the record exactly as
// the API's lists show it. The editor's samples are real recent records from the lists.
import type { Bundle, ZObject } from 'zapier-platform-core';

import { CITA_FIELDS, CITA_SAMPLE, CLIENTA_FIELDS, CLIENTA_SAMPLE, LLAMADA_FIELDS, LLAMADA_SAMPLE } from './fields';
import { header, verify } from './signature';

type Collection = 'citas' | 'clientas' | 'llamadas';

interface HookSpec {
  key: string;
  noun: string;
  label: string;
  description: string;
  /** The event types subscribed to. */
  events: string[];
  collection: Collection;
  /** Which records the editor's samples are: the newest created, or the latest changed. */
  newest: 'created_at' | 'updated_at';
  outputFields: typeof CITA_FIELDS;
  sample: object;
}

export interface Subscription {
  id: string;
  url: string;
  eventos: string[];
  modo: string;
  created_at: string;
  secret: string;
}

interface Evento {
  id: string;
  tipo: string;
  ocurrido_at: string;
  datos: Record<string, unknown>;
}

/** How many samples the editor gets, and how far back among the latest changes they are looked for. */
const SAMPLES = 10;
const LOOK_BACK = 100;
/** updated_since this early lists every record, oldest change first. */
const EVER = '2000-01-01T00:00:00Z';

/**
 * The latest records of a collection: the list in `updated_since` mode is ordered by change, so its
 * tail is the latest changed (the page before it found through `total`), newest first by `by`.
 */
export async function recentRecords(z: ZObject, collection: Collection, by: 'created_at' | 'updated_at') {
  const url = `/api/v1/${collection}`;
  const first = await z.request({ url, params: { updated_since: EVER, limit: '1' } });
  const total = (first.data as { total: number }).total;
  const offset = Math.max(0, total - LOOK_BACK);
  const page = await z.request({ url, params: { updated_since: EVER, limit: String(LOOK_BACK), offset: String(offset) } });
  const records = (page.data as Record<Collection, ({ id: string } & Record<typeof by, string>)[]>)[collection];
  return records.sort((a, b) => Date.parse(b[by]) - Date.parse(a[by]) || (a.id < b.id ? 1 : -1)).slice(0, SAMPLES);
}

function hookTrigger(spec: HookSpec) {
  const performSubscribe = async (z: ZObject, bundle: Bundle) => {
    const res = await z.request({
      method: 'POST',
      url: '/api/v1/webhooks',
      body: { url: bundle.targetUrl, eventos: spec.events, descripcion: `Zapier: ${spec.label}` },
    });
    // Kept by Zapier as the Zap's subscribeData: the id to unsubscribe, the secret to verify deliveries.
    return res.data as Subscription;
  };

  const performUnsubscribe = async (z: ZObject, bundle: Bundle) => {
    const id = (bundle.subscribeData as Subscription | undefined)?.id;
    if (!id) return {};
    const res = await z.request({ method: 'DELETE', url: `/api/v1/webhooks/${encodeURIComponent(id)}`, skipThrowForStatus: true });
    // Already gone (deleted in the dashboard): turning the Zap off has nothing left to do.
    if (res.status !== 204 && res.status !== 404) res.throwForStatus();
    return {};
  };

  const perform = async (z: ZObject, bundle: Bundle) => {
    const secret = (bundle.subscribeData as Subscription | undefined)?.secret;
    const raw = bundle.rawRequest;
    // Zapier hands over the body as received (rawRequest.content) and parsed (cleanedRequest).
    if (secret && raw?.content !== undefined) {
      const verdict = verify(
        secret,
        {
          id: header(raw.headers, 'webhook-id') ?? '',
          timestamp: header(raw.headers, 'webhook-timestamp') ?? '',
          signature: header(raw.headers, 'webhook-signature') ?? '',
          body: raw.content,
        },
        Math.floor(Date.now() / 1000),
      );
      if (verdict !== 'valid') {
        // Halted, not failed: the Zap history shows it, and nothing runs on data that may be forged.
        throw new z.errors.HaltedError(
          verdict === 'stale'
            ? 'Ignored a delivery sent more than 5 minutes ago (its webhook-timestamp): it may be a replay'
            : "Ignored a delivery whose signature does not match this Zap's subscription: it did not come from the clinic",
        );
      }
    }
    const event = (raw?.content !== undefined ? JSON.parse(raw.content) : bundle.cleanedRequest) as Evento;
    // A "Send test event" ping, or a type this trigger did not subscribe to, starts nothing.
    if (!event || !spec.events.includes(event.tipo)) return [];
    return [event.datos];
  };

  return {
    key: spec.key,
    noun: spec.noun,
    display: { label: spec.label, description: spec.description },
    operation: {
      type: 'hook' as const,
      performSubscribe,
      performUnsubscribe,
      perform,
      performList: (z: ZObject) => recentRecords(z, spec.collection, spec.newest),
      sample: spec.sample,
      outputFields: spec.outputFields,
    },
  };
}

export const newAppointment = hookTrigger({
  key: 'new_appointment',
  noun: 'Appointment',
  label: 'New Appointment',
  description: 'Triggers when an appointment is booked.',
  events: ['cita.creada'],
  collection: 'citas',
  newest: 'created_at',
  outputFields: CITA_FIELDS,
  sample: CITA_SAMPLE,
});

export const appointmentChanged = hookTrigger({
  key: 'appointment_changed',
  noun: 'Appointment',
  label: 'Appointment Changed',
  description:
    'Triggers when an appointment changes: its status (confirmed, completed, cancelled, no-show), time, service, notes, ' +
    "or its client's name or phone.",
  events: ['cita.actualizada'],
  collection: 'citas',
  newest: 'updated_at',
  outputFields: CITA_FIELDS,
  sample: { ...CITA_SAMPLE, estado: 'cancelada', updated_at: '2026-11-21T09:12:05+01:00' },
});

export const newCall = hookTrigger({
  key: 'new_call',
  noun: 'Call',
  label: 'New Call',
  description: "Triggers when the clinic's voice assistant answers a call.",
  events: ['llamada.creada'],
  collection: 'llamadas',
  newest: 'created_at',
  outputFields: LLAMADA_FIELDS,
  sample: LLAMADA_SAMPLE,
});

export const newClient = hookTrigger({
  key: 'new_client',
  noun: 'Client',
  label: 'New Client',
  description: 'Triggers when a client is added.',
  events: ['clienta.creada'],
  collection: 'clientas',
  newest: 'created_at',
  outputFields: CLIENTA_FIELDS,
  sample: CLIENTA_SAMPLE,
});

export const clientChanged = hookTrigger({
  key: 'client_changed',
  noun: 'Client',
  label: 'Client Changed',
  description:
    "Triggers when a client's details change (name, phone, email, VIP, language). Her counters of visits and calls change without it.",
  events: ['clienta.actualizada'],
  collection: 'clientas',
  newest: 'updated_at',
  outputFields: CLIENTA_FIELDS,
  sample: { ...CLIENTA_SAMPLE, vip: true },
});
