// The authorization server's size limits and the cleaning of what an app says about itself
// (docs/oauth.md, "Limits"). Anyone may register an app and send anyone an authorization link,
// so what those carry is bounded: an app's name is shown to a clinic owner on the consent page
// (as its own words, never verified), and every authorization request is stored until it is
// answered or expires. Pure.

/** An app's name, after cleaning: longer ones are refused at registration. */
export const MAX_CLIENT_NAME = 100;
/** Redirect URIs per app (a web app has one or two; a desktop one a few loopback ports). */
export const MAX_REDIRECT_URIS = 10;
/** One redirect URI's length: it is stored with each authorization request. */
export const MAX_REDIRECT_URI_LENGTH = 2000;
/** `state`, `nonce` and every other parameter of an authorization request but redirect_uri (bounded at registration). */
export const MAX_AUTHORIZATION_PARAM = 1024;
/** How long an authorization request waits for the owner's answer on the consent page (seconds). */
export const INTERACTION_TTL_S = 600;

// Unicode's format characters (category Cf: bidi overrides and isolates, zero-width spaces and
// joiners, the BOM...) and control characters (Cc): invisible, they can reorder or hide parts of a
// name ("Clínica\u202Eslaer" shows reversed). Line breaks and tabs become spaces.
const INVISIBLE = /[\p{Cf}\p{Cc}]/gu;

/** A name as the consent page and Connected apps show it: no invisible characters, single spaces, trimmed. */
export function cleanClientName(name: string): string {
  return name
    .replace(/[\t\n\r\v\f]/g, ' ')
    .replace(INVISIBLE, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Why a registration's name or redirect URIs are refused (RFC 7591 invalid_client_metadata), or
 * null. Worded so that it never starts with "redirect_uris": oidc-provider would turn such a
 * description into invalid_redirect_uri, which is for a URI that is wrong, not for too many.
 */
export function clientMetadataProblem(metadata: Record<string, unknown>): string | null {
  const name = metadata.client_name;
  if (name !== undefined && typeof name !== 'string') return 'client_name must be a string';
  if (typeof name === 'string') {
    const clean = cleanClientName(name);
    if ([...clean].length > MAX_CLIENT_NAME)
      return `client_name is ${[...clean].length} characters long; at most ${MAX_CLIENT_NAME} are accepted: use a shorter name`;
  }
  const uris = metadata.redirect_uris;
  if (Array.isArray(uris) && uris.length > MAX_REDIRECT_URIS)
    return `at most ${MAX_REDIRECT_URIS} redirect_uris are accepted per app; this registration lists ${uris.length}`;
  if (Array.isArray(uris)) {
    const long = uris.find((u) => typeof u === 'string' && u.length > MAX_REDIRECT_URI_LENGTH) as string | undefined;
    if (long) return `a redirect URI may be at most ${MAX_REDIRECT_URI_LENGTH} characters long; one of these is ${long.length}`;
  }
  return null;
}

/** Why an authorization request's parameters are refused for their size (invalid_request), or null. */
export function authorizationParamProblem(params: Record<string, unknown>): string | null {
  for (const [name, value] of Object.entries(params)) {
    if (name === 'redirect_uri' || typeof value !== 'string') continue;
    if (value.length > MAX_AUTHORIZATION_PARAM)
      return `${name} is ${value.length} characters long; at most ${MAX_AUTHORIZATION_PARAM} are accepted`;
  }
  return null;
}
