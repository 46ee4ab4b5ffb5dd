// The client: new ClinicApi({ baseUrl, apiKey }) (or an OAuth accessToken), a method per endpoint
// of the API, auto-paging over the three lists and the change feed's follower.
import { follow, type FeedBatch, type FollowOptions } from './feed.js';
import { pagesOf, recordsOf, type ListPage } from './paging.js';
import { ClinicApiError } from './errors.js';
import { Transport, type TransportOptions } from './transport.js';
import type {
  CallOptions,
  Cita,
  CitasList,
  CitasQuery,
  Clienta,
  ClientasList,
  ClientasQuery,
  EventosList,
  EventosQuery,
  Llamada,
  LlamadasList,
  LlamadasQuery,
  Me,
  NewWebhook,
  WebhookEndpoint,
  WebhookEndpointCreated,
} from './types.js';
import { onTheWire } from './types.js';

export type ClinicApiOptions = TransportOptions;

type AnyQuery = { limit?: number | undefined; offset?: number | undefined } & object;

/** How a collection reads: a page for a query, a record by its id (each a typed GET of its path). */
interface CollectionReads<Q, P, R> {
  list: (query: Q, opts: CallOptions) => Promise<P>;
  get: (id: string, opts: CallOptions) => Promise<R>;
}

/** One of the three collections: a page, one record, every page, every record. */
export class Collection<Q extends AnyQuery, P extends ListPage, R> {
  /** @internal */
  constructor(
    private readonly name: string,
    private readonly reads: CollectionReads<Q, P, R>,
    private readonly records: (page: P) => R[],
    private readonly pin: (first: P, query: Q) => Q,
  ) {}

  /** One page, as the API answers it (its `limit` and defaults apply). */
  async list(query: Q = {} as Q, opts: CallOptions = {}): Promise<P> {
    return this.reads.list(query, opts);
  }

  /** One record by its id; a ClinicApiError `not_found` (404) when the key's clinic has none. */
  async get(id: string, opts: CallOptions = {}): Promise<R> {
    if (typeof id !== 'string' || id === '') throw new TypeError(`ClinicApi: ${this.name}: get() needs the record's id`);
    return this.reads.get(id, opts);
  }

  /** Every page matching `query`, 500 records each unless `query.limit` says otherwise. */
  pages(query: Q = {} as Q, opts: CallOptions = {}): AsyncGenerator<P, void, undefined> {
    return pagesOf(
      query,
      (q) => this.list(q, opts),
      (p) => this.records(p).length,
      this.pin,
    );
  }

  /** Every record matching `query`, in the list's order: `for await (const r of api.citas.all({ ... }))`. */
  all(query: Q = {} as Q, opts: CallOptions = {}): AsyncGenerator<R, void, undefined> {
    return recordsOf(this.pages(query, opts), this.records);
  }
}

/** The change feed. */
export class Eventos {
  /** @internal */
  constructor(private readonly transport: Transport) {}

  /** One page of events after `cursor` (the API's docs/api.md, "Keep a mirror in sync"). */
  async list(query: EventosQuery = {}, opts: CallOptions = {}): Promise<EventosList> {
    return (await this.transport.get('/api/v1/eventos', { query: onTheWire(query) }, opts)).body!;
  }

  /** The present's cursor: the feed after it holds every change from now on. */
  async now(opts: CallOptions = {}): Promise<string> {
    return (await this.list({ cursor: 'now' }, opts)).next_cursor;
  }

  /**
   * Follows the feed: `for await (const batch of api.eventos.follow({ cursor: 'now' }))`, each
   * batch's events oldest first and the cursor to save with them. Runs until `signal` aborts
   * (or the loop breaks); see FollowOptions for 410 cursor_expired.
   */
  follow(opts: FollowOptions): AsyncGenerator<FeedBatch, void, undefined> {
    return follow(this.transport, opts);
  }
}

/** Options of a subscription: the Idempotency-Key (default: a new random one, so retries are safe). */
export interface CreateWebhookOptions extends CallOptions {
  idempotencyKey?: string;
}

/**
 * Subscriptions (scope webhooks:write): URLs that receive the clinic's events as they happen.
 * Verify each delivery with `@clinic-api/sdk/webhooks`.
 */
export class Webhooks {
  /** @internal */
  constructor(private readonly transport: Transport) {}

  /**
   * Subscribes `url` to events; the answer holds the signing secret, shown this once. Sent with
   * an Idempotency-Key (a random one unless given), so a retry after a lost answer gets the same
   * endpoint and secret instead of a second endpoint.
   */
  async create(body: NewWebhook, opts: CreateWebhookOptions = {}): Promise<WebhookEndpointCreated> {
    const { idempotencyKey = globalThis.crypto.randomUUID(), ...call } = opts;
    return (await this.transport.post('/api/v1/webhooks', body, { 'idempotency-key': idempotencyKey }, call)).body!;
  }

  /** The clinic's endpoints (never a secret). */
  async list(opts: CallOptions = {}): Promise<WebhookEndpoint[]> {
    return (await this.transport.get('/api/v1/webhooks', {}, opts)).body!.webhooks;
  }

  async get(id: string, opts: CallOptions = {}): Promise<WebhookEndpoint> {
    return (await this.transport.get('/api/v1/webhooks/{id}', { path: { id } }, opts)).body!;
  }

  /**
   * Unsubscribes: true when this call deleted the endpoint, false when there was none with this
   * id (deleted already, or by a retry of this same call). Retried like a read.
   */
  async delete(id: string, opts: CallOptions = {}): Promise<boolean> {
    try {
      await this.transport.delete('/api/v1/webhooks/{id}', { path: { id } }, true, opts);
      return true;
    } catch (err) {
      if (err instanceof ClinicApiError && err.status === 404 && err.code === 'not_found') return false;
      throw err;
    }
  }
}

export class ClinicApi {
  readonly citas: Collection<CitasQuery, CitasList, Cita>;
  readonly clientas: Collection<ClientasQuery, ClientasList, Clienta>;
  readonly llamadas: Collection<LlamadasQuery, LlamadasList, Llamada>;
  readonly eventos: Eventos;
  readonly webhooks: Webhooks;
  private readonly transport: Transport;

  constructor(options: ClinicApiOptions) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError("ClinicApi: pass the options, e.g. new ClinicApi({ baseUrl: 'https://clinic.example.com', apiKey })");
    }
    this.transport = new Transport(options);
    const t = this.transport;
    // Each path, its parameters and its answer are checked against the OpenAPI document's types.
    // A walk over a default window keeps the first page's window (it moves at the clinic's midnight).
    this.citas = new Collection<CitasQuery, CitasList, Cita>(
      '/api/v1/citas',
      {
        list: async (q, opts) => (await t.get('/api/v1/citas', { query: onTheWire(q) }, opts)).body!,
        get: async (id, opts) => (await t.get('/api/v1/citas/{id}', { path: { id } }, opts)).body!,
      },
      (p) => p.citas,
      (first, q) => ({
        ...q,
        desde: q.desde ?? first.rango.desde ?? undefined,
        hasta: q.hasta ?? first.rango.hasta ?? undefined,
      }),
    );
    this.clientas = new Collection<ClientasQuery, ClientasList, Clienta>(
      '/api/v1/clientas',
      {
        list: async (q, opts) => (await t.get('/api/v1/clientas', { query: onTheWire(q) }, opts)).body!,
        get: async (id, opts) => (await t.get('/api/v1/clientas/{id}', { path: { id } }, opts)).body!,
      },
      (p) => p.clientas,
      (_first, q) => q,
    );
    this.llamadas = new Collection<LlamadasQuery, LlamadasList, Llamada>(
      '/api/v1/llamadas',
      {
        list: async (q, opts) => (await t.get('/api/v1/llamadas', { query: onTheWire(q) }, opts)).body!,
        get: async (id, opts) => (await t.get('/api/v1/llamadas/{id}', { path: { id } }, opts)).body!,
      },
      (p) => p.llamadas,
      (first, q) => ({
        ...q,
        desde: q.desde ?? first.desde ?? undefined,
      }),
    );
    this.eventos = new Eventos(t);
    this.webhooks = new Webhooks(t);
  }

  /** Who the credential is: its clinic, the key, its rate limit (the "test connection" call). */
  async me(opts: CallOptions = {}): Promise<Me> {
    return (await this.transport.get('/api/v1/me', {}, opts)).body!;
  }

  /** The service's address, as the requests use it (no trailing slash). */
  get baseUrl(): string {
    return this.transport.baseUrl;
  }
}
