// The authorization server's error page (services/oauth/server.ts renderError): an authorization
// request that is refused before the owner has signed in and reached the consent page is shown
// here, never sent back to the app's redirect address (docs/oauth.md, "Errors of the flow"). In
// the dashboard's language for this browser: the language switch's cookie, else Accept-Language.
import type { IncomingMessage } from 'node:http';
import { asLang, messages } from '../i18n.js';
import { html } from '../html.js';
import { LANG_COOKIE } from '../language.js';
import { oauthMessages } from '../locales/oauth-messages.js';
import { resolveLang } from '../negotiate.js';
import { authLayout } from './layout.js';

function chosenLang(cookieHeader: string | undefined) {
  const m = new RegExp(`(?:^|;\\s*)${LANG_COOKIE}=([^;]*)`).exec(cookieHeader ?? '');
  return asLang(m?.[1]);
}

/** The whole page, for the browser of `req`. */
export function oauthErrorPage(req: IncomingMessage, error: string, description: string | undefined): string {
  const t = messages(resolveLang({ chosen: chosenLang(req.headers.cookie), acceptLanguage: req.headers['accept-language'] }));
  const o = oauthMessages(t.htmlLang);
  const body = html`<div class="alert alert-danger" role="alert" id="oauth-error">
      <div class="alert-body"><h1 class="h-alert">${o.errorTitle}</h1></div></div>
    <p>${o.errorText}</p>
    <p>${o.errorDetail}: <code>${error}</code>${description ? html` (${description})` : ''}</p>`;
  return String(authLayout({ t, title: o.errorTitle, body }));
}
