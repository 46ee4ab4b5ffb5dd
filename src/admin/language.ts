// The language switch: a person's explicit choice of language, kept in a long-lived cookie and
// honoured on every dashboard page before the clinic's language and Accept-Language
// (resolveLang in negotiate.ts). Chosen with a small form on the sign-in page and in the top bar; a
// POST with the same CSRF protection as every other form, then back to the page it came from.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../errors.js';
import { field, PAGE_ROUTE, type AdminContext } from './context.js';
import { CSRF_FIELD, csrfValid, sameOriginRequest } from './csrf.js';
import { asLang } from './i18n.js';
import type { Lang } from './locales/messages.js';
import { PRESESSION_COOKIE, type CookieOptions } from './session.js';

export const LANG_COOKIE = 'clinic_lang';
/** A year: a language is chosen once, not per visit (browsers cap cookies at 400 days anyway). */
export const LANG_COOKIE_MAX_AGE_S = 365 * 86_400;

export const LANGUAGE_PATH = '/dashboard/language';

/**
 * The stored choice, or null. A value the dashboard does not know (an old language, a
 * hand-edited cookie) is ignored and removed, so pages fall back to the clinic's language or the
 * browser's.
 */
export function readChosenLang(req: FastifyRequest, reply: FastifyReply, cookies: CookieOptions): Lang | null {
  const raw = req.cookies[LANG_COOKIE];
  if (raw === undefined) return null;
  const lang = asLang(raw);
  if (lang === null) reply.clearCookie(LANG_COOKIE, cookies);
  return lang;
}

/**
 * Where to go back after choosing: the page the form was on, if it is a dashboard page;
 * otherwise /dashboard (never another site: no open redirect). A `lang` parameter is dropped,
 * since it would override the choice just made on that one page.
 */
export function returnPath(next: string): string {
  const fallback = '/dashboard';
  if (next.length > 2048 || !next.startsWith('/dashboard')) return fallback;
  let url: URL;
  try {
    url = new URL(next, 'http://dashboard.invalid');
  } catch {
    return fallback;
  }
  if (url.origin !== 'http://dashboard.invalid') return fallback;
  if (url.pathname !== '/dashboard' && !url.pathname.startsWith('/dashboard/')) return fallback;
  if (url.pathname === LANGUAGE_PATH) return fallback;
  url.searchParams.delete('lang');
  return url.pathname + url.search;
}

export async function languageRoutes(app: FastifyInstance, ctx: AdminContext) {
  const cookie = { ...ctx.cookies, maxAge: LANG_COOKIE_MAX_AGE_S } satisfies CookieOptions & { maxAge: number };

  app.post('/language', PAGE_ROUTE, async (req, reply) => {
    // Signed in, the session is the CSRF secret; on the sign-in page, the pre-session cookie.
    const secret = req.viewer ? req.viewer.token : req.cookies[PRESESSION_COOKIE];
    if (!sameOriginRequest(req) || !csrfValid(secret, field(req.body, CSRF_FIELD)))
      throw new DomainError('csrf_failed', 'the language form failed its CSRF check');
    const lang = asLang(field(req.body, 'lang'));
    if (!lang) throw new DomainError('invalid_input', 'unknown language', { field: 'lang' });
    reply.setCookie(LANG_COOKIE, lang, cookie);
    return reply.redirect(returnPath(field(req.body, 'next')), 303);
  });
}
