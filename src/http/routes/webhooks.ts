// POST, GET and DELETE /api/v1/webhooks: subscriptions by API ("REST hooks", as Zapier and Make
// use them), with the scope webhooks:write. The endpoints are the dashboard's (the same URL
// rules, event types and limit per clinic: services/webhooks/endpoints.ts), of the credential's
// clinic and mode (services/webhooks/subscriptions.ts).
//
// The API's first methods with a body: JSON only (415 otherwise), at most BODY_LIMIT bytes (413),
// checked after authentication, the scope and the rate limit like every request of the scope, so a
// caller without a valid key learns nothing from the body's checks. The body is checked by the one
// checker (domain/checker.ts) against the schema the document publishes, each refusal naming its
// field. An Idempotency-Key makes a retried POST answer the endpoint it made the first time.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import {
  MeQuery,
  WebhookCreateBody,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookEndpointsList,
  WebhookParams,
} from '../../domain/api-schemas.js';
import { compileChecker } from '../../domain/checker.js';
import { EVENT_TYPES } from '../../collections/index.js';
import { describeTextProblem, textProblem } from '../../domain/text.js';
import { DomainError, errors, type ApiError } from '../../errors.js';
import type { AuthenticatedKey } from '../../services/api-keys.js';
import { MAX_ENDPOINTS_PER_CLINIC, type WebhookService } from '../../services/webhooks/endpoints.js';
import { chooseEventTypes, idempotencyKeyHash, subscriptionJson, subscriptionRequestHash } from '../../services/webhooks/subscriptions.js';
import { EXAMPLES_HEADING } from '../code-samples.js';
import { errorHandler, sendError } from '../error-handler.js';
import { compileQueryValidator, type ObjectSchema } from '../query-validator.js';
import { apiResponses, COMMON_HEADERS, noContentResponses, RATE_LIMIT_HEADERS, type StatusDoc } from '../route-responses.js';

export const WEBHOOKS_PATH = '/api/v1/webhooks';
export const WEBHOOK_PATH = '/api/v1/webhooks/:id';
/** The methods each path takes (the method guard's 405 and its Allow). */
export const WEBHOOK_METHODS: Readonly<Record<string, string>> = {
  [WEBHOOKS_PATH]: 'GET, HEAD, POST',
  [WEBHOOK_PATH]: 'GET, HEAD, DELETE',
};
/** A subscription's body is a few hundred bytes; anything near this is not one. */
export const BODY_LIMIT = 16 * 1024;
const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,255}$/;
const DESCRIPTION_MAX = 500;
const FIELDS = ['url', 'eventos', 'descripcion'] as const;

/** What each field must be; a refusal says it is required (when missing) or what it must be. */
const FIELD_RULES: Record<(typeof FIELDS)[number], string> = {
  url: 'an https:// URL of at most 2000 characters',
  eventos: `["*"] for every event type the key may read, or a list of: ${EVENT_TYPES.join(', ')}`,
  descripcion: `text of at most ${DESCRIPTION_MAX} characters, or null`,
};

const checkBody = compileChecker('POST /api/v1/webhooks body', WebhookCreateBody);

/** The body as the route gets it, or the refusal of its first faulty field. */
export function readSubscriptionBody(body: unknown): { value: WebhookCreateBody } | { error: ApiError } {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return { error: errors.invalidParameter('body', 'The body must be a JSON object: {"url": ..., "eventos": [...], "descripcion": ...}') };
  const r = checkBody(body);
  if (r.unknown.length > 0) return { error: errors.unknownParameter(r.unknown[0]!, FIELDS) };
  // A list of strings failing only the enum names an unknown event type: chooseEventTypes, in the
  // route, refuses it naming the types that are not ones (the same words as for ["*", ...]).
  const faulty = FIELDS.find((f) => r.faults.has(f) && !(f === 'eventos' && onlyUnknownTypes(r.faults.get(f)!)));
  if (faulty !== undefined) {
    const missing = r.faults.get(faulty)!.has('required');
    return { error: errors.invalidParameter(faulty, `${faulty} ${missing ? 'is required:' : 'must be'} ${FIELD_RULES[faulty]}`) };
  }
  const value = body as WebhookCreateBody;
  for (const [name, text, max] of [
    ['url', value.url, 2000],
    ['descripcion', value.descripcion ?? '', DESCRIPTION_MAX],
  ] as const) {
    const problem = textProblem(text, max);
    if (problem) return { error: errors.invalidParameter(name, describeTextProblem(name, problem, max)) };
  }
  return { value };
}

const onlyUnknownTypes = (faults: ReadonlySet<string>) => faults.size === 1 && faults.has('enum');

function authenticated(req: FastifyRequest): AuthenticatedKey {
  const k = req.apiKey;
  if (!k) throw new Error('route reached without an authenticated key');
  return k;
}

/** The use-cases' refusals that only this part of the API meets, in the API's catalogue. */
function refusal(err: unknown): unknown {
  if (!(err instanceof DomainError)) return err;
  if (err.reason === 'conflict' || err.reason === 'plan_not_eligible') return errors.conflict(err.message, err.details.field);
  return err;
}

const CONFLICT: Record<number, StatusDoc> = {
  409: {
    description:
      `conflict: the clinic has ${MAX_ENDPOINTS_PER_CLINIC} webhook endpoints already (the most), or the Idempotency-Key was used ` +
      'in the last 24 hours with another body, or the endpoint it created was deleted since',
    headers: [...COMMON_HEADERS, ...RATE_LIMIT_HEADERS],
  },
};
const BODY_ERRORS: Record<number, StatusDoc> = {
  413: { description: `payload_too_large: the body is over ${BODY_LIMIT} bytes`, headers: [...COMMON_HEADERS, ...RATE_LIMIT_HEADERS] },
  415: {
    description: 'unsupported_media_type: no body, or not sent as application/json',
    headers: [...COMMON_HEADERS, ...RATE_LIMIT_HEADERS],
  },
};
const NOT_FOUND: Record<number, StatusDoc> = {
  404: {
    description: "not_found: no webhook endpoint with this id in the API key's clinic",
    headers: [...COMMON_HEADERS, ...RATE_LIMIT_HEADERS],
  },
};
const AUTH = '-H "Authorization: Bearer $CLINIC_API_KEY"';
/** Each operation's example (curl), for its description and /llms.txt. */
export const WEBHOOK_CURL: Record<string, string> = {
  createWebhook: [
    `curl -X POST ${AUTH} -H "Content-Type: application/json" -H "Idempotency-Key: $(uuidgen)" \\`,
    `  -d '{"url": "https://hooks.example.com/clinic", "eventos": ["cita.creada"], "descripcion": "Zapier"}' \\`,
    '  "$CLINIC_API_URL/api/v1/webhooks"',
  ].join('\n'),
  listWebhooks: `curl ${AUTH} "$CLINIC_API_URL/api/v1/webhooks"`,
  getWebhook: `curl ${AUTH} "$CLINIC_API_URL/api/v1/webhooks/$WEBHOOK_ID"`,
  deleteWebhook: `curl -X DELETE ${AUTH} "$CLINIC_API_URL/api/v1/webhooks/$WEBHOOK_ID"`,
};
const example = (op: string) => `\n\n${EXAMPLES_HEADING}\n\n\`\`\`sh\n${WEBHOOK_CURL[op]}\n\`\`\``;

export async function webhookRoutes(fastify: FastifyInstance, opts: { webhooks: WebhookService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const service = opts.webhooks;
  // JSON only: the text parser goes, so any other type is Fastify's 415 (answered below).
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'body') return readSubscriptionBody;
    if (httpPart === 'querystring' || httpPart === 'params') return compileQueryValidator(schema as ObjectSchema);
    // Documented for the reference; the one header read (Idempotency-Key) is checked by the route.
    if (httpPart === 'headers') return () => true;
    throw new Error(`no validator for ${httpPart}`);
  });
  // A POST without a body (and so without a type) is not JSON either: Fastify leaves it unparsed.
  app.addHook('preValidation', async (req) => {
    if (req.method === 'POST' && req.headers['content-type'] === undefined) throw errors.unsupportedMediaType('no body');
  });
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(errors.payloadTooLarge(BODY_LIMIT), req, reply);
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      const type = req.headers['content-type'];
      return sendError(errors.unsupportedMediaType(type ? `Content-Type ${JSON.stringify(type)}` : 'no Content-Type'), req, reply);
    }
    return errorHandler(refusal(err), req, reply);
  });

  app.post(
    WEBHOOKS_PATH,
    {
      bodyLimit: BODY_LIMIT,
      config: { scope: 'webhooks:write' },
      schema: {
        operationId: 'createWebhook',
        tags: ['webhooks'],
        summary: 'Subscribe a URL to events (a webhook endpoint)',
        description:
          'Creates a webhook endpoint of the clinic: each new event of the chosen types is POSTed to url, signed (Standard Webhooks ' +
          '1.0). The answer holds the signing secret, shown this once. eventos: ["*"] for every type the key may ' +
          'read, or a list (a type of a collection the key may not read is 403 insufficient_scope); deliveries carry contact details ' +
          'only when the key has contacto:read. url must be https:// and resolve to public addresses (400 invalid_parameter naming url ' +
          `and why). At most ${MAX_ENDPOINTS_PER_CLINIC} endpoints per clinic (409 conflict). Send an Idempotency-Key header (any ` +
          'text of 1 to 255 visible ASCII characters, a UUID for instance) to retry safely: the same key within 24 hours answers the ' +
          'same endpoint and secret again and creates nothing. Body: JSON, at most 16 KB.' +
          example('createWebhook'),
        headers: {
          type: 'object',
          properties: {
            'idempotency-key': {
              type: 'string',
              description: 'Any text of 1 to 255 visible ASCII characters; the same key within 24 hours answers the first answer again',
            },
          },
        },
        body: WebhookCreateBody,
        response: apiResponses(
          { body: WebhookEndpointCreated, status: 201, description: 'The endpoint, with its signing secret (shown this once)' },
          { ...CONFLICT, ...BODY_ERRORS },
        ),
      },
    },
    async (req, reply) => {
      const k = authenticated(req);
      const raw = req.headers['idempotency-key'];
      if (raw !== undefined && (Array.isArray(raw) || !IDEMPOTENCY_KEY_RE.test(raw)))
        throw errors.invalidParameter(
          'Idempotency-Key',
          'Idempotency-Key must be one value of 1 to 255 visible ASCII characters (a UUID, say)',
        );
      const body = req.body;
      const descripcion = body.descripcion?.trim() || null;
      const types = chooseEventTypes(body.eventos, k.scopeBits);
      const created = await service.create({
        clinicId: k.clinicId,
        url: body.url,
        eventTypes: types,
        createdBy: null,
        description: descripcion,
        createdByKey: k.app ? null : k.keyId,
        createdByGrant: k.app ? k.app.grantId : null,
        contact: k.scopes.includes('contacto:read'),
        idempotency:
          raw === undefined
            ? undefined
            : {
                credentialId: k.keyId,
                keyHash: idempotencyKeyHash(raw),
                requestHash: subscriptionRequestHash({ url: body.url.trim(), eventos: body.eventos, descripcion }),
              },
      });
      return reply.code(201).send({ ...subscriptionJson(created.endpoint, k.mode, k.timezone), secret: created.secret });
    },
  );

  app.get(
    WEBHOOKS_PATH,
    {
      config: { scope: 'webhooks:write' },
      schema: {
        operationId: 'listWebhooks',
        tags: ['webhooks'],
        summary: "List the clinic's webhook endpoints",
        description:
          "Every webhook endpoint of the API key's clinic in the key's mode, also those made in the dashboard, oldest first; never a " +
          'secret. Takes no parameters.' +
          example('listWebhooks'),
        querystring: MeQuery,
        response: apiResponses({ body: WebhookEndpointsList, description: 'The endpoints' }),
      },
    },
    async (req) => {
      const k = authenticated(req);
      const rows = await service.list(k.clinicId);
      return { webhooks: rows.map((e) => subscriptionJson(e, k.mode, k.timezone)) };
    },
  );

  app.get(
    WEBHOOK_PATH,
    {
      config: { scope: 'webhooks:write' },
      schema: {
        operationId: 'getWebhook',
        tags: ['webhooks'],
        summary: 'One webhook endpoint, by its id',
        description:
          'The endpoint as the list shows it (never its secret). An id the clinic does not have is 404 not_found.' + example('getWebhook'),
        params: WebhookParams,
        querystring: MeQuery,
        response: apiResponses({ body: WebhookEndpoint, description: 'The endpoint' }, NOT_FOUND),
      },
    },
    async (req) => {
      const k = authenticated(req);
      const e = await service.get(k.clinicId, req.params.id);
      if (!e) throw errors.webhookNotFound(req.params.id);
      return subscriptionJson(e, k.mode, k.timezone);
    },
  );

  app.delete(
    WEBHOOK_PATH,
    {
      config: { scope: 'webhooks:write' },
      schema: {
        operationId: 'deleteWebhook',
        tags: ['webhooks'],
        summary: 'Unsubscribe: delete a webhook endpoint',
        description:
          'Deletes the endpoint and its delivery log; no delivery to it starts after this answer, on any server. An id the clinic ' +
          'does not have (or one deleted already) is 404 not_found.' +
          example('deleteWebhook'),
        params: WebhookParams,
        querystring: MeQuery,
        response: noContentResponses('Deleted', NOT_FOUND),
      },
    },
    async (req, reply) => {
      const k = authenticated(req);
      if (!(await service.delete(k.clinicId, req.params.id))) throw errors.webhookNotFound(req.params.id);
      return reply.code(204).send();
    },
  );
}
