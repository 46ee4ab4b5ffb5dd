// Which errors of the authorization endpoint go back to the app and which are shown to the person
// (docs/oauth.md, "What the app must get right"). RFC 9700 section 4.11.2: anyone can register an
// app with any https redirect address, so an error of the authorization request itself (no PKCE,
// prompt=none, an unsupported response type, an oversized state...) is shown on the error page,
// never sent to that address: the authorization endpoint is no redirector. Only after the owner
// has signed in and answered the consent page (the resume, where access_denied goes back) does an
// error reach the app. The page itself is the dashboard's (admin/views/oauth-error.ts), given in.
import type { IncomingMessage } from 'node:http';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';

/** The page of an error shown to a person (not sent back to the app), for the browser of `req`. */
export type ErrorPage = (req: IncomingMessage, error: string, description: string | undefined) => string;

// The error page's own policy: the dashboard's stylesheet and script, nothing else, never framed.
const ERROR_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/**
 * Listens to the provider's authorization.error and server_error: on the authorization route
 * (before consent), the error is marked not to be redirected. The provider emits these before it
 * decides between a redirect and renderError (test/oauth/hardening.test.ts holds it to that).
 */
export function neverRedirectBeforeConsent(ctx: KoaContextWithOIDC, err: unknown): void {
  if (ctx.oidc?.route === 'authorization' && err !== null && typeof err === 'object')
    (err as { allow_redirect?: boolean }).allow_redirect = false;
}

/** The provider's renderError: the given page (or a bare English one), with an error's status. */
export function renderError(page: ErrorPage = barePage): NonNullable<Configuration['renderError']> {
  return async (ctx, out) => {
    // prompt=none's errors carry 303, made for a redirect: a page is an error's own status.
    if (ctx.status < 400) ctx.status = 400;
    ctx.type = 'html';
    ctx.set('content-security-policy', ERROR_PAGE_CSP);
    ctx.body = page(ctx.req, out.error, out.error_description);
  };
}

function esc(s: unknown): string {
  return String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Without a dashboard page (a server built without one). */
function barePage(_req: IncomingMessage, error: string, description: string | undefined): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorization failed</title></head><body>
<h1>The app's authorization request cannot be completed</h1>
<p><code>${esc(error)}</code>${description ? `: ${esc(description)}` : ''}</p>
<p>Go back to the app and try to connect again; if it keeps failing, tell its maker this error.</p>
</body></html>`;
}
