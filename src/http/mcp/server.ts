// One MCP server per HTTP request (the official SDK's stateless pattern: a transport serves one
// request, and a server one transport), made from what is built once here: the tools, their
// published schemas and argument checks, and one JSON Schema validator for all servers (each
// would otherwise make its own Ajv). The SDK's low-level Server is used because its McpServer
// takes tool schemas as zod only, and ours are the API's TypeBox schemas (plain JSON Schema); the
// low-level Server validates no arguments, which ./args.ts does with the REST rules.
//
// A tool call's refusals (a bad argument, a record kind or feed type outside the key's scopes,
// the key's rate limit, a record the clinic does not have, a database that did not answer) are
// tool results with isError: true and a text that says what to do, never protocol errors: the
// model reads them and can act. A tool outside the scopes is refused before, over HTTP (./step-up.ts).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type JSONRPCErrorResponse,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { COLLECTIONS } from '../../collections/index.js';
import { DATABASE_RETRY_AFTER_SECONDS, type ApiError } from '../../errors.js';
import { memo } from '../../memo.js';
import { spans } from '../../spans.js';
import { disclose } from '../disclosure.js';
import { toApiError } from '../error-handler.js';
import { AGENDA_READ, AGENDA_RESOURCE, AGENDA_TOOL, AGENDA_TOOL_META, AGENDA_URI, UI_EXTENSION } from './agenda/resource.js';
import { describeValue } from './args.js';
import { SEARCH_SPECS } from './search.js';
import { mayUse, prepare, seesContact, ToolRefusal, TOOL_SPECS, type Tool, type ToolCall, type ToolEnv } from './tools.js';

export const SERVER_NAME = 'clinic-api';

/**
 * The server's icon (MCP 2025-11-25 `icons`), shown by assistants next to the connection: a
 * self-contained SVG as a data: URI, so no host has to fetch anything from this server or another.
 */
const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#0f766e"/>' +
  '<rect x="14" y="18" width="36" height="32" rx="4" fill="#fff"/><rect x="14" y="18" width="36" height="9" rx="3" fill="#99f6e4"/>' +
  '<path d="M29 31h6v5h5v6h-5v5h-6v-5h-5v-6h5z" fill="#0f766e"/></svg>';
export const SERVER_ICONS = [
  { src: `data:image/svg+xml;base64,${Buffer.from(ICON_SVG).toString('base64')}`, mimeType: 'image/svg+xml', sizes: ['any'] },
];

/** Every tool, in the order tools/list gives them. */
export const TOOLS: readonly Tool[] = [...TOOL_SPECS, ...SEARCH_SPECS].map(prepare);
const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

/** Every tool only reads the key's clinic: nothing outside it, nothing changed, the same answer twice. */
export const ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

const validator = new AjvJsonSchemaValidator();

/** Said of every tool that returns records, to a key without contacto:read. */
const NO_CONTACT =
  ' This API key does not see contact details: phone numbers, ' +
  'e-mails and appointment notes are null (the scope contacto:read grants them).';

/**
 * The tools as listed, by the key's view: the clinic's time zone (their descriptions name it) and
 * whether it sees contact details (they say what a key without them gets). A few zones in practice.
 */
const listedByView = memo(1_000, (view: string): Map<string, McpTool> => {
  const contact = view.startsWith('+');
  const tz = view.slice(1);
  return new Map(
    TOOLS.map((t) => [
      t.name,
      {
        name: t.name,
        title: t.title,
        description: t.describe({ tz, contact }) + (contact || t.scope === null ? '' : NO_CONTACT),
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema,
        annotations: { title: t.title, ...ANNOTATIONS },
        ...(t.name === AGENDA_TOOL ? { _meta: AGENDA_TOOL_META } : {}),
      },
    ]),
  );
});

const listed = (tz: string, contact: boolean) => listedByView(`${contact ? '+' : '-'}${tz}`);

/** The names of the tools `key` may see and call. */
export function visibleTools(call: Pick<ToolCall, 'key'>): string[] {
  return TOOLS.filter((t) => mayUse(call.key, t)).map((t) => t.name);
}

function instructions(call: ToolCall): string {
  const tz = call.ctx.timezone;
  return (
    `Read-only access to one clinic's data: ${call.clinicName} (time zone ${tz}, currency ${call.ctx.currency}): its ` +
    `${Object.values(COLLECTIONS)
      .map((c) => c.prose)
      .join(', ')} and the feed of their changes (eventos). Dates are ` +
    `calendar days in ${tz}; times are RFC 3339 with that zone's UTC offset. Lists are paged with limit and offset, and their total ` +
    'counts every match. Nothing can be changed through these tools.'
  );
}

/** MCP's code for a resource the server does not have. */
const RESOURCE_NOT_FOUND = -32002;

function refusal(call: ToolCall, code: string, text: string): CallToolResult {
  call.req.apiErrorCode ??= code;
  return { content: [{ type: 'text', text }], isError: true };
}

/** What a model is told when a tool failed for a reason of the API's (the catalogue's error). */
function failureText(e: ApiError, tool: string, requestId: string): string {
  switch (e.code) {
    case 'invalid_parameter':
    case 'unknown_parameter':
      return `Invalid argument ${e.param ?? ''}: ${e.message}. Correct it and call ${tool} again.`;
    case 'cursor_expired':
      return e.message;
    case 'insufficient_scope':
      // (the feed's tipo of a collection the key may not read: the message names the scope)
      return `${e.message}. Without tipo, ${tool} gives every event this key may read.`;
    case 'database_error':
      return `The clinic's database did not answer; nothing was read. Retry this call in ${DATABASE_RETRY_AFTER_SECONDS} seconds.`;
    default:
      return (
        `Internal error (request id ${requestId}); nothing was read. If it happens again, ` +
        `give the request id to whoever runs this service.`
      );
  }
}

/**
 * The server for one request. `rateLimited`: the key is over its rate limit (the API's 429,
 * deferred by the auth hook for /mcp): every tool call of this request is answered with it.
 */
export function mcpServer(call: ToolCall, env: ToolEnv, version: string, rateLimited: ApiError | null): Server {
  const server = new Server(
    { name: SERVER_NAME, title: 'Clinic API', version, icons: SERVER_ICONS },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, extensions: { [UI_EXTENSION]: {} } },
      instructions: instructions(call),
      jsonSchemaValidator: validator,
    },
  );
  const tools = listed(call.ctx.timezone, seesContact(call));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: call.visible.map((name) => tools.get(name)!) }));
  // The one resource: the agenda view of list_citas (./agenda/resource.ts), for hosts that draw MCP Apps.
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: call.visible.includes(AGENDA_TOOL) ? [AGENDA_RESOURCE] : [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    if (request.params.uri === AGENDA_URI) return AGENDA_READ;
    throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${request.params.uri}. The one resource is ${AGENDA_URI}.`);
  });
  server.setRequestHandler(CallToolRequestSchema, (request): Promise<CallToolResult> => {
    const { name, _meta: meta } = request.params;
    const tool = BY_NAME.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}. The tools are: ${call.visible.join(', ')}`);
    if (spans === null) return callTool(tool, request.params.arguments);
    // With tracing on: a span per tool call, its name and outcome only (never its arguments: a
    // search's text), continuing the caller's trace when `_meta` carries a `traceparent`.
    return spans.inSpan(
      `tools/call ${name}`,
      { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': name, 'gen_ai.operation.name': 'execute_tool' },
      async (notes) => {
        const result = await callTool(tool, request.params.arguments);
        if (result.isError) notes.fail('tool error');
        return result;
      },
      { parent: meta },
    );
  });
  const callTool = async (tool: Tool, args: Record<string, unknown> | undefined): Promise<CallToolResult> => {
    const name = tool.name;
    // A tool outside the key's scopes never gets here: ./plugin.ts answers it with a 403 (./step-up.ts).
    if (rateLimited) {
      return refusal(
        call,
        rateLimited.code,
        `Rate limited: this API key may make ${env.rateLimit.rate} requests per second (bursts of ${env.rateLimit.burst}) and is over ` +
          `that now. Nothing was read. Retry this call in ${rateLimited.headers['retry-after'] ?? '1'} second(s).`,
      );
    }
    const checked = tool.check(args);
    if ('error' in checked) return refusal(call, 'invalid_parameter', checked.error);
    try {
      const answer = await tool.run(checked.value, call, env);
      disclose(call.req, answer.records, answer.clientas);
      const text = tool.jsonText ? JSON.stringify(answer.structured) : answer.text;
      return { content: [{ type: 'text', text }], structuredContent: answer.structured };
    } catch (err) {
      if (err instanceof ToolRefusal) return refusal(call, err.code, err.message);
      const e = toApiError(err, call.req);
      return refusal(call, e.code, failureText(e, name, call.req.id));
    }
  };
  return server;
}

/**
 * The refusal of a tools/call whose params are not the shape MCP gives them (`name` a string,
 * `arguments` an object of named arguments), as JSON-RPC's Invalid params (-32602) with a text
 * that names what is wrong and the fix; null for any other message. The SDK would parse such a
 * call before any handler of ours and answer -32603 with its raw validation dump (./plugin.ts
 * asks this first). A well-shaped call whose arguments are wrong is the tool's own error.
 */
export function malformedToolCall(message: unknown, call: Pick<ToolCall, 'visible'>): JSONRPCErrorResponse | null {
  if (message === null || typeof message !== 'object') return null;
  const { method, id, params } = message as { method?: unknown; id?: unknown; params?: unknown };
  if (method !== 'tools/call' || (typeof id !== 'string' && typeof id !== 'number')) return null;
  const refuse = (text: string): JSONRPCErrorResponse => ({
    jsonrpc: '2.0',
    id,
    error: { code: ErrorCode.InvalidParams, message: text },
  });
  const shape = 'tools/call takes params {"name": "<tool>", "arguments": {"<argument>": <value>, ...}}';
  const what = (v: unknown) => (v === undefined ? 'missing' : describeValue(v));
  if (params === null || typeof params !== 'object' || Array.isArray(params))
    return refuse(`Invalid params: they are ${what(params)}; ${shape}. Correct them and call again.`);
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string')
    return refuse(`Invalid params: name is ${what(name)}; ${shape}. The tools are: ${call.visible.join(', ')}.`);
  if (args === undefined || (args !== null && typeof args === 'object' && !Array.isArray(args))) return null;
  const tool = BY_NAME.get(name);
  const names = tool ? Object.keys(tool.input.properties) : [];
  const takes = !tool ? '' : names.length ? ` ${name} takes: ${names.join(', ')}.` : ` ${name} takes no arguments.`;
  return refuse(
    `Invalid argument arguments: arguments must be an object of named arguments, such as {"limit": 10}, not ${describeValue(args)}` +
      ` (leave it out for none).${takes} Correct it and call ${name} again.`,
  );
}

/** Whether a JSON-RPC message (never a batch: ./plugin.ts refuses those) is a tools/call, a notification or a response. */
export function onlyToolCalls(message: unknown): boolean {
  if (message === null || typeof message !== 'object') return false;
  const { method, id } = message as { method?: unknown; id?: unknown };
  return method === undefined || id === undefined || method === 'tools/call';
}
