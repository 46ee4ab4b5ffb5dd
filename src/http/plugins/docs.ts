// The API reference at /docs: Swagger UI (@fastify/swagger-ui, which ships swagger-ui-dist's files
// in the package) rendering the same OpenAPI document as /api/v1/openapi.json, with "Try it out"
// against this server. Everything it loads comes from this server: no CDN, no outside fonts, no
// validator badge (validatorUrl: false), no telemetry, and a Content-Security-Policy that allows
// this origin only, so a future version of the page that tried an outside origin would be
// blocked (test/browser/docs.test.ts counts outside requests and CSP violations: 0).
// Also /docs/license, the licence the document's info.license points at.
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { DOCS_PATH, LICENSE_PATH, documentFor } from './openapi.js';

/**
 * 'self' only, no inline scripts or styles: the page's scripts and style sheets are files of this
 * server (Swagger UI sets styles through the DOM, which CSP allows), images may be data: URIs.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

export const LICENSE_TEXT = `Clinic Integration API: licence

The API, its documentation and the software that serves them are proprietary: all rights
reserved. No licence to copy, modify or redistribute the software or the documentation is
granted.

An API key gives access to the data of the clinic it belongs to, for that clinic's own
integrations, under the agreement between the clinic and the operator of this service. Keep
keys secret; a clinic owner can revoke them at any time in the dashboard (Settings > API).
`;

/** curl for the request "Try it out" just made (each description holds JavaScript and Python
 * too). A Swagger UI option the plugin's types do not list. */
const SNIPPETS: Record<string, unknown> = { requestSnippetsEnabled: true };

export const docs = fp(
  async (app) => {
    await app.register(swaggerUi, {
      routePrefix: DOCS_PATH,
      staticCSP: DOCS_CSP,
      // Swagger UI would otherwise send the document to validator.swagger.io for a badge.
      validatorUrl: false,
      // The swagger-ui copy of the document (/docs/json, /docs/yaml) is the same as /api/v1/openapi.json.
      transformSpecification: (doc, req) => documentFor(doc, req),
      transformSpecificationClone: false,
      // No logo (BaseLayout has no top bar, and so no box to load another document from). The
      // plugin takes null as "none" (it checks `=== undefined` for its default); its types lack it.
      logo: null as unknown as undefined,
      theme: { title: 'Clinic Integration API reference' },
      uiConfig: {
        layout: 'BaseLayout',
        deepLinking: true,
        displayOperationId: true,
        displayRequestDuration: true,
        ...SNIPPETS,
        // The key stays in the page's memory: never written to localStorage.
        persistAuthorization: false,
        defaultModelsExpandDepth: 0,
        tryItOutEnabled: true,
      },
    });
    app.get(LICENSE_PATH, { schema: { hide: true } }, async (_req, reply) => {
      reply.type('text/plain; charset=utf-8');
      return LICENSE_TEXT;
    });
  },
  { name: 'docs', dependencies: ['openapi'] },
);
