// The dashboard's cookies: the session cookie (its token is resolved by services/sessions.ts)
// and the pre-session cookie of the sign-in form, both scoped to the dashboard.
import type { Config } from '../config.js';

// The cookies' values are tokens of one kind, made and checked where sessions are.
export { isToken, newToken } from '../services/sessions.js';

export const SESSION_COOKIE = 'clinic_session';
/** Before sign-in there is no session; this cookie carries the sign-in form's CSRF secret. */
export const PRESESSION_COOKIE = 'clinic_presession';
/** Cookies go to the dashboard only: the API never receives them. */
export const COOKIE_PATH = '/dashboard';

/**
 * When the cookies carry `Secure`: 'auto' when the request reached Fastify as HTTPS
 * (`request.protocol`, which honours X-Forwarded-Proto only with TRUST_PROXY), 'always' on every
 * response (for production behind TLS, whatever the proxy says), 'never' (plain-HTTP trials only).
 * COOKIE_SECURE, validated by loadConfig().
 */
export type CookieSecure = Config['cookieSecure'];

export interface CookieOptions {
  path: string;
  httpOnly: true;
  sameSite: 'lax';
  secure: boolean | 'auto';
}

/** HttpOnly, SameSite=Lax, Path=/dashboard, and Secure as `mode` says. */
export function cookieOptions(mode: CookieSecure): CookieOptions {
  return { path: COOKIE_PATH, httpOnly: true, sameSite: 'lax', secure: mode === 'auto' ? 'auto' : mode === 'always' };
}
