// One access-log line per request, with what operators need and no secrets (see ../log.ts).
import fp from 'fastify-plugin';

export const accessLog = fp(async (app) => {
  // Callback style: on every response, no promise to allocate.
  app.addHook('onResponse', (req, reply, done) => {
    req.log.info(
      { req, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, clinic: req.apiKey?.clinicId, key: req.apiKey?.keyId },
      'request',
    );
    done();
  });
}, { name: 'access-log' });
