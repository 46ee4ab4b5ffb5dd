// Every page of the dashboard (under /dashboard), declared once: its method and URL, and who may
// reach it. The plugin (index.ts) registers them all at start, with their guards; the handlers
// (routes-*.ts, with their views and catalogues) are imported on the first page request
// (page-handlers.ts). A process that only serves the API never holds them: the dashboard is about
// half a mebibyte of heap, and every megabyte held from the start also raises the heap V8 lets grow
// under load before its first full collection (docs/benchmarks.md).
import type { RouteHandlerMethod } from 'fastify';

/** Who reaches a page: anyone (it checks for itself), a signed-in person, or one with the form's CSRF token too. */
export type Guard = 'open' | 'viewer' | 'viewer+csrf';

export const PAGES = {
  // routes-auth.ts
  'GET /': 'open',
  'GET /sign-in': 'open',
  'POST /sign-in': 'open',
  'POST /sign-out': 'open',
  // routes-keys.ts
  'GET /settings/api': 'viewer',
  'POST /settings/api/keys': 'viewer+csrf',
  'POST /settings/api/sandbox/reset': 'viewer+csrf',
  'GET /settings/api/keys/:id/revoke': 'viewer',
  'POST /settings/api/keys/:id/revoke': 'viewer+csrf',
  // routes-key-changes.ts
  'GET /settings/api/keys/:id/edit': 'viewer',
  'POST /settings/api/keys/:id/edit': 'viewer+csrf',
  'GET /settings/api/keys/:id/roll': 'viewer',
  'POST /settings/api/keys/:id/roll': 'viewer+csrf',
  // routes-webhooks.ts
  'GET /settings/api/webhooks': 'viewer',
  'POST /settings/api/webhooks': 'viewer+csrf',
  'GET /settings/api/webhooks/:id': 'viewer',
  'GET /settings/api/webhooks/:id/deliveries/:delivery': 'viewer',
  'POST /settings/api/webhooks/:id/test': 'viewer+csrf',
  'POST /settings/api/webhooks/:id/deliveries/:delivery/resend': 'viewer+csrf',
  'POST /settings/api/webhooks/:id/enable': 'viewer+csrf',
  'POST /settings/api/webhooks/:id/disable': 'viewer+csrf',
  'GET /settings/api/webhooks/:id/delete': 'viewer',
  'POST /settings/api/webhooks/:id/delete': 'viewer+csrf',
  // routes-logs.ts
  'GET /settings/api/logs': 'viewer',
  'GET /settings/api/logs/access': 'viewer',
  'POST /settings/api/logs/access/export': 'viewer+csrf',
  'GET /settings/api/logs/:id': 'viewer',
  // routes-export.ts
  'GET /settings/api/export': 'viewer',
  'POST /settings/api/export': 'viewer+csrf',
  'GET /settings/api/export/:id/file': 'viewer',
  // routes-oauth.ts (the consent page signs in first, then comes back: it checks for itself)
  'GET /oauth/consent': 'open',
  'POST /oauth/consent': 'viewer+csrf',
  'GET /settings/api/apps': 'viewer',
  'GET /settings/api/apps/:id/disconnect': 'viewer',
  'POST /settings/api/apps/:id/disconnect': 'viewer+csrf',
} as const satisfies Record<string, Guard>;

export type PageKey = keyof typeof PAGES;

/** The URLs of PAGES for one method: a handler for a URL not declared above is a compile error. */
export type PageUrl<M extends 'GET' | 'POST'> = PageKey extends infer K ? (K extends `${M} ${infer U}` ? U : never) : never;

/** What the routes-*.ts modules declare their handlers on (page-handlers.ts records them). */
export interface PageHandlers {
  get(url: PageUrl<'GET'>, handler: RouteHandlerMethod): void;
  post(url: PageUrl<'POST'>, handler: RouteHandlerMethod): void;
}
