// A tool call outside the scopes of its key or access token is refused at the HTTP level, before
// the protocol runs, as REST refuses a request outside them: 403 insufficient_scope with
// `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` (MCP 2025-11-25 step-up
// authorization). An OAuth client reads the challenge, asks the authorization server for the
// scope it names, and the owner adds it to the same connection on the consent page (incremental
// consent, services/oauth/server.ts allow). For a token the challenge names the token's scopes
// and the missing ones together: the new authorization then keeps what the app could already do
// (the approach MCP recommends). With OAuth on, the challenge also names /mcp's resource metadata.
//
// Only the tool itself is decided here: a call of a tool the key may use whose argument reaches
// further (fetch of a record kind, list_eventos's tipo of a collection outside the scopes) stays
// the tool's own error naming the scope, which the model can act on by changing the argument.
import type { AuthenticatedKey } from '../../services/api-keys.js';
import { RESOURCE_SCOPES } from '../../domain/scopes.js';
import type { ApiError } from '../../errors.js';
import { resourceMetadataUrl, type OAuthResources } from '../../services/oauth/resources.js';
import { TOOLS } from './server.js';
import { mayUse } from './tools.js';
import { insufficientScope } from '../scope-refusal.js';

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

/** The 403 of a tools/call message whose tool `key` may not use, or null (any other message, an unknown tool). */
export function outsideScopes(message: unknown, key: AuthenticatedKey, oauth: OAuthResources | null): ApiError | null {
  if (message === null || typeof message !== 'object') return null;
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (method !== 'tools/call' || params === null || typeof params !== 'object') return null;
  const name = (params as { name?: unknown }).name;
  const tool = typeof name === 'string' ? BY_NAME.get(name) : undefined;
  if (!tool || mayUse(key, tool)) return null;
  // search and fetch read any kind of record: any one of the three would do; all are asked for (the owner unticks).
  const scope = tool.scope!;
  const any = scope === 'any-record';
  return insufficientScope(key, {
    needed: any ? Object.values(RESOURCE_SCOPES) : [scope],
    anyOf: any,
    subject: tool.name,
    metadata: oauth ? resourceMetadataUrl(oauth, oauth.mcp) : null,
  });
}
