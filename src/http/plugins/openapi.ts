// The OpenAPI 3.1 document of the public API, built by @fastify/swagger from the same route
// schemas that validate and serialize (domain/api-schemas.ts), served unauthenticated. Register
// it before the routes it describes: it collects them as they are added.
import swagger from '@fastify/swagger';
import fp from 'fastify-plugin';

export const OPENAPI_PATH = '/api/v1/openapi.json';

export const openapi = fp(async (app) => {
  await app.register(swagger, {
    // The document describes the public API only (its routes carry tags), never the dashboard.
    hideUntagged: true,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Clinic Integration API',
        version: '1.0.0',
        description: "Read-only access to a clinic's appointments (citas), clients (clientas) and calls answered by its voice assistant (llamadas).",
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <prefix>_<secret>' } } },
      security: [{ bearerAuth: [] }],
    },
  });
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}, { name: 'openapi' });
