import type { Clinic } from '../../services/accounts.js';
import { html, type Html, type Renderable } from '../html.js';
import type { Formatter } from '../format.js';
import type { Messages } from '../locales/messages.js';
import { maskedKey, type KeyView } from './api-keys.js';
import { icons } from './icons.js';
import { csrfInput, layout, type Person } from './layout.js';
import { emailText } from './wrap.js';

export interface RevokeModel {
  t: Messages;
  fmt: Formatter;
  person: Person;
  csrf: string;
  clinic: Clinic;
  key: KeyView;
  keyPrefix: string;
  action: string;
  cancel: string;
}

/** A key in a roll: the old one it replaced goes with it; an old one goes alone. */
function rollNote(m: RevokeModel): Renderable {
  const { t, fmt, key } = m;
  if (key.replacesUntil !== null) return html`<p id="revoke-follows">${t.keys.revokeFollows(fmt.dateTimeOf(key.replacesUntil))}</p>`;
  if (key.replacedBy !== null && key.status === 'active' && key.expiresAt !== null)
    return html`<p id="revoke-old-only">${t.keys.revokeOldOnly(fmt.dateTimeOf(key.expiresAt))}</p>`;
  return '';
}

export function revokePage(m: RevokeModel): Html {
  const { t, fmt, key } = m;
  const body = html`<div class="card narrow confirm">
    <h1>${t.revokeTitle(key.name)}</h1>
    <div class="alert alert-warning">${icons.warning}<div class="alert-body">
      <p>${t.revokeText}</p>${rollNote(m)}<p>${t.revokeUndo}</p></div></div>
    <dl class="facts">
      <dt>${t.clinicLabel}</dt><dd>${m.clinic.name}</dd>
      <dt>${t.colName}</dt><dd>${key.name}</dd>
      <dt>${t.colKey}</dt><dd><span class="hint">${maskedKey(m.keyPrefix, key.hint)}</span></dd>
      <dt>${t.colCreated}</dt><dd>${fmt.dateTimeOf(key.createdAt)}${
        key.createdByEmail ? html` · ${emailText(key.createdByEmail)}` : ''
      }</dd>
      <dt>${t.colLastUsed}</dt><dd>${key.lastUsedAt ? `${fmt.dateTimeOf(key.lastUsedAt)} (${fmt.ago(key.lastUsedAt)})` : t.neverUsed}</dd>
    </dl>
    <form method="post" action="${m.action}">
      ${csrfInput(m.csrf)}
      <div class="btn-row">
        <button type="submit" class="btn btn-danger">${t.revokeConfirm}</button>
        <a class="btn btn-secondary" href="${m.cancel}">${t.cancel}</a>
      </div>
    </form>
  </div>`;
  return layout({ t, title: t.revokeTitle(key.name), person: m.person, csrf: m.csrf, body, here: m.action });
}
