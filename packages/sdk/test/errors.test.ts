// errorFromResponse (packages/sdk/src/errors.ts), the pure mapping of an answer to the SDK's
// error, for the shapes a running server of this version cannot be made to answer: a 403
// insufficient_scope with `error.scope` (keys with scopes), and a proxy's page that is not the
// API's JSON. The API's own errors are checked against real servers in client.test.ts.
import { describe, expect, it } from 'vitest';
import { ClinicApiError, CursorExpiredError, errorFromResponse } from '../src/errors.js';

const headers = (h: Record<string, string> = {}) => new Headers(h);
const req = { method: 'GET', url: 'https://clinic.example.com/api/v1/citas' };

describe('errorFromResponse', () => {
  it("carries the body's code, message, param, scope and request_id, the status and Retry-After", () => {
    const e = errorFromResponse(
      403,
      { error: { code: 'insufficient_scope', message: 'this key lacks the scope citas:read', scope: 'citas:read', request_id: 'r-1' } },
      headers({ 'x-request-id': 'ignored' }),
      req,
      undefined,
    );
    expect(e).toBeInstanceOf(ClinicApiError);
    expect(e).toMatchObject({ status: 403, code: 'insufficient_scope', scope: 'citas:read', requestId: 'r-1', param: undefined, ...req });
    expect(e.message).toBe('403 insufficient_scope: this key lacks the scope citas:read');
    const limited = errorFromResponse(
      429,
      { error: { code: 'too_many_requests', message: 'slow down', request_id: 'r-2' } },
      headers(),
      req,
      3,
    );
    expect(limited).toMatchObject({ status: 429, retryAfter: 3, scope: undefined });
  });

  it('410 cursor_expired is a CursorExpiredError', () => {
    const e = errorFromResponse(410, { error: { code: 'cursor_expired', message: 'too old', request_id: 'r' } }, headers(), req, undefined);
    expect(e).toBeInstanceOf(CursorExpiredError);
    expect(e.code).toBe('cursor_expired');
  });

  it("an answer without the API's error body (a proxy's page) is invalid_response, with its status and X-Request-Id", () => {
    const e = errorFromResponse(502, null, headers({ 'x-request-id': 'from-proxy' }), req, undefined);
    expect(e).toMatchObject({ status: 502, code: 'invalid_response', requestId: 'from-proxy' });
    expect(e.message).toMatch(/HTTP 502 without the API's error body/);
  });
});
