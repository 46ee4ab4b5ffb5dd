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
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { COLLECTIONS, EVENT_TYPES } from '../collections/index.js';
import { limitParam, named, Nullable, Rango, ref, Timestamp, Uuid } from './schema-parts.js';
import { SCOPES, type Scope } from './scopes.js';

export { Phone, ref, Uuid } from './schema-parts.js';

const Text = (examples: string[], description?: string) => Type.String(description ? { description, examples } : { examples });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code', examples: ['EUR'] });

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

const RECORDS = Object.values(COLLECTIONS).map((c) => c.record);
/** The records' schema names in words: "A, B or C". */
const RECORD_NAMES = `${RECORDS.slice(0, -1)
  .map((r) => r.$id)
  .join(', ')} or ${RECORDS[RECORDS.length - 1]!.$id}`;

export const Evento = named('Evento', 'A change of one record', {
  id: Type.String({
    format: 'uuid',
    description: 'Unique; also the webhook-id of its webhook deliveries',
    examples: ['9b0c5c1e-6f7a-4f0e-9d2b-2f1c3a4b5c6d'],
  }),
  tipo: Type.Unsafe<string>({ type: 'string', enum: [...EVENT_TYPES], examples: ['cita.actualizada'] }),
  ocurrido_at: Timestamp,
  datos: Type.Unsafe<unknown>({
    anyOf: [...RECORDS.map((r) => Type.Ref(r.$id!)), Type.Ref('Eliminado')],
    description:
      `The record as the lists showed it at the event (its updated_at is the event's time): a ${RECORD_NAMES} by tipo; for ` +
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

// One record of a collection: GET /api/v1/{collection}/{id}.

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
  ...RECORDS,
  Rango,
  ...Object.values(COLLECTIONS).map((c) => c.list),
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

export type MeResponse = Static<typeof Me>;
export type EventosQuery = Static<typeof EventosQuery>;
export type RecordParams = Static<typeof RecordParams>;
export type WebhookEndpointJson = Static<typeof WebhookEndpoint>;
export type WebhookCreateBody = Static<typeof WebhookCreateBody>;
