// Editing a key: its name, permissions and addresses (the key itself and its expiry stay). The
// same fields as the create form (key-form.ts); a refused form is shown again with what was typed.
import type { Clinic } from '../../services/accounts.js';
import { html, type Html } from '../html.js';
import type { Formatter } from '../format.js';
import { hasErrors, type KeyForm } from '../key-input.js';
import type { Messages } from '../locales/messages.js';
import { maskedKey, type KeyView } from './api-keys.js';
import { icons } from './icons.js';
import { accessFields, nameField } from './key-form.js';
import { csrfInput, layout, type Person } from './layout.js';

export interface EditModel {
  t: Messages;
  fmt: Formatter;
  person: Person;
  csrf: string;
  clinic: Clinic;
  key: KeyView;
  form: KeyForm;
  keyPrefix: string;
  action: string;
  cancel: string;
}

/** The form of a key as it is now. */
export function currentKeyForm(k: KeyView): KeyForm {
  return { name: k.name, scopes: [...k.scopes], ips: k.allowedIps?.join('\n') ?? '', expires: '', expiresOn: '', errors: {} };
}

export function editPage(m: EditModel): Html {
  const { t, key, form } = m;
  const body = html`<div class="card narrow">
    <h1>${t.keys.editTitle(key.name)}</h1>
    <p class="lead">${t.keys.editLead}</p>
    ${key.replacesUntil === null ? '' : html`<p id="edit-follows">${t.keys.editFollows(m.fmt.dateTimeOf(key.replacesUntil))}</p>`}
    <dl class="facts">
      <dt>${t.clinicLabel}</dt><dd>${m.clinic.name}</dd>
      <dt>${t.colKey}</dt><dd><span class="hint">${maskedKey(m.keyPrefix, key.hint)}</span></dd>
    </dl>
    <form method="post" action="${m.action}" class="key-form" novalidate>
      ${csrfInput(m.csrf)}
      ${
        hasErrors(form)
          ? html`<div class="alert alert-danger" role="alert">${icons.warning}
            <div class="alert-body"><p>${t.keys.editHasErrors}</p></div></div>`
          : ''
      }
      ${nameField(t, form)}
      ${accessFields(t, form)}
      <div class="btn-row">
        <button type="submit" class="btn">${t.keys.saveButton}</button>
        <a class="btn btn-secondary" href="${m.cancel}">${t.cancel}</a>
      </div>
    </form>
  </div>`;
  return layout({ t, title: t.keys.editTitle(key.name), person: m.person, csrf: m.csrf, body, here: m.action });
}
