// The dashboard's page handlers, imported by the plugin (index.ts) on the first page request:
// every routes-*.ts module declares its handlers here, and each must be one of PAGES (pages.ts),
// which the plugin registered at start with its guard. A page declared without a handler, or a
// handler declared twice or for no page, fails that first request (and so every dashboard test).
import type { RouteHandlerMethod } from 'fastify';
import type { AdminContext } from './context.js';
import { PAGES, type PageHandlers, type PageKey } from './pages.js';
import { authRoutes } from './routes-auth.js';
import { exportRoutes } from './routes-export.js';
import { keyChangeRoutes } from './routes-key-changes.js';
import { keyRoutes } from './routes-keys.js';
import { logRoutes } from './routes-logs.js';
import { oauthRoutes } from './routes-oauth.js';
import { webhookRoutes } from './routes-webhooks.js';

export async function pageHandlers(ctx: AdminContext): Promise<ReadonlyMap<PageKey, RouteHandlerMethod>> {
  const found = new Map<PageKey, RouteHandlerMethod>();
  const declare = (method: 'GET' | 'POST') => (url: string, handler: RouteHandlerMethod) => {
    const key = `${method} ${url}` as PageKey;
    if (!Object.hasOwn(PAGES, key)) throw new Error(`dashboard page ${key} is not declared in admin/pages.ts`);
    if (found.has(key)) throw new Error(`dashboard page ${key} has two handlers`);
    found.set(key, handler);
  };
  const pages: PageHandlers = { get: declare('GET'), post: declare('POST') };
  for (const routes of [authRoutes, keyRoutes, keyChangeRoutes, webhookRoutes, logRoutes, exportRoutes, oauthRoutes]) {
    await routes(pages, ctx);
  }
  const missing = Object.keys(PAGES).filter((key) => !found.has(key as PageKey));
  if (missing.length > 0) throw new Error(`dashboard pages without a handler: ${missing.join(', ')}`);
  return found;
}
