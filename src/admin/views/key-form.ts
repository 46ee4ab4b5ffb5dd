// The fields of a key's form, shared by creating a key (Settings > API) and editing one: its
// name, its permissions (a checkbox per scope, each with what it lets a program read), the
// addresses it may be used from, and (creating only) its expiry. Each field carries its error
// (aria-invalid, aria-describedby) and what was typed.
import { SCOPES } from '../../domain/scopes.js';
import { html, type Html } from '../html.js';
import type { KeyForm } from '../key-input.js';
import { EXPIRY_CHOICES, type Messages } from '../locales/messages.js';

const describedBy = (...ids: (string | false | undefined)[]) => ids.filter(Boolean).join(' ');

export function nameField(t: Messages, f: KeyForm): Html {
  return html`<div class="field">
    <label for="key-name">${t.nameLabel}</label>
    <input type="text" id="key-name" name="name" value="${f.name}" required maxlength="100" autocomplete="off"
      aria-describedby="${describedBy('key-name-help', f.errors.name && 'key-name-error')}" ${
        f.errors.name ? html`aria-invalid="true" autofocus` : ''
      }>
    ${f.errors.name ? html`<p class="field-error" id="key-name-error">${f.errors.name}</p>` : ''}
    <p class="help" id="key-name-help">${t.nameHelp}</p>
  </div>`;
}

/** The expiry: a choice of lifetimes, or a date (the date field is used with "On a date"). */
export function expiryFields(t: Messages, f: KeyForm, today: string): Html {
  const err = f.errors.expires;
  const focus = err && !f.errors.name ? html`autofocus` : '';
  return html`<div class="field">
      <label for="key-expires">${t.expiryLabel}</label>
      <select id="key-expires" name="expires" aria-describedby="${describedBy(err && 'key-expires-error')}"
        ${err && f.expires !== 'date' ? html`aria-invalid="true" ${focus}` : ''}>
        ${EXPIRY_CHOICES.map((c) => html`<option value="${c}" ${c === f.expires ? html`selected` : ''}>${t.expiryOptions[c]}</option>`)}
      </select>
    </div>
    <div class="field">
      <label for="key-expires-on">${t.keys.dateLabel}</label>
      <input type="date" id="key-expires-on" name="expires_on" value="${f.expiresOn}" min="${today}"
        aria-describedby="${describedBy(err && 'key-expires-error', 'key-expires-on-help')}" ${
          err && f.expires === 'date' ? html`aria-invalid="true" ${focus}` : ''
        }>
      <p class="help" id="key-expires-on-help">${t.keys.dateHelp}</p>
    </div>
    ${err ? html`<p class="field-error field-wide" id="key-expires-error">${err}</p>` : ''}`;
}

/** The permissions and the allowed addresses. */
export function accessFields(t: Messages, f: KeyForm): Html {
  const first = !f.errors.name && !f.errors.expires;
  return html`<fieldset class="field scopes-choice"
     aria-describedby="${describedBy('key-scopes-help', f.errors.scopes && 'key-scopes-error')}">
      <legend>${t.keys.scopesLabel}</legend>
      <p class="help" id="key-scopes-help">${t.keys.scopesHelp} ${t.keys.scopesExamples}</p>
      ${f.errors.scopes ? html`<p class="field-error" id="key-scopes-error">${f.errors.scopes}</p>` : ''}
      <div class="scope-list">
      ${SCOPES.map((s, i) => {
        const id = `scope-${s.replace(':', '-')}`;
        return html`<label class="scope" for="${id}">
          <input type="checkbox" id="${id}" name="scopes" value="${s}" aria-describedby="${id}-what" ${
            f.scopes.includes(s) ? html`checked` : ''
          }
            ${f.errors.scopes ? html`aria-invalid="true" ${i === 0 && first ? html`autofocus` : ''}` : ''}>
          <span><span class="scope-name">${t.keys.scopes[s].label}</span> <code>${s}</code>
          <span class="scope-what" id="${id}-what">${t.keys.scopes[s].description}</span></span>
        </label>`;
      })}
      </div>
    </fieldset>
    <div class="field">
      <label for="key-ips">${t.keys.ipsLabel}</label>
      <textarea id="key-ips" name="allowed_ips" rows="3" spellcheck="false" autocomplete="off"
        aria-describedby="${describedBy(f.errors.ips && 'key-ips-error', 'key-ips-help')}" ${
          f.errors.ips ? html`aria-invalid="true" ${first && !f.errors.scopes ? html`autofocus` : ''}` : ''
        }>${f.ips}</textarea>
      ${f.errors.ips ? html`<ul class="field-error" id="key-ips-error">${f.errors.ips.map((e) => html`<li>${e}</li>`)}</ul>` : ''}
      <p class="help" id="key-ips-help">${t.keys.ipsHelp}</p>
    </div>`;
}

/** Creating: "Test key", a key that reads the clinic's sandbox (`<prefix>_test_...`). */
export function testField(t: Messages, f: KeyForm, prefix: string): Html {
  return html`<div class="field">
    <label class="scope" for="key-test">
      <input type="checkbox" id="key-test" name="mode" value="test" aria-describedby="key-test-help" ${f.test ? html`checked` : ''}>
      <span><span class="scope-name">${t.sandbox.testKeyLabel}</span>
      <span class="scope-what" id="key-test-help">${t.sandbox.testKeyHelp(prefix)}</span></span>
    </label>
  </div>`;
}
