// CSRF protection for every dashboard form: a synchronizer token derived from a secret only the
// browser holds. Signed in, the secret is the session token (HttpOnly cookie); on the sign-in
// form, before any session exists, it is a random pre-session cookie. The form carries
// HMAC-SHA256(secret, label), which a page on another site can neither read nor compute.
// Nothing is stored server-side, so it works across instances. As a second, independent check,
// a POST whose Sec-Fetch-Site says it came from another site is refused outright.
// (@fastify/csrf-protection needs its own secret cookie and, to bind tokens to a session, a
// server-wide HMAC key shared by every instance; deriving the token from the session does both.)
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export const CSRF_FIELD = '_csrf';

export function csrfToken(secret: string): string {
  return createHmac('sha256', secret).update('clinic-dashboard csrf v1').digest('base64url');
}

export function csrfValid(secret: string | null | undefined, submitted: unknown): boolean {
  if (!secret || typeof submitted !== 'string' || submitted.length === 0) return false;
  const a = Buffer.from(csrfToken(secret));
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** False when the browser says the request was started by another site. */
export function sameOriginRequest(req: FastifyRequest): boolean {
  const site = req.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}
