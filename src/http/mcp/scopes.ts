// Which tools a key may see and call: every scope decision of the MCP server goes through
// keyHasScope(). Until API keys carry scopes, a key without any has them all, as every key made
// before scopes existed will.
import type { AuthenticatedKey } from '../../services/api-keys.js';

export const SCOPES = ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read'] as const;
export type Scope = (typeof SCOPES)[number];

export function keyHasScope(key: AuthenticatedKey, scope: Scope): boolean {
  const scopes = (key as { scopes?: readonly string[] }).scopes;
  return scopes === undefined || scopes.includes(scope);
}
