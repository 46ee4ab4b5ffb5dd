// The consent page of an app's "Connect" (OAuth): who asks (the app's name, where the browser
// returns), for which clinic (a superadmin picks one), and which of the scopes it asked for, each
// one a checkbox the owner may untick, in plain words; Allow or Deny. The app's name is its own
// choice (anyone can register an app): it is quoted and labelled as not verified, and shown in
// its own direction (dir="auto") so a right-to-left name cannot reorder the text around it. An app
// this person connected to the clinic already is said so: allowing changes that connection.
import type { Clinic } from '../../services/accounts.js';
import { SCOPE_TEXTS, type Scope } from '../../domain/scopes.js';
import { html, type Html } from '../html.js';
import type { Messages } from '../locales/messages.js';
import type { OAuthMessages } from '../locales/oauth-messages.js';
import { icons } from './icons.js';
import { csrfInput, layout, type Person } from './layout.js';

export interface ConsentModel {
  t: Messages;
  o: OAuthMessages;
  person: Person;
  csrf: string;
  uid: string;
  clientName: string;
  /** the host publishing the app's metadata document (its client_id is that URL), or null */
  documentHost: string | null;
  redirectHost: string;
  /** the clinics this person may connect (one for an owner) */
  clinics: Clinic[];
  scopes: Scope[];
  /** what was ticked when the form comes back with an error */
  checked: Scope[];
  /** this person's connections of this app already there, by clinic (incremental consent) */
  connected: { clinic: string; scopes: Scope[] }[];
  error: string | null;
  here: string;
}

export function consentPage(m: ConsentModel): Html {
  const { t, o } = m;
  const lang = t.htmlLang;
  // One clinic is a fact, not a choice: its term is plain text (a label must name a control).
  const clinicTerm = m.clinics.length === 1 ? o.consentClinic : html`<label for="consent-clinic">${o.consentClinic}</label>`;
  const clinicField =
    m.clinics.length === 1
      ? html`<dd id="consent-clinic">${m.clinics[0]!.name}<input type="hidden" name="clinic" value="${m.clinics[0]!.id}"></dd>`
      : html`<dd><select name="clinic" id="consent-clinic" aria-describedby="consent-clinic-help">${m.clinics.map(
          (c) => html`<option value="${c.id}">${c.name}</option>`,
        )}</select></dd>`;
  const body = html`<div class="card narrow confirm" id="consent">
    <h1>${o.consentTitle(m.clientName)}</h1>
    <p class="lead">${o.consentLead}</p>
    ${
      m.error
        ? html`<div class="alert alert-danger" role="alert" id="consent-error">${icons.warning}
          <div class="alert-body"><p>${m.error}</p></div></div>`
        : ''
    }
    ${m.connected.map(
      (c) =>
        html`<p class="help consent-connected">${o.consentConnected(
          c.clinic,
          c.scopes.map((s) => SCOPE_TEXTS[s][lang].label).join(', '),
        )}</p>`,
    )}
    <form method="post" action="/dashboard/oauth/consent">
      ${csrfInput(m.csrf)}
      <input type="hidden" name="uid" value="${m.uid}">
      <dl class="facts">
        <dt>${o.consentApp}</dt>
          <dd><span id="consent-app" dir="auto">${m.clientName}</span>
          <p class="help" id="consent-app-unverified">${o.consentAppUnverified}${
            m.documentHost ? html` <span id="consent-app-document">${o.consentAppDocument(m.documentHost)}</span>` : ''
          }</p></dd>
        <dt>${o.consentRedirect}</dt>
          <dd><code id="consent-redirect">${m.redirectHost}</code><p class="help">${o.consentRedirectHelp}</p></dd>
        <dt>${clinicTerm}</dt>${clinicField}
      </dl>
      <p class="help" id="consent-clinic-help">${o.consentClinicHelp}</p>
      <fieldset class="field scopes-choice">
        <legend>${o.consentScopes}</legend>
        <p class="help">${o.consentScopesHelp}</p>
        <div class="scope-list">
        ${m.scopes.map((s) => {
          // The key form's look: the scope's name, then what it lets the app read, below it.
          const id = `consent-scope-${s.replace(':', '-')}`;
          return html`<label class="scope" for="${id}"><input type="checkbox" id="${id}" name="scope" value="${s}"
             aria-describedby="${id}-what" ${m.checked.includes(s) ? html`checked` : ''}>
            <span><span class="scope-name">${SCOPE_TEXTS[s][lang].label}</span>
            <span class="scope-what" id="${id}-what">${SCOPE_TEXTS[s][lang].description}</span></span></label>`;
        })}
        </div>
      </fieldset>
      <div class="field">
        <label class="scope" for="consent-test"><input type="checkbox" id="consent-test" name="mode" value="test"
           aria-describedby="consent-test-what">
          <span><strong>${t.sandbox.consentModeLabel}</strong>
          <span class="scope-what" id="consent-test-what">${t.sandbox.consentModeTest}</span></span></label>
      </div>
      <div class="btn-row">
        <button type="submit" name="action" value="allow" class="btn" id="consent-allow">${o.consentAllow}</button>
        <button type="submit" name="action" value="deny" class="btn btn-secondary" id="consent-deny">${o.consentDeny}</button>
      </div>
    </form>
    <p class="help">${o.consentFoot}</p>
  </div>`;
  return layout({ t, title: o.consentTitle(m.clientName), person: m.person, csrf: m.csrf, body, here: m.here });
}
