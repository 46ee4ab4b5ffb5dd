// The API's error responses for the whole app: every error in the catalogue's one shape
// (../error-handler.ts), and unknown paths as 404 not_found. The dashboard's scope sets its own
// HTML handlers over these (admin/errors.ts).
import fp from 'fastify-plugin';
import { errors } from '../../errors.js';
import { errorHandler, sendError } from '../error-handler.js';

export const apiErrors = fp(
  async (app) => {
    app.decorateRequest('apiErrorCode', null);
    app.setErrorHandler(errorHandler);
    app.setNotFoundHandler((req, reply) => sendError(errors.notFound(req.url.split('?')[0] ?? '/'), req, reply));
  },
  { name: 'api-errors' },
);
