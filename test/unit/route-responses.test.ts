// apiResponses() for a route's `response`, seen through the OpenAPI document a real Fastify app
// with the openapi plugin makes of it: the 200 and the error statuses, an extra status without a
// body (as a 304 would be), and each header's `required` lifted from `x-required`.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { Me } from '../../src/domain/api-schemas.js';
import { openapi } from '../../src/http/plugins/openapi.js';
import { apiResponses, COMMON_HEADERS, optional, RATE_LIMIT_HEADERS } from '../../src/http/route-responses.js';

describe('apiResponses', () => {
  it('documents the 200, the error statuses and extra ones, with their headers', async () => {
    const app = Fastify({ logger: false });
    await app.register(openapi, { oauthIssuer: null });
    app.get(
      '/api/v1/probe',
      {
        schema: {
          operationId: 'getProbe',
          tags: ['me'],
          summary: 'A probe',
          description: 'A probe route',
          response: apiResponses(
            { body: Me, description: 'ok', headers: optional(['Retry-After']) },
            {
              304: { description: 'Not modified', headers: [...COMMON_HEADERS, ...RATE_LIMIT_HEADERS], body: null },
            },
          ),
        },
      },
      async () => undefined as never,
    );
    await app.ready();
    const doc = app.swagger() as Record<string, any>;
    const responses = doc['paths']['/api/v1/probe']['get']['responses'];
    expect(Object.keys(responses)).toEqual(['200', '304', '400', '401', '429', '500', '503']);
    expect(responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Me' });
    expect(responses['200'].headers['Retry-After'].required).toBe(false);
    expect(responses['200'].headers['RateLimit'].required).toBe(true);
    expect(responses['304'].content).toBeUndefined();
    expect(Object.keys(responses['304'].headers)).toEqual(['X-Request-Id', 'Cache-Control', 'RateLimit-Policy', 'RateLimit']);
    expect(responses['429'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorResponse' });
    expect(JSON.stringify(doc)).not.toContain('x-required');
    await app.close();
  });
});
