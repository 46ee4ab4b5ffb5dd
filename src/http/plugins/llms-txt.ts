// GET /llms.txt: the API summarised for AI tools (../llms-txt.ts), written once from the OpenAPI
// document when first asked (the document is complete only once the app is ready).
import fp from 'fastify-plugin';
import { llmsTxt } from '../llms-txt.js';
import { SAMPLES } from '../routes/v1.js';
import { WEBHOOK_CURL } from '../routes/webhooks.js';
import { DOCS_PATH, LICENSE_PATH, LLMS_PATH, OPENAPI_PATH } from './openapi.js';

export interface LlmsTxtOptions {
  limits: { rps: number; burst: number; authFailRps: number; authFailBurst: number };
  keyPrefix: string;
}

export const llmsTxtRoute = fp(
  async (app, opts: LlmsTxtOptions) => {
    let text: string | undefined;
    app.get(LLMS_PATH, { schema: { hide: true } }, async (_req, reply) => {
      text ??= llmsTxt({
        doc: app.swagger(),
        samples: SAMPLES,
        curl: WEBHOOK_CURL,
        limits: opts.limits,
        keyPrefix: opts.keyPrefix,
        links: { docs: DOCS_PATH, openapi: OPENAPI_PATH, license: LICENSE_PATH },
      });
      reply.type('text/plain; charset=utf-8');
      return text;
    });
  },
  { name: 'llms-txt', dependencies: ['openapi'] },
);
