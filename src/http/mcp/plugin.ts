// POST /mcp: the Model Context Protocol server, on the Streamable HTTP transport, stateless (no
// session: each request stands alone). Registered inside the API scope (../plugins/api.ts), so
// the API's own hooks run for it as for every REST route: the key's authentication, its rate
// limit and RateLimit headers, the usage counts, the access log (and every hook added there
// later: address restrictions, the request log). Only the transport is the SDK's: its web-standard
// transport is given a Request and returns a Response, which goes out through Fastify's reply, so
// the common headers, compression and the onResponse hooks apply to it like to any answer.
//
// What an MCP client sees before the protocol is reached, in the API's JSON error shape: 401
// without a valid key (WWW-Authenticate: Bearer), 403 for a tool call outside the key's scopes
// (./step-up.ts), 429 when its address failed authentication too often, 405 for a method other
// than POST (../plugins/method-guard.ts), 400 for a body too large.
// The key's own rate limit is answered inside the protocol when the request is tool calls (a
// tool result saying when to retry, which an assistant can act on); any other request over the
// limit (initialize, tools/list) is the API's 429. A body that is not JSON, or not JSON-RPC, is
// the transport's own JSON-RPC error (400, -32700), as MCP clients expect. A JSON-RPC batch is
// refused whole (400, -32600) before anything in it runs: one POST is one request of the key's
// rate limit, usage and request log, so a batch would run up to a hundred tool calls for the price
// of one. MCP 2025-06-18 removed batches; 2025-03-26 allowed them, but no MCP client sends them.
import fs from 'node:fs';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { loadOnce, memo } from '../../memo.js';
import { sendError, toApiError } from '../error-handler.js';
import { oauthChallenge, type TokenAuth } from '../auth.js';
import { requestOrigin } from '../plugins/openapi.js';
import { MCP_PATH } from './paths.js';
import type { ToolCall, ToolEnv } from './tools.js';

export { MCP_PATH };

/** The package's version, for the server's identity in `initialize` (from package.json, as the CLI reads it). */
const VERSION = (JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * The challenge of a 401 on /mcp. Its one place: OAuth (when the service is an authorization
 * server) adds `resource_metadata="<origin>/.well-known/oauth-protected-resource/mcp"` here.
 */
export function mcpChallenge(_req: FastifyRequest): string {
  return 'Bearer realm="api"';
}

/**
 * The MCP SDK (with its zod and the apps extension) and the server built on it, loaded at the
 * first request to /mcp, not at start: they hold about 11 MiB of heap that a service whose
 * clients only use REST never needs (the peak memory target is the REST page's). The first call
 * waits for the load once (about a tenth of a second); a load that failed is tried again.
 */
type Protocol = typeof import('./server.js') &
  typeof import('./step-up.js') &
  Pick<typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), 'WebStandardStreamableHTTPServerTransport'>;
const loadProtocol = loadOnce(async (): Promise<Protocol> => {
  const [server, stepUp, { WebStandardStreamableHTTPServerTransport }] = await Promise.all([
    import('./server.js'),
    import('./step-up.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ]);
  return { ...server, ...stepUp, WebStandardStreamableHTTPServerTransport };
});

/** The request headers the transport reads (never Authorization: the key stays out of the SDK). */
const FORWARDED = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'] as const;
/** The transport wants an absolute URL; it only reports it to handlers, which do not read it. */
const TRANSPORT_URL = `http://localhost${MCP_PATH}`;

function webRequest(req: FastifyRequest, body: string | null): Request {
  const headers = new Headers();
  for (const name of FORWARDED) {
    const v = req.headers[name];
    if (typeof v === 'string') headers.set(name, v);
  }
  return new Request(TRANSPORT_URL, { method: 'POST', headers, body });
}

/**
 * The transport's Request when the body is given to it parsed. It then reads only the Request's
 * method, URL and headers, never a body (there is none), so one Request serves every call with
 * the same forwarded headers: a client sends the same ones on every call, and building a web
 * Request and its Headers per call was a few µs of each (profiled). The key is the headers'
 * values (absent: NUL, which no header value can hold), one per line.
 */
const bodilessRequest = memo(100, (key: string): Request => {
  const headers = new Headers();
  key.split('\n').forEach((v, i) => {
    if (v !== '\0') headers.set(FORWARDED[i]!, v);
  });
  return new Request(TRANSPORT_URL, { method: 'POST', headers, body: null });
});

function headersKey(req: FastifyRequest): string {
  let key = '';
  for (let i = 0; i < FORWARDED.length; i++) {
    const v = req.headers[FORWARDED[i]!];
    key += (i === 0 ? '' : '\n') + (typeof v === 'string' ? v : '\0');
  }
  return key;
}

/**
 * The transport's answer as the bytes it holds: its text would be decoded here and encoded again
 * on the socket (measured: the largest cost of a page's tool call after its queries), and
 * arrayBuffer() copies them once more. The body is one chunk (the transport encodes its JSON at
 * once): it is sent without a copy.
 */
async function bytesOf(res: Response): Promise<Buffer> {
  if (res.body === null) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/** The answer to a JSON-RPC batch: JSON-RPC's Invalid Request, id null (it answers no one message). */
const BATCH_REFUSED = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: {
    code: -32600,
    message:
      'Invalid Request: JSON-RPC batches are not accepted (MCP 2025-06-18 removed them). ' +
      'Send each message in its own POST to /mcp; nothing in this batch was run.',
  },
});

/** The body as JSON, or null when it is not JSON (the transport then answers its own parse error). */
function parseBody(text: string): { value: unknown } | null {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return null;
  }
}

export async function mcpRoutes(scope: FastifyInstance, env: ToolEnv & { now: () => number; oauth: TokenAuth | null }) {
  // The body as text, whatever its type: the transport checks the media type and the JSON-RPC
  // itself (415, 400 -32700), where Fastify's parsers would answer in the API's shape.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  scope.setErrorHandler((err: FastifyError, req, reply) => {
    let e = toApiError(err, req);
    // With OAuth on, the challenge names /mcp's resource metadata (RFC 9728), as the MCP
    // authorization spec asks: a client discovers the authorization server from it.
    if (e.statusCode === 401)
      e = env.oauth
        ? oauthChallenge(e, env.oauth.resources, req.url)
        : new ApiError(e.code, e.message, e.param, { ...e.headers, 'www-authenticate': mcpChallenge(req) });
    return sendError(e, req, reply);
  });

  // scope: null: /mcp itself needs none; each tool needs its own (./tools.ts mayUse: tools/list
  // shows a key only those its scopes allow, and a call of another is a 403, ./step-up.ts).
  scope.post(
    MCP_PATH,
    { config: { scope: null, answersRateLimit: true }, schema: { hide: true } },
    async (req: FastifyRequest, reply: FastifyReply) => {
      const key = req.apiKey;
      if (!key) throw new Error('/mcp reached without an authenticated key');
      const { malformedToolCall, mcpServer, onlyToolCalls, outsideScopes, visibleTools, WebStandardStreamableHTTPServerTransport } =
        await loadProtocol();
      const text = typeof req.body === 'string' ? req.body : '';
      const body = parseBody(text);
      if (body && Array.isArray(body.value)) return reply.code(400).type('application/json').send(BATCH_REFUSED);
      // Over the rate limit, only tool calls are answered (each with the refusal); anything else is the 429.
      const limited = req.rateLimitRefusal;
      if (limited && !(body && onlyToolCalls(body.value))) throw limited;
      // A tool outside the key's or token's scopes: HTTP 403 with the step-up challenge (./step-up.ts).
      const outside = body ? outsideScopes(body.value, key, env.oauth?.resources ?? null) : null;
      if (outside) throw outside;

      const call: ToolCall = {
        req,
        key,
        ctx: { clinicId: key.clinicId, timezone: key.timezone, currency: key.currency },
        clinicName: key.clinicName,
        nowMs: env.now(),
        origin: requestOrigin(req) ?? '',
        visible: [],
      };
      call.visible = visibleTools(call);
      const server = mcpServer(call, env, VERSION, limited);
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      // Closed once the answer is written: closing aborts the handlers the server still counts as
      // running, and it counts a handler until just after its answer is handed to the transport,
      // so closing at once made an AbortError and its stack for every call (measured: a fifth of
      // the SDK's cost per call, and objects that lived long enough to need full collections).
      reply.raw.once('close', () => {
        server.close().catch((err: unknown) => req.log.error({ err }, 'closing an MCP server failed'));
      });
      await server.connect(transport);
      // A tools/call of the wrong shape is refused here, after the transport's own checks of the
      // request and before the SDK parses it (which would answer a raw -32603).
      const deliver = transport.onmessage!;
      transport.onmessage = (message, extra) => {
        const refused = malformedToolCall(message, call);
        if (refused) transport.send(refused).catch((err: unknown) => req.log.error({ err }, 'answering an MCP tool call failed'));
        else deliver(message, extra);
      };
      const res = await (body
        ? transport.handleRequest(bodilessRequest(headersKey(req)), { parsedBody: body.value })
        : transport.handleRequest(webRequest(req, text)));
      reply.code(res.status);
      res.headers.forEach((value, name) => void reply.header(name, value));
      const out = await bytesOf(res);
      return reply.send(out.length === 0 ? undefined : out);
    },
  );
}
