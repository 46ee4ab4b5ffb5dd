// Sign-in and sign-out. Every attempt is throttled per (e-mail, IP), per e-mail and per IP
// before any password is checked (throttle.ts), so guessing cannot go faster than the limits,
// not even with many requests in parallel, and an exhausted bucket refuses even the right password.
// Password checks (scrypt) run at most a few at a time.
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findUserByEmail } from '../services/accounts.js';
import { hashPassword, verifyPassword } from '../services/passwords.js';
import { DomainError } from '../errors.js';
import { field, herePath, pageLang, sendPage, type AdminContext } from './context.js';
import type { PageHandlers } from './pages.js';
import { CSRF_FIELD, csrfToken, csrfValid, sameOriginRequest } from './csrf.js';
import { asLang, messages } from './i18n.js';
import type { Lang } from './locales/messages.js';
import { preferredLang } from './negotiate.js';
import { isToken, newToken, PRESESSION_COOKIE, SESSION_COOKIE } from './session.js';
import { safeNext } from './routes-oauth.js';
import { takeSignInAttempt } from './throttle.js';
import { signInPage, type SignInModel } from './views/sign-in.js';

const MAX_PASSWORD = 1024;

export async function authRoutes(app: PageHandlers, ctx: AdminContext) {
  // Unknown e-mails still pay for one scrypt, so response time does not reveal who has an account.
  let dummyHash: Promise<string> | null = null;
  const dummy = () => (dummyHash ??= hashPassword(randomBytes(16).toString('hex')));

  /** The pre-session secret for the sign-in form's CSRF token, created on first sight. */
  function presession(req: FastifyRequest, reply: FastifyReply): string {
    const existing = req.cookies[PRESESSION_COOKIE];
    if (isToken(existing)) return existing;
    const secret = newToken();
    reply.setCookie(PRESESSION_COOKIE, secret, ctx.cookies);
    return secret;
  }

  /**
   * The sign-in page's language: `?lang=` (or the form's hidden copy of it), for this page only,
   * else the usual precedence. It is also what error pages of this request use.
   */
  function langOf(req: FastifyRequest, langParam: Lang | null): Lang {
    const lang = pageLang(req, langParam);
    req.lang = lang;
    return lang;
  }

  function render(
    req: FastifyRequest,
    reply: FastifyReply,
    status: number,
    langParam: Lang | null,
    m: Omit<SignInModel, 't' | 'csrf' | 'here' | 'langParam'>,
  ) {
    const secret = presession(req, reply);
    // A failed POST comes back to the sign-in page itself (a GET of the POST's URL).
    const here = req.method === 'GET' ? herePath(req) : '/dashboard/sign-in';
    const lang = langOf(req, langParam);
    return sendPage(reply, status, signInPage({ ...m, t: messages(lang), langParam, csrf: csrfToken(secret), here }));
  }

  app.get('/', async (req, reply) => reply.redirect(req.viewer ? '/dashboard/settings/api' : '/dashboard/sign-in', 303));

  app.get('/sign-in', async (req, reply) => {
    const q = req.query;
    // An app's consent page sends someone who is not signed in here first, then back (only there: no open redirect).
    const next = safeNext(field(q, 'next'));
    if (req.viewer) return reply.redirect(next ?? '/dashboard/settings/api', 303);
    const notice = field(q, 'expired') || req.sessionState === 'expired' ? 'expired' : field(q, 'signed_out') ? 'signed_out' : null;
    return render(req, reply, 200, asLang(field(q, 'lang')), { notice, next });
  });

  app.post('/sign-in', async (req, reply) => {
    const body = req.body;
    const langParam = asLang(field(body, 'lang'));
    langOf(req, langParam);
    if (!sameOriginRequest(req) || !csrfValid(req.cookies[PRESESSION_COOKIE], field(body, CSRF_FIELD)))
      throw new DomainError('csrf_failed', 'form refused (CSRF)');

    const email = field(body, 'email').trim().toLowerCase().slice(0, 254);
    const next = safeNext(field(body, 'next'));
    const password = field(body, 'password');

    // The attempt is paid for before the password is checked: parallel requests cannot all pass.
    const verdict = await takeSignInAttempt(ctx.limiters, email, req.ip, ctx.now());
    if (!verdict.allowed) {
      const wait = verdict.retryAfterSeconds;
      reply.header('retry-after', String(wait));
      req.log.warn({ ip: req.ip, throttled: verdict.scope }, 'dashboard sign-in throttled');
      return render(req, reply, 429, langParam, { email, next, error: { kind: 'throttled', minutes: Math.max(1, Math.ceil(wait / 60)) } });
    }

    const user = email ? await findUserByEmail(ctx.db, email) : undefined;
    const checked = await ctx.verifySlots.run(async () => {
      if (user && password.length > 0 && password.length <= MAX_PASSWORD) return verifyPassword(password, user.password_hash);
      await verifyPassword(password.slice(0, MAX_PASSWORD) || 'x', await dummy());
      return false;
    }, 'busy' as const);
    if (checked === 'busy') {
      // Too many checks already running or waiting: answered at once, without hashing.
      reply.header('retry-after', '1');
      req.log.warn({ ip: req.ip, running: ctx.verifySlots.inUse }, 'dashboard sign-in refused: password checks busy');
      return render(req, reply, 503, langParam, { email, next, error: { kind: 'busy' } });
    }

    if (!checked || !user) {
      req.log.info({ ip: req.ip }, 'dashboard sign-in failed');
      return render(req, reply, 401, langParam, { email, next, error: { kind: 'bad_credentials' } });
    }

    // A fresh token at every sign-in (no session fixation); the old one, if any, ends here.
    const old = req.cookies[SESSION_COOKIE];
    if (isToken(old)) await ctx.sessions.destroy(old);
    // The session keeps the language the sign-in page was in, if someone asked for it (the address,
    // the person's choice, the browser); otherwise (null) the clinic's language applies from now on.
    const lang = preferredLang({ page: langParam, chosen: req.chosenLang, acceptLanguage: req.headers['accept-language'] });
    const token = await ctx.sessions.create(user.id, lang);
    reply.setCookie(SESSION_COOKIE, token, ctx.cookies);
    reply.clearCookie(PRESESSION_COOKIE, ctx.cookies);
    req.log.info({ user: user.id }, 'dashboard sign-in');
    return reply.redirect(next ?? '/dashboard/settings/api', 303);
  });

  app.post('/sign-out', async (req, reply) => {
    const v = req.viewer;
    if (v) {
      if (!sameOriginRequest(req) || !csrfValid(v.token, field(req.body, CSRF_FIELD)))
        throw new DomainError('csrf_failed', 'form refused (CSRF)');
      await ctx.sessions.destroy(v.token);
    }
    reply.clearCookie(SESSION_COOKIE, ctx.cookies);
    const lang = pageLang(req);
    return reply.redirect(`/dashboard/sign-in?signed_out=1&lang=${lang}`, 303);
  });
}
