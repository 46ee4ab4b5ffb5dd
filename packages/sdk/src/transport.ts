// One GET to the API: a path of the generated `paths` (generated/openapi.ts) with its parameters,
// sent by openapi-fetch, so that the compiler checks every path, parameter and answer against the
// OpenAPI document (a renamed route does not compile: test/typed-paths.test.ts). Around it: the
// bearer credential, a time limit per attempt, the retries (retry.ts decides), the optional
// If-None-Match cache (etag-cache.ts), and the API's error body turned into a ClinicApiError.
// fetch and the web platform only (no Node-only API): the same code runs on Node 22/24, in
// browsers and in edge runtimes.
import createClient, {
  createFinalURL,
  defaultPathSerializer,
  type Client,
  type ClientPathsWithMethod,
  type MethodResponse,
} from 'openapi-fetch';
import { ClinicApiConnectionError, ClinicApiError, errorFromResponse } from './errors.js';
import { EtagCache } from './etag-cache.js';
import type { paths } from './generated/openapi.js';
import { DEFAULT_RETRY, parseRetryAfter, retryDelay, type RetryOptions } from './retry.js';

/** The API as openapi-fetch types it: its JSON answers. */
type Api = Client<paths, 'application/json'>;
/** A path of the API that answers GET, as the OpenAPI document names it (`/api/v1/citas/{id}`). */
export type GetPath = ClientPathsWithMethod<Api, 'get'>;
/** The JSON body of a 200 to GET `P`, as the document types it. */
export type Answer<P extends GetPath> = MethodResponse<Api, 'get', P>;
/** What GET `P` takes: its path parameters and its query, as the document types them. */
export type Params<P extends GetPath> = Pick<paths[P]['get']['parameters'], 'path' | 'query'>;
/** A path that answers POST, its JSON body and its answer (201 or 200), as the document types them. */
export type PostPath = ClientPathsWithMethod<Api, 'post'>;
export type PostBody<P extends PostPath> = NonNullable<paths[P]['post']['requestBody']>['content']['application/json'];
export type PostAnswer<P extends PostPath> = MethodResponse<Api, 'post', P>;
/** A path that answers DELETE, and its path parameters. */
export type DeletePath = ClientPathsWithMethod<Api, 'delete'>;
export type DeleteParams<P extends DeletePath> = Pick<paths[P]['delete']['parameters'], 'path'>;

/** A query string's values; undefined leaves the parameter out. */
export type QueryValue = string | number | boolean | Date | readonly string[] | undefined;

/**
 * The query string: each value as text (a Date in RFC 3339 UTC, a list comma-separated, as the
 * API's `tipo` takes it), undefined left out.
 */
function serializeQuery(query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query as Record<string, QueryValue>)) {
    if (value === undefined) continue;
    params.set(name, value instanceof Date ? value.toISOString() : Array.isArray(value) ? value.join(',') : String(value));
  }
  return params.toString();
}

/**
 * The one place the generic path meets openapi-fetch's conditional types: the callers of
 * Transport.get() are checked against `paths` (path, parameters, answer); inside, the call is
 * made through this plain signature.
 */
type PlainCall = (
  path: string,
  init: { params: object; body?: unknown; parseAs: 'text'; fetch: (request: Request) => Promise<Response> },
) => Promise<{ data?: string; error?: unknown; response: Response }>;
type Method = 'GET' | 'POST' | 'DELETE';

export interface RetryInfo {
  method: string;
  url: string;
  /** The attempt that failed (1: the first). */
  attempt: number;
  /** How long the SDK waits before the next attempt (ms). */
  delayMs: number;
  /** Why: the API's answer (its `code`, `status` and `retryAfter`) or the connection error. */
  error: ClinicApiError;
}

export interface ResponseInfo {
  method: string;
  url: string;
  status: number;
  attempt: number;
  /** A 304 answered from the SDK's If-None-Match cache (option `cache`). */
  fromCache: boolean;
}

export interface TransportOptions {
  /** The service's address, e.g. `https://clinic.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** An API key (`svc_...`), sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** An OAuth access token, or a function giving the current one (called before every attempt, so it may refresh). */
  accessToken?: string | (() => string | Promise<string>);
  /** Retries (see RetryOptions), or false for none. */
  retry?: Partial<RetryOptions> | false;
  /** Time limit of each attempt, until the whole body has arrived (ms). Default 30000. */
  timeoutMs?: number;
  /**
   * Keep the last answer of each URL with its ETag and ask with If-None-Match: while nothing
   * changed the API answers 304 with no body (it still counts against the rate limit) and the
   * SDK returns the kept answer. `true`: the last 100 URLs; or `{ maxEntries }`.
   */
  cache?: boolean | { maxEntries?: number };
  /** The fetch to use (default: the global one): a runtime's own, or one that counts or logs. */
  fetch?: typeof fetch;
  /** More request headers (e.g. a tracing header); the credential and Accept are the SDK's. */
  headers?: Record<string, string>;
  /** Called before each wait between attempts (e.g. to log it). */
  onRetry?: (info: RetryInfo) => void;
  /** Called for every answer that is returned (200, and 304 from the cache). */
  onResponse?: (info: ResponseInfo) => void;
}

export interface Sent<T> {
  status: 200 | 201 | 204 | 304;
  /** The body (of a 200 or 201, or the cached one of a 304); undefined for a 204, or a 304 the caller asked for itself. */
  body: T | undefined;
  etag: string | undefined;
}

export interface SendOptions {
  signal?: AbortSignal | undefined;
  /** An ETag of the caller's own: a 304 comes back as { status: 304, body: undefined }. */
  ifNoneMatch?: string | undefined;
}

/** What a write sends besides its path: a JSON body, headers, and whether a repeat is harmless. */
interface WriteInit {
  body?: unknown;
  headers?: Record<string, string>;
  /** retried like a GET (an Idempotency-Key makes a POST safe to repeat) */
  idempotent: boolean;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export class Transport {
  readonly baseUrl: string;
  private readonly retry: RetryOptions;
  private readonly credential: () => string | Promise<string>;
  private readonly cache: EtagCache | null;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly send: Record<Method, PlainCall>;

  constructor(private readonly opts: TransportOptions) {
    this.baseUrl = checkBaseUrl(opts.baseUrl);
    this.credential = checkCredential(opts);
    this.retry = opts.retry === false ? { ...DEFAULT_RETRY, maxAttempts: 1 } : { ...DEFAULT_RETRY, ...opts.retry };
    for (const [name, value] of Object.entries(this.retry)) {
      if (typeof value !== 'number' || Number.isNaN(value) || value < (name === 'maxAttempts' ? 1 : 0)) {
        throw new TypeError(
          `ClinicApi: retry.${name} must be a number of at least ${name === 'maxAttempts' ? 1 : 0} (got ${String(value)})`,
        );
      }
    }
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.timeoutMs > 0))
      throw new TypeError(`ClinicApi: timeoutMs must be a positive number of milliseconds (got ${String(opts.timeoutMs)})`);
    this.cache = opts.cache ? new EtagCache(opts.cache === true ? 100 : (opts.cache.maxEntries ?? 100)) : null;
    const f = opts.fetch ?? globalThis.fetch;
    if (typeof f !== 'function') throw new TypeError('ClinicApi: this runtime has no global fetch; pass one as the `fetch` option');
    // A global fetch called as a method of another object throws "Illegal invocation" in browsers.
    this.fetchImpl = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const client: Api = createClient<paths, 'application/json'>({ baseUrl: this.baseUrl, querySerializer: serializeQuery });
    this.send = {
      GET: client.GET as unknown as PlainCall,
      POST: client.POST as unknown as PlainCall,
      DELETE: client.DELETE as unknown as PlainCall,
    };
  }

  /** The URL of GET `path` with `params`, as openapi-fetch writes it (for messages and the cache). */
  private url(path: string, params: object): string {
    return createFinalURL(path, {
      baseUrl: this.baseUrl,
      params,
      querySerializer: serializeQuery,
      pathSerializer: defaultPathSerializer,
    });
  }

  /** GET `path` and its JSON, retried as RetryOptions say; throws ClinicApiError. */
  get<P extends GetPath>(path: P, params: Params<P>, opts: SendOptions = {}): Promise<Sent<Answer<P>>> {
    return this.request<Answer<P>>('GET', path, params, opts, { idempotent: true });
  }

  /** POST `body` as JSON to `path`; retried only when `headers` hold an Idempotency-Key. */
  post<P extends PostPath>(
    path: P,
    body: PostBody<P>,
    headers: Record<string, string>,
    opts: SendOptions = {},
  ): Promise<Sent<PostAnswer<P>>> {
    const idempotent = Object.keys(headers).some((h) => h.toLowerCase() === 'idempotency-key');
    return this.request<PostAnswer<P>>('POST', path, {}, opts, {
      body,
      headers: { 'content-type': 'application/json', ...headers },
      idempotent,
    });
  }

  /** DELETE `path`; `idempotent`: the caller takes a repeat's 404 as done, so it may be retried. */
  delete<P extends DeletePath>(path: P, params: DeleteParams<P>, idempotent: boolean, opts: SendOptions = {}): Promise<Sent<undefined>> {
    return this.request<undefined>('DELETE', path, params, opts, { idempotent });
  }

  private async request<T>(method: Method, path: string, params: object, opts: SendOptions, init: WriteInit): Promise<Sent<T>> {
    const url = this.url(path, params);
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      let failure: ClinicApiError;
      let retryAfterMs: number | undefined;
      try {
        const answer = await this.attempt<T>(method, path, params, url, attempt, opts, init);
        if ('sent' in answer) return answer.sent;
        failure = answer.error;
        retryAfterMs = answer.retryAfterMs;
      } catch (err) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        if (!(err instanceof ClinicApiConnectionError)) throw err;
        failure = err;
      }
      const delay = retryDelay({
        method,
        idempotent: init.idempotent,
        status: failure.status,
        attempts: attempt,
        elapsedMs: performance.now() - started,
        retryAfterMs,
        options: this.retry,
        random: Math.random(),
      });
      if (delay === null) throw failure;
      this.opts.onRetry?.({ method, url, attempt, delayMs: delay, error: failure });
      await sleep(delay, opts.signal);
    }
  }

  /** One attempt: its answer, a ClinicApiError to decide on, or a thrown ClinicApiConnectionError. */
  private async attempt<T>(
    method: Method,
    path: string,
    params: object,
    url: string,
    attempt: number,
    opts: SendOptions,
    init: WriteInit,
  ): Promise<{ sent: Sent<T> } | { error: ClinicApiError; retryAfterMs: number | undefined }> {
    // Only a GET's answer is kept (and asked again with If-None-Match).
    const cached = opts.ifNoneMatch === undefined && method === 'GET' ? this.cache?.get(url) : undefined;
    const headers: Record<string, string> = {
      ...this.opts.headers,
      ...init.headers,
      accept: 'application/json',
      authorization: `Bearer ${await this.credential()}`,
    };
    const etag = opts.ifNoneMatch ?? cached?.etag;
    if (etag !== undefined) headers['if-none-match'] = etag;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    try {
      // openapi-fetch writes the request and reads the body (as text: the cache keeps it as sent);
      // the fetch is the caller's, with the SDK's headers and time limit.
      const {
        data,
        error,
        response: res,
      } = await this.send[method](path, {
        params,
        ...(init.body === undefined ? {} : { body: init.body }),
        parseAs: 'text',
        // The body as openapi-fetch wrote it (JSON), with the SDK's headers and time limit.
        fetch: async (request) =>
          this.fetchImpl(request.url, { method, headers, signal, ...(init.body === undefined ? {} : { body: await request.text() }) }),
      });
      if (res.status === 304) {
        const body = cached ? (JSON.parse(cached.text) as T) : undefined;
        this.opts.onResponse?.({ method, url, status: 304, attempt, fromCache: cached !== undefined });
        return { sent: { status: 304, body, etag: res.headers.get('etag') ?? etag } };
      }
      // The body was read inside the time limit: an answer cut off mid-body is a connection error too.
      const text = typeof data === 'string' ? data : undefined;
      if (res.status === 204) {
        this.opts.onResponse?.({ method, url, status: 204, attempt, fromCache: false });
        return { sent: { status: 204, body: undefined, etag: undefined } };
      }
      if (res.status === 200 || res.status === 201) {
        const body = text === undefined ? undefined : parseJson(text);
        if (body === undefined || text === undefined) {
          throw new ClinicApiError({
            code: 'invalid_response',
            message: `${method} ${url}: a ${res.status} whose body is not JSON (is the base URL the API's?)`,
            status: res.status,
            method,
            url,
          });
        }
        const resEtag = res.headers.get('etag') ?? undefined;
        if (this.cache && resEtag && opts.ifNoneMatch === undefined && method === 'GET') this.cache.set(url, resEtag, text);
        this.opts.onResponse?.({ method, url, status: res.status, attempt, fromCache: false });
        return { sent: { status: res.status as 200 | 201, body: body as T, etag: resEtag } };
      }
      const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), Date.now());
      const retryAfter = retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000);
      // openapi-fetch gives an error body as JSON when it is JSON (else as text, or undefined when empty)
      const errorBody = text !== undefined ? (parseJson(text) ?? null) : (error ?? null);
      return { error: errorFromResponse(res.status, errorBody, res.headers, { method, url }, retryAfter), retryAfterMs };
    } catch (err) {
      if (err instanceof ClinicApiError || opts.signal?.aborted) throw err;
      const timedOut = timeout.aborted;
      const reason = timedOut ? `no answer within ${this.timeoutMs} ms` : describeNetworkError(err);
      throw new ClinicApiConnectionError({
        code: timedOut ? 'timeout' : 'connection_error',
        message: `${method} ${url}: ${reason}`,
        method,
        url,
        cause: err,
      });
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** fetch's own message ("fetch failed") with what is under it: ECONNREFUSED, ECONNRESET, ENOTFOUND ... */
function describeNetworkError(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string') parts.push(code);
    else if (typeof message === 'string' && message) parts.push(message);
  }
  return parts.length ? parts.join(': ') : String(err);
}

function checkBaseUrl(raw: unknown): string {
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new TypeError(
      "ClinicApi: baseUrl is required: the service's address, e.g. new ClinicApi({ baseUrl: 'https://clinic.example.com', apiKey })",
    );
  }
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new TypeError(`ClinicApi: baseUrl is not an absolute URL: "${raw}" (e.g. https://clinic.example.com)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new TypeError(`ClinicApi: baseUrl must be http:// or https:// (got ${url.protocol}//)`);
  if (url.search || url.hash) throw new TypeError(`ClinicApi: baseUrl must have no query or fragment: "${raw}"`);
  // Without a trailing slash, paths are appended to it: https://host/prefix + /api/v1/citas.
  return url.href.replace(/\/+$/, '');
}

function checkCredential(opts: TransportOptions): () => string | Promise<string> {
  const { apiKey, accessToken } = opts;
  if ((apiKey === undefined) === (accessToken === undefined)) {
    throw new TypeError(
      'ClinicApi: give exactly one of apiKey (an API key, svc_...) and accessToken (an OAuth access token, or a function returning one)',
    );
  }
  if (typeof accessToken === 'function') {
    return async () => {
      const token = await accessToken();
      if (typeof token !== 'string' || token === '') throw new TypeError('ClinicApi: the accessToken function returned no token');
      return token;
    };
  }
  const value = apiKey ?? accessToken;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new TypeError(`ClinicApi: ${apiKey !== undefined ? 'apiKey' : 'accessToken'} is empty`);
  }
  return () => value.trim();
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
