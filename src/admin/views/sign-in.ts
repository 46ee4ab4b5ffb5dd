import { html, type Html } from '../html.js';
import { count } from '../format.js';
import type { Lang, Messages } from '../locales/messages.js';
import { icons } from './icons.js';
import { languageSwitch } from './language-switch.js';
import { authLayout, csrfInput } from './layout.js';

export interface SignInModel {
  t: Messages;
  /** where to go once signed in (an app's consent page), already checked */
  next?: string | null;
  /**
   * The address's `?lang=` (or the form's copy of it), carried by the form so that a failed attempt
   * and the session stay in it; null when the page's language came from elsewhere.
   */
  langParam: Lang | null;
  csrf: string;
  /** where the language switch comes back to */
  here: string;
  email?: string;
  notice?: 'signed_out' | 'expired' | null;
  error?: { kind: 'bad_credentials' } | { kind: 'busy' } | { kind: 'throttled'; minutes: number } | null;
}

export function signInPage(m: SignInModel): Html {
  const { t } = m;
  const err = m.error
    ? html`<div class="alert alert-danger" role="alert" id="sign-in-error">${icons.warning}<div class="alert-body"><p>${
        m.error.kind === 'throttled' ? count(t, t.throttled, m.error.minutes) : m.error.kind === 'busy' ? t.signInBusy : t.badCredentials
      }</p></div></div>`
    : '';
  const notice = m.notice
    ? html`<div class="alert alert-info" role="status">${icons.info}
      <div class="alert-body"><p>${m.notice === 'expired' ? t.sessionExpired : t.signedOut}</p></div></div>`
    : '';
  return authLayout({
    t,
    title: t.signInTitle,
    body: html`
    <h1>${t.signInTitle}</h1>
    <p class="lead">${t.signInLead}</p>
    ${notice}${err}
    <form method="post" action="/dashboard/sign-in" novalidate>
      ${csrfInput(m.csrf)}
      ${m.langParam ? html`<input type="hidden" name="lang" value="${m.langParam}">` : ''}
      ${m.next ? html`<input type="hidden" name="next" value="${m.next}">` : ''}
      <div class="field">
        <label for="email">${t.email}</label>
        <input type="email" id="email" name="email" value="${m.email ?? ''}" autocomplete="username" required maxlength="254"
          spellcheck="false" autocapitalize="none"
          ${m.error ? html`aria-describedby="sign-in-error"` : ''} ${m.email ? '' : html`autofocus`}>
      </div>
      <div class="field">
        <label for="password">${t.password}</label>
        <input type="password" id="password" name="password" autocomplete="current-password" required maxlength="1024"
          ${m.email ? html`autofocus` : ''}>
      </div>
      <button type="submit" class="btn">${t.signInButton}</button>
    </form>`,
    foot: html`<p>${t.signInHelp}</p>${languageSwitch(t, m.csrf, m.here)}`,
  });
}
