// The SDK's errors. Every failure of a call is a ClinicApiError: an answer of the API in its error
// shape (`code`, `message`, `param`, `scope`, `request_id`) with the status and Retry-After, or,
// with no answer at all, a ClinicApiConnectionError. Callers match on `code`, as the API asks.
import type { ErrorDetail } from './types.js';

/**
 * The API's error codes, and those of the SDK itself: `connection_error` (no answer: refused,
 * reset, DNS), `timeout` (no answer within `timeoutMs`) and `invalid_response` (an answer that is
 * not the API's JSON, e.g. a proxy's HTML page). Codes added by later versions of the API come
 * through as they are.
 */
export type ErrorCode =
  | ErrorDetail['code']
  | 'insufficient_scope'
  | 'ip_not_allowed'
  | 'connection_error'
  | 'timeout'
  | 'invalid_response'
  // any other string, written so that editors still offer the known codes
  | (string & {});

export interface ClinicApiErrorInit {
  code: ErrorCode;
  message: string;
  status?: number | undefined;
  param?: string | undefined;
  scope?: string | undefined;
  requestId?: string | undefined;
  retryAfter?: number | undefined;
  method?: string | undefined;
  url?: string | undefined;
  cause?: unknown;
}

export class ClinicApiError extends Error {
  override name = 'ClinicApiError';
  /** What went wrong, stable: match on it (the API's docs/api.md, "Errors"). */
  readonly code: ErrorCode;
  /** The HTTP status; undefined when no answer came (ClinicApiConnectionError). */
  readonly status: number | undefined;
  /** The query parameter at fault (400 `invalid_parameter`, `unknown_parameter`). */
  readonly param: string | undefined;
  /** The scope the key lacks (403 `insufficient_scope`). */
  readonly scope: string | undefined;
  /** The request's id (X-Request-Id): quote it to support. */
  readonly requestId: string | undefined;
  /** Seconds the API asked to wait before trying again (Retry-After of 429, 500, 503). */
  readonly retryAfter: number | undefined;
  readonly method: string | undefined;
  readonly url: string | undefined;

  constructor(init: ClinicApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.param = init.param;
    this.scope = init.scope;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.method = init.method;
    this.url = init.url;
  }
}

/** No answer: the connection was refused or reset, the name did not resolve, or `timeoutMs` passed. */
export class ClinicApiConnectionError extends ClinicApiError {
  override name = 'ClinicApiConnectionError';
}

/**
 * 410 `cursor_expired` from the change feed: the cursor is older than the events the API keeps (at
 * least 30 days). The copy may have missed changes: take `eventos.now()`, read the collections
 * again, then follow from that cursor (or give `follow()` an `onCursorExpired` handler, which does
 * it in that order).
 */
export class CursorExpiredError extends ClinicApiError {
  override name = 'CursorExpiredError';
}

/** The error for an answer of `status` whose body is `body` (parsed JSON, or null when it was not JSON). */
export function errorFromResponse(
  status: number,
  body: unknown,
  headers: { get(name: string): string | null },
  request: { method: string; url: string },
  retryAfterSeconds: number | undefined,
): ClinicApiError {
  const detail = (body as { error?: Partial<ErrorDetail> & { scope?: unknown } } | null)?.error;
  const requestId = typeof detail?.request_id === 'string' ? detail.request_id : (headers.get('x-request-id') ?? undefined);
  if (!detail || typeof detail.code !== 'string') {
    return new ClinicApiError({
      code: 'invalid_response',
      message: `${request.method} ${request.url}: HTTP ${status} without the API's error body (is the base URL the API's?)`,
      status,
      requestId,
      retryAfter: retryAfterSeconds,
      method: request.method,
      url: request.url,
    });
  }
  const init: ClinicApiErrorInit = {
    code: detail.code,
    message: `${status} ${detail.code}: ${typeof detail.message === 'string' ? detail.message : 'no message'}`,
    status,
    param: typeof detail.param === 'string' ? detail.param : undefined,
    scope: typeof detail.scope === 'string' ? detail.scope : undefined,
    requestId,
    retryAfter: retryAfterSeconds,
    method: request.method,
    url: request.url,
  };
  return detail.code === 'cursor_expired' ? new CursorExpiredError(init) : new ClinicApiError(init);
}
