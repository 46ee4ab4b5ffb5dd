// The API's paths only exist for GET and HEAD: any other method is a 405 with Allow, decided by
// the method alone, before the body is parsed and before authentication (POST with a malformed
// body, PROPFIND, QUERY ...), so it reveals nothing about data. That holds for a record's path too
// (/api/v1/citas/<anything>), whatever the id: a DELETE of a malformed id is a 405, not a 400.
// The MCP server's path exists for POST only (stateless: no stream to GET, no session to DELETE);
// the webhooks' for the methods each takes (routes/webhooks.ts).
import fp from 'fastify-plugin';
import { errors } from '../../errors.js';
import { MCP_PATH } from '../mcp/paths.js';
import { API_PATHS, RECORD_PATHS } from '../routes/v1.js';
import { WEBHOOK_METHODS, WEBHOOKS_PATH } from '../routes/webhooks.js';
import { DOCS_PATH, LICENSE_PATH, LLMS_PATH, OPENAPI_PATH } from './openapi.js';

const ALLOW = 'GET, HEAD';
const READ_ONLY_PATHS = new Set<string>([...API_PATHS, OPENAPI_PATH, DOCS_PATH, LICENSE_PATH, LLMS_PATH]);
/** The collections whose records have a path of their own: `/api/v1/citas/:id` -> `/api/v1/citas`. */
const RECORD_PARENTS = new Set<string>(RECORD_PATHS.map((p) => p.slice(0, p.lastIndexOf('/'))));

/**
 * A path of the API's read-only routes: a fixed one, or one record's (one segment after its
 * collection; an empty one too, which GET answers as a malformed id).
 */
export function isReadOnlyPath(path: string): boolean {
  if (READ_ONLY_PATHS.has(path)) return true;
  const slash = path.lastIndexOf('/');
  return slash > 0 && RECORD_PARENTS.has(path.slice(0, slash));
}

/** The methods a webhooks path takes (the list, or one endpoint), or undefined for another path. */
function webhookMethods(path: string): string | undefined {
  if (path === WEBHOOKS_PATH) return WEBHOOK_METHODS[WEBHOOKS_PATH];
  const rest = path.slice(WEBHOOKS_PATH.length);
  return rest.startsWith('/') && !rest.includes('/', 1) ? WEBHOOK_METHODS[`${WEBHOOKS_PATH}/:id`] : undefined;
}

export const methodGuard = fp(
  async (app) => {
    // Callback style: on every request's path, no promise to allocate.
    app.addHook('onRequest', (req, _reply, done) => {
      const path = req.url.split('?')[0] ?? '';
      if (path === MCP_PATH) return done(req.method === 'POST' ? undefined : errors.methodNotAllowed(req.method, 'POST'));
      if (path.startsWith(WEBHOOKS_PATH)) {
        const allow = webhookMethods(path);
        if (allow !== undefined)
          return done(allow.split(', ').includes(req.method) ? undefined : errors.methodNotAllowed(req.method, allow));
      }
      const refused = req.method !== 'GET' && req.method !== 'HEAD' && isReadOnlyPath(path);
      done(refused ? errors.methodNotAllowed(req.method, ALLOW) : undefined);
    });
  },
  { name: 'method-guard' },
);
