// The page shell: document head, top bar with the signed-in person and sign-out, and the
// signed-out shell used by the sign-in page.
import type { Role } from '../../domain/records.js';
import { assetUrls, ICON_SVG } from '../assets.js';
import { CSRF_FIELD } from '../csrf.js';
import { html, trusted, type Html, type Renderable } from '../html.js';
import type { Messages } from '../locales/messages.js';
import { languageSwitch } from './language-switch.js';

export interface Person {
  email: string;
  role: Role;
}

function head(t: Messages, title: string, refreshS?: number): Html {
  return html`<head>
<meta charset="utf-8">
${refreshS ? html`<meta http-equiv="refresh" content="${String(refreshS)}">` : ''}
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${title} · ${t.appName}</title>
<link rel="icon" href="${assetUrls.icon}" type="image/svg+xml">
<link rel="stylesheet" href="${assetUrls.css}">
<script src="${assetUrls.js}" defer></script>
</head>`;
}

export const brandMark = trusted(ICON_SVG);

export function csrfInput(token: string): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;
}

/**
 * A signed-in page. `here` is where the language switch comes back to (a path a GET can show
 * again; /dashboard when there is none); the switch needs the CSRF token, so without one there is none.
 */
export function layout(opts: {
  t: Messages;
  title: string;
  person: Person | null;
  csrf: string | null;
  body: Renderable;
  here?: string;
  /** reload the page every this many seconds (a background job's progress) */
  refreshS?: number;
}): Html {
  const { t, person } = opts;
  return html`<!doctype html>
<html lang="${t.htmlLang}">
${head(t, opts.title, opts.refreshS)}
<body>
<a class="skip" href="#main">${t.skipToContent}</a>
<header class="topbar">
  <div class="topbar-inner">
    <a class="brand" href="/dashboard">${brandMark}<span>${t.appName}</span></a>
    ${
      person
        ? html`<div class="who">
      <span class="who-name"><span class="sr-only">${t.signedInAs} </span>${person.email}</span>
      <span class="badge badge-role plain">${t.roles[person.role]}</span>
      ${
        opts.csrf
          ? html`<form method="post" action="/dashboard/sign-out">${csrfInput(opts.csrf)}<button type="submit"
             class="btn btn-secondary btn-sm">${t.signOut}</button></form>`
          : ''
      }
    </div>`
        : ''
    }
    ${opts.csrf ? languageSwitch(t, opts.csrf, opts.here ?? '/dashboard') : ''}
  </div>
</header>
<main id="main" class="container" tabindex="-1">
${opts.body}
</main>
</body>
</html>`;
}

/** The signed-out shell: a centred card, no top bar; `foot` goes under the card. */
export function authLayout(opts: { t: Messages; title: string; body: Renderable; foot?: Renderable }): Html {
  const { t } = opts;
  return html`<!doctype html>
<html lang="${t.htmlLang}">
${head(t, opts.title)}
<body>
<a class="skip" href="#main">${t.skipToContent}</a>
<main id="main" class="auth" tabindex="-1">
  <a class="brand" href="/dashboard">${brandMark}<span>${t.appName}</span></a>
  <div class="auth-card">
${opts.body}
  </div>
  ${opts.foot ? html`<div class="auth-foot">${opts.foot}</div>` : ''}
</main>
</body>
</html>`;
}
