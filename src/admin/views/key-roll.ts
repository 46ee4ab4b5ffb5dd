// Rolling a key: what happens (a new key like this one, shown once), and how long the old one
// keeps working (24 hours unless chosen otherwise).
import type { Clinic } from '../../services/accounts.js';
import { html, type Html } from '../html.js';
import type { Formatter } from '../format.js';
import { DEFAULT_OVERLAP, OVERLAP_CHOICES, type Messages } from '../locales/messages.js';
import { maskedKey, type KeyView } from './api-keys.js';
import { icons } from './icons.js';
import { csrfInput, layout, type Person } from './layout.js';

export interface RollModel {
  t: Messages;
  fmt: Formatter;
  person: Person;
  csrf: string;
  clinic: Clinic;
  key: KeyView;
  keyPrefix: string;
  /** the overlap chosen (a form shown again), and its error */
  overlap: string;
  error: string | null;
  action: string;
  cancel: string;
}

export function rollPage(m: RollModel): Html {
  const { t, fmt, key } = m;
  const chosen = (OVERLAP_CHOICES as readonly string[]).includes(m.overlap) ? m.overlap : DEFAULT_OVERLAP;
  const body = html`<div class="card narrow confirm">
    <h1>${t.keys.rollTitle(key.name)}</h1>
    <div class="alert alert-info">${icons.info}<div class="alert-body"><p>${t.keys.rollText}</p>${
      key.expiresAt ? html`<p>${t.keys.rollKeeps}</p>` : ''
    }<p id="roll-follows">${t.keys.rollFollows}</p></div></div>
    <dl class="facts">
      <dt>${t.clinicLabel}</dt><dd>${m.clinic.name}</dd>
      <dt>${t.colName}</dt><dd>${key.name}</dd>
      <dt>${t.colKey}</dt><dd><span class="hint">${maskedKey(m.keyPrefix, key.hint)}</span></dd>
      <dt>${t.keys.scopesLabel}</dt><dd>${fmt.list(key.scopes.map((s) => t.keys.scopes[s].label))}</dd>
      <dt>${t.colExpires}</dt><dd>${key.expiresAt ? fmt.dateTimeOf(key.expiresAt) : t.noExpiry}</dd>
    </dl>
    <form method="post" action="${m.action}" novalidate>
      ${csrfInput(m.csrf)}
      <div class="field">
        <label for="roll-overlap">${t.keys.overlapLabel}</label>
        <select id="roll-overlap" name="overlap"
          ${m.error ? html`aria-invalid="true" aria-describedby="roll-overlap-error" autofocus` : ''}>
          ${OVERLAP_CHOICES.map(
            (c) => html`<option value="${c}" ${c === chosen ? html`selected` : ''}>${t.keys.overlapOptions[c]}</option>`,
          )}
        </select>
        ${m.error ? html`<p class="field-error" id="roll-overlap-error">${m.error}</p>` : ''}
      </div>
      <div class="btn-row">
        <button type="submit" class="btn">${icons.key}${t.keys.rollConfirm}</button>
        <a class="btn btn-secondary" href="${m.cancel}">${t.cancel}</a>
      </div>
    </form>
  </div>`;
  return layout({ t, title: t.keys.rollTitle(key.name), person: m.person, csrf: m.csrf, body, here: m.action });
}
