// The clinic dashboard (Settings > API) as one Fastify plugin, mounted at /dashboard. It has its
// own authentication (e-mail + password, server-side sessions), CSRF protection, HTML error
// pages and security headers; it never accepts API keys, and the API never reads its cookies
// (they are scoped to Path=/dashboard and the API only reads Authorization). Its pages are
// registered here at start (pages.ts); their handlers and views load on the first page request.
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ROLES, type Role } from '../domain/records.js';
import { DomainError } from '../errors.js';
import { loadOnce } from '../memo.js';
import { getClinic } from '../services/accounts.js';
import type { RateLimiters } from '../services/shared-rate-limit.js';
import { ASSET_PREFIX, assets } from './assets.js';
import type { AdminContext } from './context.js';
import { renderErrorPage } from './errors.js';
import { asLang } from './i18n.js';
import { refuseUnusableInput } from './input.js';
import { languageRoutes, readChosenLang } from './language.js';
import { field, PAGE_ROUTE, pageLang } from './context.js';
import { ID_RE, requireCsrf, requireViewer } from './guards.js';
import { messages } from './i18n.js';
import { PAGES, type Guard, type PageKey } from './pages.js';

/** Where a page's content starts (views/layout.ts): the incident banner goes first in it. */
const MAIN_OPEN = '<main id="main" class="container" tabindex="-1">';
import { cookieOptions, SESSION_COOKIE, type CookieSecure } from './session.js';
import { Semaphore } from './throttle.js';

export interface ThrottleTuning {
  /** sign-in attempts allowed in a row for one e-mail address from one client IP... */
  accountIpBurst: number;
  /** ...then this many more per second (1/60: one a minute) */
  accountIpPerSecond: number;
  /** attempts for one e-mail address from all IPs together (only a spread-out attack reaches it) */
  accountBurst: number;
  accountPerSecond: number;
  /** attempts from one client IP, whatever the e-mail */
  ipBurst: number;
  ipPerSecond: number;
  /** password checks (scrypt, on libuv's thread pool) running at once; keep it below UV_THREADPOOL_SIZE (4) */
  verifyConcurrency: number;
  /** attempts that may wait for a free check; beyond that they get a 503 page at once */
  verifyQueue: number;
}

export const DEFAULT_THROTTLE: ThrottleTuning = {
  accountIpBurst: 5,
  accountIpPerSecond: 1 / 60,
  accountBurst: 50,
  accountPerSecond: 1 / 10,
  ipBurst: 20,
  ipPerSecond: 1 / 30,
  verifyConcurrency: 2,
  verifyQueue: 8,
};

export interface AdminTuning {
  throttle?: Partial<ThrottleTuning>;
  /**
   * When the session cookies carry `Secure` (default 'auto': when the request reached Fastify
   * as HTTPS). Use 'always' in production behind TLS. Meant to be fed by COOKIE_SECURE.
   */
  cookieSecure?: CookieSecure;
}

/** The services the pages use (AdminContext, where each is described), and how to make the rest. */
export interface AdminOptions
  extends
    AdminTuning,
    Pick<
      AdminContext,
      | 'db'
      | 'keys'
      | 'appGrants'
      | 'oauth'
      | 'webhooks'
      | 'usage'
      | 'sessions'
      | 'clientasSearch'
      | 'exports'
      | 'sandboxes'
      | 'config'
      | 'now'
    > {
  /** where the sign-in limiters are made (the runtime's): shared by the fleet on Redis with REDIS_URL */
  limiters: RateLimiters;
}

// Everything the pages need comes from this origin; no inline script or style, no framing.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const BEARER_RE = /^\s*bearer\b/i;

const GUARDS = {
  open: {},
  viewer: { preHandler: requireViewer },
  'viewer+csrf': { preHandler: [requireViewer, requireCsrf] },
} satisfies Record<Guard, object>;

export async function adminPlugin(app: FastifyInstance, opts: AdminOptions) {
  const throttle = { ...DEFAULT_THROTTLE, ...opts.throttle };
  // One bucket per (e-mail, IP), e-mail and IP for the whole fleet: with per-instance buckets a
  // guesser would get one allowance per instance behind the load balancer.
  const limiters = opts.limiters;
  const ctx: AdminContext = {
    db: opts.db,
    keys: opts.keys,
    appGrants: opts.appGrants,
    oauth: opts.oauth,
    webhooks: opts.webhooks,
    usage: opts.usage,
    config: opts.config,
    now: opts.now,
    sessions: opts.sessions,
    clientasSearch: opts.clientasSearch,
    exports: opts.exports,
    sandboxes: opts.sandboxes,
    limiters: {
      accountIp: limiters.make('signin-account-ip', throttle.accountIpPerSecond, throttle.accountIpBurst),
      account: limiters.make('signin-account', throttle.accountPerSecond, throttle.accountBurst),
      ip: limiters.make('signin-ip', throttle.ipPerSecond, throttle.ipBurst),
    },
    verifySlots: new Semaphore(throttle.verifyConcurrency, throttle.verifyQueue),
    cookies: cookieOptions(opts.cookieSecure ?? 'auto'),
  };

  app.addHook('onRoute', (route) => {
    // Pages, not API: keep every dashboard route out of the OpenAPI document.
    route.schema = { ...route.schema, hide: true };
    // Pages hold secrets (CSRF tokens, a new API key) and are never compressed (BREACH): every
    // route but the public static assets must be declared with PAGE_ROUTE.
    if (route.compress !== false && !route.url.startsWith(ASSET_PREFIX)) {
      throw new Error(`dashboard route ${route.method} ${route.url} must opt out of compression (PAGE_ROUTE)`);
    }
  });

  await app.register(cookie);
  // Forms only: no JSON or text bodies reach a dashboard route.
  app.removeAllContentTypeParsers();
  await app.register(formbody, { bodyLimit: 16 * 1024 });

  app.decorateRequest('viewer', null);
  app.decorateRequest('viewerClinic', null);
  app.decorateRequest('sessionState', 'none');
  app.decorateRequest('lang', null);
  app.decorateRequest('chosenLang', null);

  app.addHook('onRequest', async (req, reply) => {
    reply.header('content-security-policy', CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'same-origin');
    reply.header('cross-origin-opener-policy', 'same-origin');
    if (req.url.startsWith(ASSET_PREFIX)) return;
    // Read first, so that even the refusal below is in the person's language.
    req.chosenLang = readChosenLang(req, reply, ctx.cookies);
    // API keys are for the API. A request bearing one gets no dashboard page, signed in or not.
    const auth = req.headers.authorization;
    if (auth !== undefined && BEARER_RE.test(auth)) throw new DomainError('api_key_on_dashboard', 'an API key was sent to the dashboard');
    await loadViewer(req, reply);
  });

  app.addHook('preValidation', refuseUnusableInput);

  // Every page of a clinic with a webhook delivery incident carries its banner, until it recovers.
  app.addHook('onSend', async (req, reply, payload) => {
    if (typeof payload !== 'string' || reply.statusCode !== 200 || !req.viewer) return payload;
    if (!String(reply.getHeader('content-type') ?? '').startsWith('text/html') || !payload.includes(MAIN_OPEN)) return payload;
    const asked = field(req.query, 'clinic');
    const clinicId = req.viewer.clinicId ?? (req.viewer.role === 'superadmin' && ID_RE.test(asked) ? asked : null);
    if (clinicId === null) return payload;
    const incidents = await ctx.webhooks.incidents(clinicId);
    if (incidents.length === 0) return payload;
    const url = (path: string) => (req.viewer?.clinicId ? path : `${path}?clinic=${encodeURIComponent(clinicId)}`);
    const { incidentBanner } = await import('./views/webhooks.js');
    return payload.replace(MAIN_OPEN, MAIN_OPEN + incidentBanner(messages(pageLang(req)), incidents, url).value);
  });

  async function loadViewer(req: FastifyRequest, reply: FastifyReply) {
    const token = req.cookies[SESSION_COOKIE];
    if (token === undefined) return;
    const r = await ctx.sessions.resolve(token);
    if (r.status !== 'ok' || !(ROLES as readonly string[]).includes(r.session.role)) {
      req.sessionState = r.status === 'ok' ? 'none' : r.status;
      reply.clearCookie(SESSION_COOKIE, ctx.cookies);
      return;
    }
    const s = r.session;
    req.sessionState = 'ok';
    req.viewer = {
      token: token as string,
      userId: s.user_id,
      email: s.email,
      role: s.role as Role,
      clinicId: s.clinic_id,
      flash: s.flash,
      lang: asLang(s.lang),
    };
    if (s.clinic_id) {
      const clinic = await getClinic(ctx.db, s.clinic_id);
      req.viewerClinic = clinic ?? null;
      req.lang = clinic ? asLang(clinic.language) : null;
    }
  }

  app.get('/assets/:file', async (req, reply) => {
    const asset = assets.get((req.params as { file: string }).file);
    if (!asset) throw new DomainError('not_found', 'no such asset');
    return reply.header('cache-control', 'public, max-age=31536000, immutable').type(asset.type).send(asset.body);
  });

  // Imported on the first page request (a failed import is tried again by the next one).
  const handlers = loadOnce(() => import('./page-handlers.js').then((m) => m.pageHandlers(ctx)));
  for (const [key, guard] of Object.entries(PAGES) as [PageKey, Guard][]) {
    const [method, url] = key.split(' ') as ['GET' | 'POST', string];
    app.route({
      method,
      url,
      ...PAGE_ROUTE,
      ...GUARDS[guard],
      handler: async function (req, reply) {
        return (await handlers()).get(key)!.call(this, req, reply);
      },
    });
  }
  await languageRoutes(app, ctx);

  app.setNotFoundHandler(async (req, reply) => renderErrorPage(new DomainError('not_found', 'no such page'), req, reply));
  app.setErrorHandler(async (err, req, reply) => renderErrorPage(err, req, reply));
}
