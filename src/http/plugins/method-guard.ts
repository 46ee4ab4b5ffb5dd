// The API's paths only exist for GET and HEAD: any other method is a 405 with Allow, decided by
// the method alone, before the body is parsed and before authentication (POST with a malformed
// body, PROPFIND, QUERY ...), so it reveals nothing about data.
import fp from 'fastify-plugin';
import { errors } from '../../errors.js';
import { API_PATHS } from '../routes/v1.js';
import { DOCS_PATH, LICENSE_PATH, LLMS_PATH, OPENAPI_PATH } from './openapi.js';

const ALLOW = 'GET, HEAD';
const READ_ONLY_PATHS = new Set<string>([...API_PATHS, OPENAPI_PATH, DOCS_PATH, LICENSE_PATH, LLMS_PATH]);

export const methodGuard = fp(
  async (app) => {
    // Callback style: on every request's path, no promise to allocate.
    app.addHook('onRequest', (req, _reply, done) => {
      const refused = req.method !== 'GET' && req.method !== 'HEAD' && READ_ONLY_PATHS.has(req.url.split('?')[0] ?? '');
      done(refused ? errors.methodNotAllowed(req.method, ALLOW) : undefined);
    });
  },
  { name: 'method-guard' },
);
