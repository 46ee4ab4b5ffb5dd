// The 403 insufficient_scope of a request outside its credential's scopes, on REST and /mcp
// alike. For an API key the owner adds the scope to the key in the dashboard; for an app's
// OAuth token the app asks again and the owner adds the scope to the same connection on the
// consent page (incremental consent), so the challenge names the token's scopes and the missing
// ones together (the new authorization keeps what the app could already do) and, with OAuth on,
// the resource's metadata (RFC 9728), where the app finds the authorization server.
import { canonicalScopes, isScope, type Scope } from '../domain/scopes.js';
import { ApiError, errors } from '../errors.js';
import type { AuthenticatedKey } from '../services/api-keys.js';

export interface ScopeRefusal {
  /** the scopes asked for: any one of them would do when `anyOf` */
  needed: readonly Scope[];
  anyOf?: boolean;
  /** the tool that needs them ("list_citas"), or null: the request (REST) */
  subject: string | null;
  /** the resource's metadata URL (OAuth on), or null */
  metadata: string | null;
}

export function insufficientScope(key: AuthenticatedKey | null, r: ScopeRefusal): ApiError {
  const neededText = r.needed.join(r.anyOf ? ' or ' : ' ');
  const metadata = r.metadata === null ? '' : `, resource_metadata="${r.metadata}"`;
  if (!key?.app) {
    const scope = r.needed.join(' ');
    const err = errors.insufficientScope(
      scope,
      r.subject === null
        ? `This request needs the scope ${neededText}, which this API key does not have`
        : `This API key does not have the scope ${neededText}, which ${r.subject} needs`,
    );
    return metadata === ''
      ? err
      : new ApiError(err.code, err.message, undefined, { 'www-authenticate': `${err.headers!['www-authenticate']}${metadata}` }, scope);
  }
  // The challenge asks for what the connection has and what it lacks; error.scope is what the request needs.
  const asked = canonicalScopes([...key.scopes.filter(isScope), ...r.needed]).join(' ');
  return new ApiError(
    'insufficient_scope',
    `This connection was not granted the scope ${neededText}, which ${r.subject ?? 'this request'} needs. The app can ask ` +
      `for it again: the clinic owner then allows it on the consent page, and the connection keeps its other permissions`,
    undefined,
    { 'www-authenticate': `Bearer error="insufficient_scope", scope="${asked}"${metadata}` },
    r.needed.join(' '),
  );
}
