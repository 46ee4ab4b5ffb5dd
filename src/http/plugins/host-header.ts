// HTTP/1.1 requires a Host header (RFC 9112, section 3.2). Node's own check (the http server's
// requireHostHeader) answers a request without one with a bare 400 and an empty body, before
// Fastify sees it; it is turned off in connections.ts and made here instead, so that the answer
// is the API's error shape (`malformed_request`, with a request id), as for every other request
// Node's parser refuses (client-errors.ts), and the connection is closed after it. HTTP/1.0 has
// no such rule.
import fp from 'fastify-plugin';
import { errors } from '../../errors.js';

export const hostHeader = fp(
  async (app) => {
    // Callback style: on every request's path, no promise to allocate.
    app.addHook('onRequest', (req, reply, done) => {
      if (req.headers.host !== undefined || req.raw.httpVersion !== '1.1') return done();
      reply.header('connection', 'close');
      done(errors.malformedRequest('no Host header; HTTP/1.1 requires one'));
    });
  },
  { name: 'host-header' },
);
