// /llms.txt: a plain-text summary of the API for AI tools (the llmstxt.org convention: a title,
// a summary, then sections). Written from the OpenAPI document itself (operations, parameters,
// records), the error catalogue, the response headers and the configured limits, so it says
// what the API does and cannot drift from it.
import { SCOPE_TEXTS, SCOPES } from '../domain/scopes.js';
import { ERROR_CODES } from '../errors.js';
import { curlSample, EXAMPLES_HEADING, type SampleRequest } from './code-samples.js';
import { ERROR_CODE_NAMES, ERROR_COMPONENTS, ERROR_WHEN } from './error-schemas.js';
import { RESPONSE_HEADERS, type ResponseHeader } from './route-responses.js';
import { SCOPE_EXTENSION } from './scopes.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed JSON document, walked by key
type Json = Record<string, any>;

export interface LlmsTxtInput {
  /** the OpenAPI document (app.swagger()) */
  doc: Json;
  /** the request each operation's example makes, by operationId */
  samples: Record<string, SampleRequest>;
  /** the curl example of an operation without a sample request (one that sends a body, or deletes), by operationId */
  curl?: Record<string, string>;
  limits: { rps: number; burst: number; authFailRps: number; authFailBurst: number };
  /** the prefix of API keys (API_KEY_PREFIX) */
  keyPrefix: string;
  links: { docs: string; openapi: string; license: string };
}

const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);

/** A schema as a short type: `string (date-time)`, `Cita[]`, `integer 1..500`, `one of: a, b`. */
export function describeType(schema: Json): string {
  if (typeof schema['$ref'] === 'string') return refName(schema['$ref']);
  const types = Array.isArray(schema['type']) ? (schema['type'] as string[]) : [schema['type'] as string];
  const nullable = types.includes('null');
  const type = types.find((t) => t !== 'null') ?? 'any';
  let out: string;
  if (Array.isArray(schema['enum'])) out = `one of: ${(schema['enum'] as string[]).join(', ')}`;
  else if (type === 'array') out = `${describeType(schema['items'] as Json)}[]`;
  else if (typeof schema['format'] === 'string') out = `${type} (${schema['format']})`;
  else if (type === 'integer' && typeof schema['minimum'] === 'number' && typeof schema['maximum'] === 'number')
    out = `integer ${schema['minimum']}..${schema['maximum']}`;
  else if (typeof schema['pattern'] === 'string') out = `${type} matching ${schema['pattern']}`;
  else out = type;
  return nullable ? `${out}, or null` : out;
}

function fieldLines(schema: Json): string[] {
  const required = new Set<string>((schema['required'] as string[] | undefined) ?? []);
  return Object.entries<Json>(schema['properties'] ?? {}).map(([name, prop]) => {
    const notes = [prop['description'] as string | undefined, required.has(name) ? undefined : 'optional'].filter(Boolean);
    return `- ${name}: ${describeType(prop)}${notes.length ? `. ${notes.join('; ')}` : ''}`;
  });
}

function parameterLine(p: Json): string {
  const s = p['schema'] as Json;
  const extra = [
    typeof s['minLength'] === 'number' ? `${s['minLength']} to ${s['maxLength']} characters` : undefined,
    s['default'] !== undefined ? `default ${s['default']}` : undefined,
    p['required'] ? 'required' : undefined,
  ].filter(Boolean);
  return `- ${p['name']} (${[describeType(s), ...extra].join('; ')}): ${p['description'] ?? ''}`.trimEnd();
}

function operationSection(path: string, method: string, op: Json, input: Pick<LlmsTxtInput, 'samples' | 'curl'>): string[] {
  const lines = [`### ${method.toUpperCase()} ${path}`, '', `${op['summary']} (operationId ${op['operationId']}).`];
  const scope = op[SCOPE_EXTENSION] as string | null | undefined;
  lines.push(scope ? `Needs the scope ${scope}.` : 'Needs no scope.');
  const description = String(op['description'] ?? '')
    .split(`\n\n${EXAMPLES_HEADING}`)[0]!
    .trim();
  if (description) lines.push(description);
  const all = (op['parameters'] as Json[] | undefined) ?? [];
  const inPath = all.filter((p) => p['in'] === 'path');
  const inHeader = all.filter((p) => p['in'] === 'header');
  const params = all.filter((p) => p['in'] === 'query');
  if (inPath.length) lines.push('', 'Path parameters:', ...inPath.map(parameterLine));
  if (inHeader.length) lines.push('', 'Request headers (optional unless marked):', ...inHeader.map(parameterLine));
  const requestBody = op['requestBody']?.['content']?.['application/json']?.['schema'] as Json | undefined;
  if (requestBody) lines.push('', 'Body (application/json):', ...fieldLines(requestBody));
  lines.push(
    '',
    params.length ? 'Query parameters (all optional unless marked):' : 'Query parameters: none (any parameter is a 400 unknown_parameter).',
  );
  for (const p of params) lines.push(parameterLine(p));
  const statuses = Object.keys(op['responses'] ?? {});
  // The success with a body: 200, or 201 (created).
  const okStatus = statuses.find((s) => s === '200' || s === '201');
  const ok = okStatus === undefined ? undefined : (op['responses'][okStatus] as Json);
  const body = ok?.['content']?.['application/json']?.['schema'] as Json | undefined;
  if (body) lines.push('', `${okStatus}: ${describeType(body)} (${ok!['description']}).`);
  const csv = ok?.['content']?.['text/csv']?.['schema'] as Json | undefined;
  if (csv) lines.push(`200 as text/csv: ${csv['description']}`);
  for (const s of statuses.filter((s) => s !== okStatus && Number(s) < 400)) lines.push(`${s}: ${op['responses'][s]['description']}.`);
  const errors = statuses.filter((s) => Number(s) >= 400);
  if (errors.length) lines.push(`Errors: ${errors.join(', ')} (see Errors).`);
  const sample = input.samples[op['operationId'] as string];
  const curl = sample ? curlSample(sample) : input.curl?.[op['operationId'] as string];
  if (curl) lines.push('', 'Example:', '', ...curl.split('\n').map((l) => `    ${l}`));
  return lines;
}

export function llmsTxt(input: LlmsTxtInput): string {
  const { doc, limits, links } = input;
  const info = doc['info'] as Json;
  const schemas = (doc['components']?.['schemas'] ?? {}) as Record<string, Json>;
  const out: string[] = [
    `# ${info['title']}`,
    '',
    // The description's first paragraph is the summary.
    `> ${String(info['description']).split('\n\n')[0]}`,
    '',
    String(info['description']).split('\n\n').slice(1).join('\n\n').trim(),
    '',
    `Base URL: this server (the origin that serves this file). Reference: ${links.docs}. OpenAPI ` +
      `3.1: ${links.openapi}. Licence: ${links.license}.`,
    'Every endpoint is GET (HEAD also works) but the webhook subscriptions, which also take POST and DELETE; other methods get 405.',
    '',
    '## Authentication',
    '',
    `Send \`Authorization: Bearer <key>\` on every request (never in the URL). Keys look like \`${input.keyPrefix}_\` followed by 43 ` +
      `URL-safe characters;`,
    "a clinic owner creates and revokes them in the dashboard (/dashboard, Settings > API). A key reads its own clinic's data only.",
    'No header: 401 missing_api_key. A malformed header or an unknown, revoked or expired key: 401 invalid_api_key. Both carry ' +
      '`WWW-Authenticate: Bearer realm="api"`.',
    '',
    '## Scopes',
    '',
    'A key reads only what its scopes grant (GET /api/v1/me lists them; the clinic owner chooses them). Each endpoint below names the ' +
      'scope it needs; without it the answer is',
    '403 insufficient_scope, with error.scope and `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` naming it ' +
      '(authentication is checked first).',
    ...SCOPES.map((s) => `- ${s}: ${SCOPE_TEXTS[s].reference}`),
    'A key may also be restricted to addresses (IPv4/IPv6, CIDR ranges): from any other address, 403 ip_not_allowed, naming the address ' +
      'the service saw.',
    '',
    '## Endpoints',
  ];
  for (const [path, item] of Object.entries<Json>(doc['paths'] ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) out.push('', ...operationSection(path, method, op, input));
  }
  out.push('', '## Records', '', 'Every field is always present (null where the type says so).');
  // The error body has its own section below.
  const errorSchemas = new Set<unknown>(ERROR_COMPONENTS.map((c) => c.$id));
  for (const [name, schema] of Object.entries(schemas)) {
    if (errorSchemas.has(name)) continue;
    out.push('', `### ${name}`, '', `${schema['description'] ?? ''}`.trim(), ...fieldLines(schema));
  }
  out.push(
    '',
    '## Errors',
    '',
    'Every error has one JSON body: {"error": {"code", "message", "param" (parameter errors only), "scope" (insufficient_scope only), ' +
      '"request_id"}}. Match on error.code; message is for people.',
    '',
    ...ERROR_CODE_NAMES.map((c) => `- ${ERROR_CODES[c]} ${c}: ${ERROR_WHEN[c]}`),
    '',
    '## Limits',
    '',
    `- Per key: ${limits.rps} requests per second sustained, bursts of up to ${limits.burst}. Over it: 429 too_many_requests with ` +
      `Retry-After (seconds).`,
    `- Failed authentications per client address: ${limits.authFailRps} per second, bursts of ${limits.authFailBurst}.`,
    '- Pages: limit 1..500 (defaults per endpoint above), offset >= 0; total counts every match. Page with offset until offset >= total.',
    "- Dates (YYYY-MM-DD) are calendar days in the clinic's time zone, inclusive at both ends; timestamps are RFC 3339 with the clinic's " +
      'offset.',
    '',
    '## Response headers',
    '',
    ...(Object.keys(RESPONSE_HEADERS) as ResponseHeader[]).map((h) => `- ${h}: ${RESPONSE_HEADERS[h].description}`),
    '',
    '## Links',
    '',
    `- [API reference, interactive](${links.docs})`,
    `- [OpenAPI 3.1 document](${links.openapi})`,
    `- [Licence](${links.license})`,
    '',
  );
  return out.join('\n');
}
