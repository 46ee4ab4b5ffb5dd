// Table types for Kysely. Timestamps are epoch seconds (bigint), dates are 'YYYY-MM-DD' text,
// booleans are 0/1 integers: the same representation on SQLite and PostgreSQL, so every query
// and every comparison behaves identically on both. Longer than 300 lines: one interface per
// table, nothing else.
import type { ColumnType, Generated } from 'kysely';

export interface ClinicsTable {
  id: string;
  name: string;
  timezone: string;
  currency: string;
  plan: string;
  language: string;
  created_at: number;
  /** on a sandbox (test mode, migration 014): the live clinic it belongs to; null on a live clinic */
  sandbox_of: string | null;
}

/** Per clinic: versions of its data and the bounds of its event log (migrations 004, 005). No row: all 0. */
export interface ClinicDataVersionsTable {
  clinic_id: string;
  /** bumped by every write of the clinic's clientas (the kept search totals) */
  clientas: number;
  /** bumped by every write that changes any of the clinic's data (the lists' ETags) */
  data: number;
  /** the clinic's last event seq (0: none yet) */
  events_seq: number;
  /** the highest seq removed by the retention job (0: none) */
  events_expired: number;
}

export interface UsersTable {
  id: string;
  clinic_id: string | null;
  email: string;
  role: string;
  password_hash: string;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  clinic_id: string;
  name: string;
  key_hash: string;
  hint: string;
  created_by: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
  /** space-separated, domain/scopes.ts order (009-key-scopes) */
  scopes: string;
  /** canonical addresses and CIDR ranges, comma-separated; null: any address */
  allowed_ips: string | null;
  /** on a rolled key: the key that replaced it (keys roll) */
  replaced_by: string | null;
  /** 'live' or 'test' (migration 014, default 'live'): a test key reads its clinic's sandbox */
  mode: ColumnType<string, string | undefined, string>;
}

export interface ClientasTable {
  clinic_id: string;
  id: string;
  nombre: string;
  /** lower-case, accent-free name: the key for search and for ordering. */
  nombre_norm: string;
  telefono: string;
  telefono_digits: string;
  email: string | null;
  idioma: string | null;
  vip: number;
  cliente_desde: string;
  created_at: number;
  /** the time of the record's latest event (epoch seconds) */
  updated_at: number;
}

export interface CitasTable {
  clinic_id: string;
  id: string;
  clienta_id: string;
  fecha_hora: number;
  /** local calendar day of fecha_hora in the clinic's zone, for the per-day counts. */
  dia: string;
  servicio: string;
  duracion_min: number;
  precio_cents: number;
  estado: string;
  profesional_nombre: string;
  sede_nombre: string;
  notas: string | null;
  created_at: number;
  /** the time of the record's latest event (epoch seconds) */
  updated_at: number;
}

export interface LlamadasTable {
  clinic_id: string;
  id: string;
  clienta_id: string | null;
  fecha_hora: number;
  dia: string;
  cliente_nombre: string | null;
  telefono_caller: string;
  duracion_segundos: number;
  resultado: string;
  idioma: string;
  created_at: number;
  /** the time of the record's latest event (epoch seconds) */
  updated_at: number;
}

/** Per-day match counts, so `total` over a wide range sums a few rows instead of counting thousands. */
export interface CitasPorDiaTable {
  clinic_id: string;
  dia: string;
  estado: string;
  n: number;
}

export interface LlamadasPorDiaTable {
  clinic_id: string;
  dia: string;
  resultado: string;
  n: number;
}

export interface ClientasPorVipTable {
  clinic_id: string;
  vip: number;
  n: number;
}

/** SQLite only (003-search): the stable integer key of each clienta in the FTS5 trigram index. */
export interface ClientasSearchTable {
  rid: number;
  clinic_id: string;
  id: string;
}

/** Dashboard sign-in sessions (002-dashboard). id = SHA-256 of the cookie token. */
export interface DashboardSessionsTable {
  id: string;
  user_id: string;
  created_at: number;
  last_seen_at: number;
  /** absolute expiry (epoch seconds); idle expiry is last_seen_at + the idle timeout */
  expires_at: number;
  flash: string | null;
  /** the dashboard language the session was started in, or null (007-session-language) */
  lang: string | null;
}

/** API requests per key, clinic-local day, status class ('2xx'...) and error code ('' for none). */
export interface ApiKeyUsageTable {
  clinic_id: string;
  key_id: string;
  day: string;
  status_class: string;
  error_code: string;
  n: number;
}

/** The last time each key received each error code. */
export interface ApiKeyErrorsTable {
  clinic_id: string;
  key_id: string;
  error_code: string;
  status: number;
  last_at: number;
  n: number;
}

/** The event log (migration 005): one row per created, changed or deleted record. */
export interface EventsTable {
  clinic_id: string;
  /** per clinic, gap-free, in commit order */
  seq: number;
  /** UUID: the event's id in the feed and the webhook-id of its deliveries */
  id: string;
  /** e.g. cita.actualizada */
  tipo: string;
  record_id: string;
  /** epoch seconds */
  ocurrido_at: number;
  /** JSON text of the record in the API's shape at the event ({"id": ...} for *.eliminada) */
  datos: string;
  /** the clienta the record belongs to (hers, a cita's, a linked call's): whom the event discloses (migration 010) */
  clienta_id: string | null;
}

/** One API request made with a known key (migration 010). */
export interface RequestLogTable {
  /** allocated by the writer, increasing with the time its batch was written */
  id: Generated<number>;
  clinic_id: string;
  /** epoch milliseconds of the response */
  at_ms: number;
  request_id: string;
  key_id: string | null;
  /** the OAuth grant or app, once there are grants; null for API keys */
  grant_id: string | null;
  method: string;
  /** secrets masked (http/log.ts) */
  path: string;
  /** without the `?`, every value masked but the non-personal filters'; null: none */
  query: string | null;
  status: number;
  error_code: string | null;
  duration_ms: number;
  /** records returned; null: none (an error, a 304, /me) */
  records: number | null;
  client_ip: string | null;
  /** truncated, secrets masked */
  user_agent: string | null;
  /** the JSON body of an error response, secrets masked */
  error_body: string | null;
  /** the set of clientas the response disclosed (request_access_sets); null: nobody */
  access_set: Uint8Array | null;
}

/** The distinct sets of clientas responses disclosed (migration 012): her UUID as 16 bytes. */
export interface RequestAccessSetsTable {
  set_id: Uint8Array;
  clienta: Uint8Array;
}

export interface DB {
  clinics: ClinicsTable;
  clinic_data_versions: ClinicDataVersionsTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  clientas: ClientasTable;
  citas: CitasTable;
  llamadas: LlamadasTable;
  citas_por_dia: CitasPorDiaTable;
  llamadas_por_dia: LlamadasPorDiaTable;
  clientas_por_vip: ClientasPorVipTable;
  clientas_search: ClientasSearchTable;
  events: EventsTable;
  dashboard_sessions: DashboardSessionsTable;
  api_key_usage: ApiKeyUsageTable;
  api_key_errors: ApiKeyErrorsTable;
  request_log: RequestLogTable;
  request_access_sets: RequestAccessSetsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_idempotency: WebhookIdempotencyTable;
  webhook_replays: WebhookReplaysTable;
  webhook_alert_mails: WebhookAlertMailsTable;
  oauth_artifacts: OAuthArtifactsTable;
  oauth_grants: OAuthGrantsTable;
  clinic_exports: ClinicExportsTable;
  clinic_export_parts: ClinicExportPartsTable;
}

/** A clinic's export made in the background (migration 016). Times in ms. */
export interface ClinicExportsTable {
  id: string;
  clinic_id: string;
  /** the user who asked for it (null: removed since) */
  requested_by: string | null;
  /** queued | running | done | failed */
  state: string;
  /** records written so far, of `total` */
  done: number;
  total: number;
  /** the ZIP's size once done */
  bytes: number | null;
  /** parts of the ZIP written (clinic_export_parts) */
  parts: number;
  /** why it failed, for the owner (no internals) */
  error: string | null;
  requested_at: number;
  finished_at: number | null;
  expires_at: number | null;
  /** while running: the instance making it holds it until then */
  lease_until: number | null;
}

/** The ZIP of an export, in order (migration 016). */
export interface ClinicExportPartsTable {
  clinic_id: string;
  export_id: string;
  seq: number;
  data: Uint8Array;
}

/** What the OAuth authorization server stores (migration 011): ids only as keyed hashes. Epoch seconds. */
export interface OAuthArtifactsTable {
  model: string;
  id_hash: string;
  /** oidc-provider's payload as JSON, without the id */
  payload: string;
  grant_id: string | null;
  uid_hash: string | null;
  expires_at: number | null;
  consumed_at: number | null;
}

/** A clinic's consent to an app (migration 011). Epoch seconds. */
export interface OAuthGrantsTable {
  id: string;
  clinic_id: string;
  client_id: string;
  client_name: string;
  redirect_host: string;
  scopes: string;
  resource: string;
  granted_by: string | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  revoked_reason: string | null;
  /** 'live' or 'test' (migration 014, default 'live'): an app connected in test mode reads the clinic's sandbox */
  mode: ColumnType<string, string | undefined, string>;
}

/** A clinic's webhook endpoint and its delivery state (migration 006). *_ms: epoch milliseconds. */
export interface WebhookEndpointsTable {
  id: string;
  clinic_id: string;
  url: string;
  /** null: every type; else the list of types (migration 008: a JSON array; written as its JSON text) */
  event_types: ColumnType<string[] | null, string | null, string | null>;
  /** the signing secret, AES-256-GCM encrypted (services/webhooks/secret.ts) */
  secret_enc: string;
  enabled: number;
  disabled_reason: string | null;
  disabled_at: number | null;
  created_at: number;
  created_by: string | null;
  /** the last seq of the clinic's log delivered or skipped */
  cursor: number;
  /** failed attempts of the head event */
  attempts: number;
  next_attempt_ms: number;
  failing_since_ms: number | null;
  last_error: string | null;
  lease_owner: string | null;
  lease_until_ms: number;
  /** migration 015: what the subscriber said it is for */
  description: string | null;
  /** the API key (or OAuth grant) that subscribed it by API: its end disables the endpoint */
  created_by_key: string | null;
  created_by_grant: string | null;
  /** 0: deliveries without contact details (the subscribing credential could not read them) */
  contact: ColumnType<number, number | undefined, number>;
  /** the alerts' state: 0 none, 1 the "failing" e-mail queued, 2 the "disabled" one */
  alert_stage: ColumnType<number, number | undefined, number>;
  alert_since_ms: number | null;
}

export interface WebhookIdempotencyTable {
  clinic_id: string;
  /** the key's (or grant's) id: the same Idempotency-Key of two credentials is two requests */
  credential_id: string;
  key_hash: string;
  /** the body's hash: the same key with another body is refused */
  request_hash: string;
  endpoint_id: string;
  created_ms: number;
}

export interface WebhookReplaysTable {
  id: string;
  clinic_id: string;
  endpoint_id: string;
  seq: number;
  queued_ms: number;
  lease_owner: string | null;
  lease_until_ms: number;
}

export interface WebhookAlertMailsTable {
  id: string;
  clinic_id: string;
  endpoint_id: string;
  /** 'failing' | 'disabled' | 'recovered' */
  kind: string;
  created_ms: number;
  attempts: number;
  next_ms: number;
  sent_ms: number | null;
  last_error: string | null;
}

export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  clinic_id: string;
  event_id: string;
  tipo: string;
  seq: number | null;
  kind: string;
  attempt: number;
  at_ms: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** migration 015: the answer's first 1 KB, secrets masked */
  response_excerpt: ColumnType<string | null, string | null | undefined, string | null>;
  /** when the next attempt of this event is due (a failed automatic attempt) */
  next_retry_ms: ColumnType<number | null, number | null | undefined, number | null>;
}
