// What every dashboard route shares: dependencies, the signed-in viewer and the small helpers
// that turn a request into a page. Refusals are DomainErrors, rendered by errors.ts.
import type {} from '@fastify/compress'; // the `compress` route option
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { DB } from '../db/schema.js';
import type { Role } from '../domain/records.js';
import type { Clinic } from '../services/accounts.js';
import type { KeyService } from '../services/api-keys.js';
import type { AppGrants } from '../services/oauth/grants.js';
import type { AuthorizationServer } from '../services/oauth/server.js';
import type { WebhookService } from '../services/webhooks/endpoints.js';
import type { ExportJobs } from '../services/exports/jobs.js';
import type { UsageCounter } from '../services/usage.js';
import type { Html } from './html.js';
import type { Lang } from './locales/messages.js';
import { resolveLang } from './negotiate.js';
import type { ClientasSearch } from '../services/clientas-search/search.js';
import type { Sessions } from '../services/sessions.js';
import type { Sandboxes } from '../services/sandbox.js';
import type { CookieOptions } from './session.js';
import type { Semaphore, SignInLimiters } from './throttle.js';

export interface Viewer {
  /** the session cookie's token: the CSRF secret and the flash key; never stored */
  token: string;
  userId: string;
  email: string;
  role: Role;
  /** null for a superadmin */
  clinicId: string | null;
  flash: string | null;
  /** the language the session was started in (the sign-in page's, when someone asked for it), or null */
  lang: Lang | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    viewer: Viewer | null;
    /** the viewer's own clinic (owners and staff), loaded with the session */
    viewerClinic: Clinic | null;
    sessionState: 'ok' | 'expired' | 'none';
    /** the language of the clinic in view, once known */
    lang: Lang | null;
    /** the person's explicit choice (the language cookie), validated; null when none */
    chosenLang: Lang | null;
  }
}

export interface AdminContext {
  db: Kysely<DB>;
  keys: KeyService;
  /** the grants owners gave to apps (Connected apps) */
  appGrants: AppGrants;
  /** the OAuth authorization server (the consent page); null without OAUTH_ISSUER */
  oauth: AuthorizationServer | null;
  webhooks: WebhookService;
  usage: UsageCounter;
  config: Config;
  now: () => number;
  sessions: Sessions;
  /** the client search (the runtime's, shared with the API): the request log's client filter */
  clientasSearch: ClientasSearch;
  /** the clinic exports made in the background (Settings > API > Export) */
  exports: ExportJobs;
  /** test mode's sandboxes: the request log's test entries, the sandbox's reset, test webhook endpoints */
  sandboxes: Sandboxes;
  /** sign-in buckets: see throttle.ts */
  limiters: SignInLimiters;
  /** bounds the scrypt checks running at once */
  verifySlots: Semaphore;
  /** every dashboard cookie is set and cleared with these */
  cookies: CookieOptions;
}

/**
 * Options for every route that renders a page. Pages carry secrets (CSRF tokens, the one-time
 * API key) next to text an attacker may influence, so they are never compressed (BREACH); the
 * plugin refuses to start if a route other than the static assets lacks this.
 */
export const PAGE_ROUTE = { compress: false } as const;

/** The page's language (precedence in negotiate.ts); `page` is a validated `?lang=` for this page only. */
export function pageLang(req: FastifyRequest, page: Lang | null = null): Lang {
  return resolveLang({
    page,
    chosen: req.chosenLang,
    session: req.viewer?.lang ?? null,
    clinic: req.lang,
    acceptLanguage: req.headers['accept-language'],
  });
}

/** Where the language switch comes back to: this page if a GET can show it again, else /dashboard. */
export function herePath(req: FastifyRequest): string {
  return req.method === 'GET' ? req.url : '/dashboard';
}

export function sendPage(reply: FastifyReply, status: number, page: Html): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page.value);
}

/** The string value of a form or query field; anything else (absent, repeated) is ''. */
export function field(source: unknown, name: string): string {
  if (source === null || typeof source !== 'object') return '';
  const v = (source as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : '';
}

/** Every value of a form field that may repeat (checkboxes). */
export function fields(source: unknown, name: string): string[] {
  if (source === null || typeof source !== 'object') return [];
  const v = (source as Record<string, unknown>)[name];
  if (typeof v === 'string') return [v];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

export function canManageKeys(viewer: Viewer, clinicId: string): boolean {
  return viewer.role === 'superadmin' || (viewer.role === 'owner' && viewer.clinicId === clinicId);
}
