// The API's queries and responses as TypeBox schemas (plain JSON Schema, no HTTP): the single
// source of truth for the listing use-cases' input and output types (services/listings.ts, via
// Static<>), query validation (http/query-validator.ts), response serialization
// (fast-json-stringify) and the OpenAPI document (@fastify/swagger). Longer than 300 lines on
// purpose: one schema per shape of the API, in one file, so the contract reads as one document.
//
// Every object a client receives is a named schema (named(): its `$id` is its name under the
// OpenAPI document's components.schemas), and other schemas and routes point at it with ref(),
// so code generators produce named types (`Cita`, `CitasList`, ...) instead of anonymous ones.
// Names: a record in the singular (`Cita`), a list response `<Plural>List`, any other object by
// what it is (`Me`, `Clinica`). A new named schema goes into API_COMPONENTS.
import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import { ESTADOS, EVENT_TYPES, RESULTADOS } from './records.js';
import { SCOPES, type Scope } from './scopes.js';

/** An object schema with a name: `$id` (its key in components.schemas) and a description. */
function named<T extends TProperties>(name: string, description: string, properties: T): TObject<T> {
  return Type.Object(properties, { $id: name, description });
}

/** A reference to a named schema, typed as that schema. */
export function ref<T extends TSchema>(schema: T) {
  if (!schema.$id) throw new Error('ref() needs a named schema');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
}

/** `type: [T, "null"]`: OpenAPI 3.1 / JSON Schema nullability that fast-json-stringify serializes fast. */
function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<T['static'] | null>({ ...schema, type: [schema.type, 'null'] });
}

/** A record id (the import's lines' ids too: domain/import-schemas.ts). */
export const Uuid = Type.String({ format: 'uuid', examples: ['24858e88-d2f1-40a6-9fc9-91500bc9b3cd'] });
const Timestamp = Type.String({
  format: 'date-time',
  description: "RFC 3339 with the clinic's UTC offset, whole seconds",
  examples: ['2026-11-21T10:30:00+01:00'],
});
const UpdatedAt = Type.String({
  format: 'date-time',
  description: "When the record last changed as the API shows it (the time of its latest event), RFC 3339 with the clinic's offset",
  examples: ['2026-11-21T10:30:00+01:00'],
});
const DateOnly = Type.String({ format: 'date', examples: ['2026-11-21'] });
/** A phone number, E.164: the import's numbers too (domain/import-schemas.ts). */
export const Phone = Type.String({ pattern: '^\\+[0-9]{8,15}$', description: 'E.164', examples: ['+34600123456'] });
/** Said of each contact field (domain/scopes.ts, CONTACT_FIELDS): what a key without contacto:read gets. */
const WITHOUT_CONTACT = 'null when the API key lacks the contacto:read scope';
/** A contact field: nullable, saying when it is null. */
function Contact<T extends TSchema>(schema: T, description: string) {
  return Nullable({ ...schema, description: `${description}; ${WITHOUT_CONTACT}` } as T);
}
const Text = (examples: string[], description?: string) => Type.String(description ? { description, examples } : { examples });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code', examples: ['EUR'] });

/** Page sizes when `limit` is left out. */
export const DEFAULT_LIMITS = { citas: 100, clientas: 200, llamadas: 100 } as const;
/** citas: `hasta` defaults to today + this many days. */
export const CITAS_DEFAULT_DAYS = 30;
/** llamadas: `desde` defaults to today - this many days. */
export const LLAMADAS_DEFAULT_DAYS_BACK = 7;

const MAX_OFFSET = 2_147_483_647;
const limitParam = (def: number) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: def, description: `Page size, 1 to 500 (default ${def})` }));
const offsetParam = Type.Optional(
  Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: 'Records to skip, for paging' }),
);
const dateParam = (description: string) => Type.Optional(Type.String({ format: 'date', description }));
// No `examples` on a query parameter: the document carries it as the parameter's `example`, and
// Swagger UI's "Try it out" fills the box with it, so the request /docs sends would use it
// (updated_since turns a list into another mode). An example goes in the description instead.
const updatedSinceParam = Type.Optional(
  Type.String({
    format: 'date-time',
    description:
      'Only records changed at or after this RFC 3339 timestamp (with an offset or Z, e.g. 2026-03-28T09:00:00Z or ' +
      '2026-03-28T10:00:00+01:00; in a URL, send + as %2B), ordered by updated_at then id; ' +
      'the default date window does not apply (an explicit desde/hasta does). For tools that cannot keep a cursor; GET /api/v1/eventos ' +
      'is the complete change feed',
  }),
);
const enumParam = <T extends string>(values: readonly T[], description: string) =>
  Type.Optional(Type.Unsafe<T>({ type: 'string', enum: [...values], description }));

export const CitasQuery = Type.Object(
  {
    desde: dateParam("First day (clinic's local date), inclusive. Default: today (none with updated_since)"),
    hasta: dateParam(`Last day, inclusive. Default: today + ${CITAS_DEFAULT_DAYS} days (none with updated_since)`),
    estado: enumParam(ESTADOS, 'Only appointments in this status'),
    updated_since: updatedSinceParam,
    limit: limitParam(DEFAULT_LIMITS.citas),
    offset: offsetParam,
  },
  { additionalProperties: false },
);

export const ClientasQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: "Case- and accent-insensitive substring of the name, or digits of the phone ('600 12')",
      }),
    ),
    vip: enumParam(['true', 'false'], 'true: VIP clients only; false: non-VIP only'),
    updated_since: updatedSinceParam,
    limit: limitParam(DEFAULT_LIMITS.clientas),
    offset: offsetParam,
  },
  { additionalProperties: false },
);

export const LlamadasQuery = Type.Object(
  {
    desde: dateParam(`First day, inclusive. Default: today - ${LLAMADAS_DEFAULT_DAYS_BACK} days (none with updated_since)`),
    hasta: dateParam('Last day, inclusive. Default: no upper bound'),
    resultado: enumParam(RESULTADOS, 'Only calls with this outcome'),
    updated_since: updatedSinceParam,
    limit: limitParam(DEFAULT_LIMITS.llamadas),
    offset: offsetParam,
  },
  { additionalProperties: false },
);

export const Cita = named('Cita', 'An appointment', {
  id: Uuid,
  fecha_hora: Timestamp,
  cliente_nombre: Text(['Chloé Jiménez Sáez'], "The client's current name"),
  telefono: Contact(Phone, "The client's current phone, E.164"),
  servicio: Text(['Presoterapia']),
  duracion_min: Type.Integer({ minimum: 1, examples: [30] }),
  precio: Type.Number({ minimum: 0, description: 'In the currency named by moneda, at most 2 decimals', examples: [35] }),
  moneda: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency of precio', examples: ['EUR'] }),
  estado: Type.Unsafe<string>({ type: 'string', enum: [...ESTADOS], examples: ['confirmada'] }),
  profesional_nombre: Text(['Laura Martín Ruiz']),
  sede_nombre: Text(['Sede Nervión']),
  notas: Contact(Text(['No usar acetona']), 'Notes on the appointment; null when there are none'),
  created_at: Timestamp,
  updated_at: UpdatedAt,
});

export const Clienta = named('Clienta', 'A client of the clinic', {
  id: Uuid,
  nombre: Text(['María López García']),
  telefono: Contact(Phone, 'E.164'),
  email: Contact(Text(['maria.lopez@example.com']), 'null when unknown'),
  idioma: Nullable(Text(['es'], 'Preferred language')),
  vip: Type.Boolean(),
  total_citas: Type.Integer({ minimum: 0, description: "All of the client's appointments, every status", examples: [12] }),
  total_llamadas: Type.Integer({ minimum: 0, description: 'All calls linked to the client', examples: [3] }),
  ultima_cita: Nullable(
    Type.String({
      format: 'date',
      description: 'Local date of the latest appointment that starts at or before now',
      examples: ['2026-11-14'],
    }),
  ),
  ultima_llamada: Nullable(
    Type.String({ format: 'date-time', description: 'Timestamp of the latest linked call', examples: ['2026-11-20T18:02:11+01:00'] }),
  ),
  cliente_desde: DateOnly,
  created_at: Timestamp,
  updated_at: UpdatedAt,
});

export const Llamada = named('Llamada', "A call answered by the clinic's voice assistant", {
  id: Uuid,
  fecha_hora: Timestamp,
  cliente_nombre: Nullable(Text(['María López García'], 'null for an unknown caller')),
  telefono_caller: Contact(Phone, "The caller's phone, E.164"),
  duracion_segundos: Type.Integer({ minimum: 0, examples: [95] }),
  resultado: Type.Unsafe<string>({ type: 'string', enum: [...RESULTADOS], examples: ['agendada'] }),
  idioma: Text(['es']),
  created_at: Timestamp,
  updated_at: UpdatedAt,
});

const paging = {
  total: Type.Integer({ minimum: 0, description: 'All records matching the filters, ignoring limit and offset', examples: [78] }),
  limit: Type.Integer({ description: 'The page size applied', examples: [100] }),
  offset: Type.Integer({ description: 'The offset applied', examples: [0] }),
};

export const Rango = named(
  'Rango',
  'The date range applied (local dates, both inclusive); with updated_since an end not given is null (no default window)',
  {
    desde: Nullable(DateOnly),
    hasta: Nullable(DateOnly),
  },
);

export const CitasList = named('CitasList', 'A page of appointments', {
  citas: Type.Array(ref(Cita)),
  total: paging.total,
  rango: ref(Rango),
  limit: paging.limit,
  offset: paging.offset,
});

export const ClientasList = named('ClientasList', 'A page of clients', { clientas: Type.Array(ref(Clienta)), ...paging });

export const LlamadasList = named('LlamadasList', 'A page of calls', {
  llamadas: Type.Array(ref(Llamada)),
  total: paging.total,
  desde: Nullable(
    Type.String({
      format: 'date',
      description: 'The first day applied; null only with updated_since and no desde',
      examples: ['2026-11-14'],
    }),
  ),
  hasta: Nullable(Type.String({ format: 'date', description: 'The last day applied; null: no upper bound' })),
  limit: paging.limit,
  offset: paging.offset,
});

// The change feed: GET /api/v1/eventos.

/** Events per page when `limit` is left out. */
export const FEED_DEFAULT_LIMIT = 100;

export const EventosQuery = Type.Object(
  {
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'Where to continue: the next_cursor of an earlier answer, or "now" for the present (no events; its next_cursor follows from ' +
          'now on). ' +
          'Leave it out to start at the oldest event kept',
      }),
    ),
    limit: limitParam(FEED_DEFAULT_LIMIT),
    tipo: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 400,
        description: `Only these event types, comma-separated: ${EVENT_TYPES.join(', ')}`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const Eliminado = named('Eliminado', 'A deleted record (the datos of *.eliminada): its id only', { id: Uuid });

export const Evento = named('Evento', 'A change of one record', {
  id: Type.String({
    format: 'uuid',
    description: 'Unique; also the webhook-id of its webhook deliveries',
    examples: ['9b0c5c1e-6f7a-4f0e-9d2b-2f1c3a4b5c6d'],
  }),
  tipo: Type.Unsafe<string>({ type: 'string', enum: [...EVENT_TYPES], examples: ['cita.actualizada'] }),
  ocurrido_at: Timestamp,
  datos: Type.Unsafe<unknown>({
    anyOf: [Type.Ref('Cita'), Type.Ref('Clienta'), Type.Ref('Llamada'), Type.Ref('Eliminado')],
    description:
      "The record as the lists showed it at the event (its updated_at is the event's time): a Cita, Clienta or Llamada by tipo; for " +
      '*.eliminada, {"id": ...}. ' +
      "A clienta's derived counters (total_citas, ultima_cita ...) are as of the event: they change without events",
  }),
});

export const EventosList = named('EventosList', 'A page of the change feed', {
  eventos: Type.Array(ref(Evento), { description: 'Oldest first' }),
  next_cursor: Type.String({
    description: 'Always present: send it as cursor to get what happened after this page',
    examples: ['djEuMTIzNC5uMFcyeUNBUA'],
  }),
  has_more: Type.Boolean({ description: 'true: more events are already waiting; ask again at once' }),
});

/** GET /me takes no parameters: any is an unknown_parameter. */
export const MeQuery = Type.Object({}, { additionalProperties: false });

// One record: GET /api/v1/citas/{id}, /clientas/{id}, /llamadas/{id}.

/** The path's id: a UUID (domain/records.ts, UUID_RE, as the import checks it); no example, which /docs would pre-fill. */
export const RecordParams = Type.Object(
  {
    id: Type.String({
      format: 'uuid',
      description: "The record's id (a UUID, as in the id field of the lists and the change feed)",
    }),
  },
  { additionalProperties: false },
);

/** A single record takes no query parameters: any is an unknown_parameter. */
export const RecordQuery = Type.Object({}, { additionalProperties: false });

export const Clinica = named('Clinica', "The API key's clinic", {
  id: Uuid,
  nombre: Text(['Clínica Sol']),
  zona_horaria: Text(['Europe/Madrid'], 'IANA time zone: dates and timestamps of the API are in it'),
  moneda: Currency,
});

export const ApiKey = named('ApiKey', 'The API key of the request (never the key itself), or the app connected by OAuth', {
  // Not format uuid: an OAuth connection's id is its grant's, which the authorization server
  // makes (not a UUID) and which the dashboard, the CLI and the request log already name it by;
  // a second, made-up UUID for it would match nothing a client or an owner can look up.
  id: Type.String({
    minLength: 1,
    description:
      "The key's id, a UUID. With an OAuth access token: the id of the app's connection (Connected apps, " +
      '`clinic-api apps list`), which is not a UUID. An opaque string either way: store it as text.',
    examples: ['24858e88-d2f1-40a6-9fc9-91500bc9b3cd'],
  }),
  nombre: Text(['Zapier'], "The name given at creation; with an OAuth access token, the app's name"),
  created_at: Timestamp,
  expires_at: Nullable(
    Type.String({
      format: 'date-time',
      description:
        "When the key stops working (RFC 3339 with the clinic's offset); null: never. With an OAuth access token: when that token expires",
      examples: ['2027-11-21T10:30:00+01:00'],
    }),
  ),
  scopes: Type.Array(Type.Unsafe<Scope>({ type: 'string', enum: [...SCOPES] }), {
    description: 'What the key may read, in a fixed order (each is described under the security scheme); GET /api/v1/me needs none',
    examples: [['citas:read', 'clientas:read']],
  }),
});

export const RateLimitPolicy = named('RateLimitPolicy', "The key's rate limit: a token bucket", {
  rps: Type.Integer({ minimum: 1, description: 'Requests per second, sustained', examples: [60] }),
  burst: Type.Integer({ minimum: 1, description: 'Requests allowed at once, in a burst', examples: [120] }),
});

export const Me = named('Me', 'Who the API key is: its clinic, the key, its rate limit, live or test mode', {
  clinica: ref(Clinica),
  api_key: ref(ApiKey),
  rate_limit: ref(RateLimitPolicy),
  modo: Type.Unsafe<'live' | 'test'>({
    type: 'string',
    enum: ['live', 'test'],
    description:
      "live: the clinic's real data. test: a test key (`<prefix>_test_...`) or an app connected in test mode, which reads " +
      "the clinic's sandbox only: synthetic data that moves by itself, with its own change feed and webhooks",
    examples: ['live'],
  }),
});

// Webhook subscriptions: POST, GET and DELETE /api/v1/webhooks (docs/webhooks.md).

/** `*`: every event type the key may read; else some of them. */
const WebhookEventos = Type.Array(Type.Unsafe<string>({ type: 'string', enum: ['*', ...EVENT_TYPES] }), {
  minItems: 1,
  description: 'The event types sent to the endpoint: ["*"] for every type the key may read, or a list of them',
  examples: [['cita.creada', 'cita.actualizada']],
});

const webhookEndpointProperties = {
  id: Uuid,
  url: Text(['https://hooks.example.com/clinic'], 'Where the events are POSTed (Standard Webhooks 1.0, signed with the secret)'),
  eventos: WebhookEventos,
  modo: Type.Unsafe<'live' | 'test'>({
    type: 'string',
    enum: ['live', 'test'],
    description: "live: the clinic's data; test: its sandbox (the endpoint receives the events of the key's mode only)",
    examples: ['live'],
  }),
  descripcion: Nullable(Type.String({ description: 'What the endpoint is for, as given', examples: ['Zapier: new appointments'] })),
  estado: Type.Unsafe<'active' | 'failing' | 'disabled'>({
    type: 'string',
    enum: ['active', 'failing', 'disabled'],
    description: 'active; failing (deliveries are being retried); disabled (nothing is sent; motivo says why)',
    examples: ['active'],
  }),
  motivo: Nullable(
    Type.Unsafe<string>({
      type: 'string',
      enum: ['manual', 'failing', 'key_revoked', 'key_expired', 'grant_revoked'],
      description:
        'Why a disabled endpoint is: manual (the clinic disabled it), failing (3 days of failed deliveries), key_revoked, ' +
        'key_expired or grant_revoked (the credential that subscribed it ended); null while not disabled',
    }),
  ),
  created_at: Timestamp,
};

export const WebhookEndpoint = named('WebhookEndpoint', 'A webhook endpoint of the clinic (never its secret)', webhookEndpointProperties);

export const WebhookEndpointCreated = named(
  'WebhookEndpointCreated',
  'The endpoint just subscribed, with its signing secret: shown in this answer only (and in a repeat of it with the same Idempotency-Key)',
  {
    ...webhookEndpointProperties,
    secret: Type.String({
      pattern: '^whsec_',
      description: "The signing secret (whsec_ and base64): check each delivery's webhook-signature with it. Store it now",
      examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    }),
  },
);

export const WebhookEndpointsList = named('WebhookEndpointsList', "The clinic's webhook endpoints of the key's mode, oldest first", {
  webhooks: Type.Array(ref(WebhookEndpoint)),
});

/** The body of POST /api/v1/webhooks (JSON, at most 16 KB). */
export const WebhookCreateBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'An https:// URL whose host resolves to public addresses only; no user name or password in it',
      examples: ['https://hooks.example.com/clinic'],
    }),
    eventos: WebhookEventos,
    descripcion: Type.Optional(
      Nullable(Type.String({ maxLength: 500, description: 'What the endpoint is for (at most 500 characters)', examples: ['Zapier'] })),
    ),
  },
  { additionalProperties: false },
);

/** An endpoint's id in the path. */
export const WebhookParams = Type.Object(
  { id: Type.String({ format: 'uuid', description: "The endpoint's id (a UUID, as POST answered it)" }) },
  { additionalProperties: false },
);

/** The named schemas, in document order: each is a components.schemas entry. */
export const API_COMPONENTS: readonly TSchema[] = [
  Cita,
  Clienta,
  Llamada,
  Rango,
  CitasList,
  ClientasList,
  LlamadasList,
  Eliminado,
  Evento,
  EventosList,
  Clinica,
  ApiKey,
  RateLimitPolicy,
  Me,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookEndpointsList,
];

export type CitasQuery = Static<typeof CitasQuery>;
export type ClientasQuery = Static<typeof ClientasQuery>;
export type LlamadasQuery = Static<typeof LlamadasQuery>;
export type CitasResponse = Static<typeof CitasList>;
export type ClientasResponse = Static<typeof ClientasList>;
export type LlamadasResponse = Static<typeof LlamadasList>;
export type MeResponse = Static<typeof Me>;
export type EventosQuery = Static<typeof EventosQuery>;
export type RecordParams = Static<typeof RecordParams>;
export type Cita = Static<typeof Cita>;
export type Clienta = Static<typeof Clienta>;
export type Llamada = Static<typeof Llamada>;
export type WebhookEndpointJson = Static<typeof WebhookEndpoint>;
export type WebhookCreateBody = Static<typeof WebhookCreateBody>;
