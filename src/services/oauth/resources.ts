// The two protected resources of the authorization server (RFC 8707 resource indicators): the
// REST API and the MCP server, named by their URLs under the issuer (OAUTH_ISSUER). A token is
// bound to one of them (its audience) and refused by the other. Pure.
/** Where the authorization server's own endpoints are mounted. */
export const OAUTH_PREFIX = '/oauth';

export interface OAuthResources {
  issuer: string;
  /** `${issuer}/api/v1` */
  api: string;
  /** `${issuer}/mcp` */
  mcp: string;
}

export function oauthResources(issuer: string): OAuthResources {
  const base = issuer.replace(/\/+$/, '');
  return { issuer: base, api: `${base}/api/v1`, mcp: `${base}/mcp` };
}

/** Which resource a request path belongs to: /mcp is the MCP server's, every other API path the REST API's. */
export function resourceOfPath(resources: OAuthResources, path: string): string {
  return path === '/mcp' || path.startsWith('/mcp?') || path.startsWith('/mcp/') ? resources.mcp : resources.api;
}

/** RFC 9728's metadata URL of a resource: the well-known segment inserted before its path. */
export function resourceMetadataUrl(resources: OAuthResources, resource: string): string {
  const path = resource.slice(resources.issuer.length);
  return `${resources.issuer}/.well-known/oauth-protected-resource${path}`;
}
