// The language switch: every language the dashboard speaks, each named in itself; the current
// one is marked, the others are submit buttons of one small form (no script: the CSP forbids
// inline ones, and none is needed). The choice is stored by POST /dashboard/language.
import { CSRF_FIELD } from '../csrf.js';
import { html, type Html } from '../html.js';
import { LANG_NAMES } from '../i18n.js';
import { LANGS, type Messages } from '../locales/messages.js';

export function languageSwitch(t: Messages, csrf: string, here: string): Html {
  return html`<nav class="lang-switch" aria-label="${t.languageLabel}">
    <form method="post" action="/dashboard/language">
      <input type="hidden" name="${CSRF_FIELD}" value="${csrf}">
      <input type="hidden" name="next" value="${here}">
      <ul>${LANGS.map((lang) =>
        lang === t.htmlLang
          ? html`<li><span class="lang-current" lang="${lang}" aria-current="true">${LANG_NAMES[lang]}</span></li>`
          : html`<li><button type="submit" class="btn-link" name="lang" value="${lang}" lang="${lang}">${LANG_NAMES[lang]}</button></li>`,
      )}</ul>
    </form>
  </nav>`;
}
