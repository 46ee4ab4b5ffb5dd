// Shared by the HTTP behaviour tests (not a test file itself: vitest only runs *.test.ts).
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { bearer, type TestApp } from '../helpers/app.js';
import { uid } from '../helpers/fixtures.js';

/** The three collections (limit and offset, filters, totals). */
export const PATHS = ['/api/v1/citas', '/api/v1/clientas', '/api/v1/llamadas'] as const;
export type ApiPath = (typeof PATHS)[number];
/** Every data path: the collections and the change feed. */
export const ALL_PATHS = [...PATHS, '/api/v1/eventos'] as const;
/** Who the key is (test/http/me.test.ts). */
export const ME_PATH = '/api/v1/me';

export const JSON_UTF8 = 'application/json; charset=utf-8';
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Fixture ids by their number: cita(2) is the second cita of clinic A, and so on. */
export const citaA = (n: number) => uid('a', 2, n);
export const llamadaA = (n: number) => uid('a', 3, n);

/**
 * Moves the fixed clock forward by `ms` (default 2 s, which refills both a key's burst of 120
 * and an address's 20 failed authentications), so tests in one file never share a bucket.
 * Never moves backwards: the limiters would count that as debt.
 */
export function tick(t: TestApp, ms = 2_000): void {
  t.clock.now += ms;
}

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS' | 'TRACE' | 'QUERY';

export interface CallOptions {
  /** API key to send as Bearer; null sends no Authorization header. Default: clinic A's key. */
  key?: string | null;
  headers?: Record<string, string>;
  method?: Method;
  remoteAddress?: string;
}

/** One request to the app; `url` is a path with its query string. */
export function call(t: TestApp, url: string, opts: CallOptions = {}): Promise<LightMyRequestResponse> {
  const key = opts.key === undefined ? t.keyA : opts.key;
  return t.app.inject({
    // light-my-request's method type predates QUERY (RFC 10008), which it sends as given
    method: (opts.method ?? 'GET') as InjectOptions['method'],
    url,
    headers: { ...(key === null ? {} : bearer(key)), ...opts.headers },
    ...(opts.remoteAddress ? { remoteAddress: opts.remoteAddress } : {}),
  });
}

/** GET /metrics with the app's METRICS_TOKEN, as a Prometheus scraper asks for it. */
export function scrapeMetrics(t: TestApp, token: string): Promise<LightMyRequestResponse> {
  return call(t, '/metrics', { key: null, headers: { authorization: `Bearer ${token}` } });
}

/** GET that must succeed; returns the parsed body. */
export async function ok<T = any>(t: TestApp, url: string, opts: CallOptions = {}): Promise<T> {
  const res = await call(t, url, opts);
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  expect(res.headers['content-type']).toBe(JSON_UTF8);
  return res.json() as T;
}

export const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

export interface ApiErrorBody {
  code: string;
  message: string;
  param?: string;
  request_id: string;
}

/**
 * Asserts the one error shape (docs/api.md, "Errors"): exactly {error: {code, message, param?, request_id}},
 * `param` only when expected, request_id equal to the X-Request-Id header, JSON content type.
 */
export function expectError(res: LightMyRequestResponse, status: number, code: string, param?: string): ApiErrorBody {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toBe(JSON_UTF8);
  expect(res.headers['cache-control']).toBe('no-store');
  const body = res.json() as { error: ApiErrorBody };
  expect(Object.keys(body)).toEqual(['error']);
  const expectedKeys = param === undefined ? ['code', 'message', 'request_id'] : ['code', 'message', 'param', 'request_id'];
  expect(Object.keys(body.error).sort()).toEqual(expectedKeys);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(10);
  if (param !== undefined) expect(body.error.param).toBe(param);
  expect(typeof res.headers['x-request-id']).toBe('string');
  expect(body.error.request_id).toBe(res.headers['x-request-id']);
  return body.error;
}

/**
 * Asserts a 403 insufficient_scope (docs/api.md, "Scopes"): the one error shape with `scope` naming the
 * scope needed, and the RFC 6750 challenge naming it too.
 */
export function expectScopeError(res: LightMyRequestResponse, scope: string): ApiErrorBody & { scope: string } {
  expect(res.statusCode, res.body).toBe(403);
  expect(res.headers['content-type']).toBe(JSON_UTF8);
  expect(res.headers['cache-control']).toBe('no-store');
  const body = res.json() as { error: ApiErrorBody & { scope: string } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'request_id', 'scope']);
  expect(body.error.code).toBe('insufficient_scope');
  expect(body.error.scope).toBe(scope);
  expect(body.error.message).toContain(scope);
  expect(body.error.request_id).toBe(res.headers['x-request-id']);
  expect(res.headers['www-authenticate']).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
  expect(res.headers.etag).toBeUndefined();
  return body.error;
}
