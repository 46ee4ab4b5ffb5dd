// The API's records, pages and queries under their own names, from the types openapi-typescript
// generated out of the service's OpenAPI document (generated/openapi.ts: never edited by hand).
import type { components, operations } from './generated/openapi.js';

type Schemas = components['schemas'];

export type Cita = Schemas['Cita'];
export type Clienta = Schemas['Clienta'];
export type Llamada = Schemas['Llamada'];
export type CitasList = Schemas['CitasList'];
export type ClientasList = Schemas['ClientasList'];
export type LlamadasList = Schemas['LlamadasList'];
export type Evento = Schemas['Evento'];
export type EventosList = Schemas['EventosList'];
export type Me = Schemas['Me'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointCreated = Schemas['WebhookEndpointCreated'];
export type WebhookEndpointsList = Schemas['WebhookEndpointsList'];
/** What POST /api/v1/webhooks takes: url, eventos (["*"] or event types), descripcion. */
export type NewWebhook = NonNullable<operations['createWebhook']['requestBody']>['content']['application/json'];
export type ErrorDetail = Schemas['ErrorDetail'];
export type ErrorResponse = Schemas['ErrorResponse'];
/** One of the nine event types, `cita.creada` ... `llamada.eliminada`. */
export type EventType = Evento['tipo'];

type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;

/**
 * A list's query as the document types it, with two conveniences: `updated_since` may be a Date
 * (sent as RFC 3339 in UTC), and a "true"/"false" parameter (clientas' `vip`) may be a boolean.
 */
type Loosen<Q> = {
  [K in keyof Q]: K extends 'updated_since' ? Q[K] | Date : Exclude<Q[K], undefined> extends 'true' | 'false' ? Q[K] | boolean : Q[K];
};

export type CitasQuery = Loosen<Query<'listCitas'>>;
export type ClientasQuery = Loosen<Query<'listClientas'>>;
export type LlamadasQuery = Loosen<Query<'listLlamadas'>>;
/** The feed's query; `tipo` may also be a list of event types. */
export type EventosQuery = Omit<Query<'listEventos'>, 'tipo'> & { tipo?: string | readonly EventType[] };

/** A query as the document types it: each Date, boolean and list of a loosened query as its text. */
export type Wire<Q> = {
  [K in keyof Q]: Q[K] extends infer V
    ? V extends Date
      ? string
      : V extends boolean
        ? `${V}`
        : V extends readonly unknown[]
          ? string
          : V
    : never;
};

/**
 * The loosened query (a Date, a boolean, a list of event types) written as the API reads it: a
 * Date in RFC 3339 UTC, a boolean as "true"/"false", a list comma-separated.
 */
export function onTheWire<Q extends object>(query: Q): Wire<Q> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query) as [string, unknown][]) {
    out[name] =
      value instanceof Date
        ? value.toISOString()
        : typeof value === 'boolean'
          ? String(value)
          : Array.isArray(value)
            ? value.join(',')
            : value;
  }
  return out as Wire<Q>;
}

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the call, its retries and their waits (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
}
