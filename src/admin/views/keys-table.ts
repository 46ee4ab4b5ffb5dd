// The clinic's keys as a table (cards on narrow screens): each key's name and masked value, what
// it may read and from where, when and by whom it was made, its last use, its expiry (marked when
// within 14 days), its status (a rolled key still working is "Replaced", with when it ends, and
// its replacement says so), and what an owner can do with it: edit, roll, revoke.
import type { KeyStatus } from '../../services/api-keys.js';
import { SCOPES } from '../../domain/scopes.js';
import { html, type Html, type Renderable } from '../html.js';
import { maskedKey, timeEl, type ApiPageModel, type KeyView } from './api-keys.js';
import { emailText } from './wrap.js';

const STATUS_ORDER: Record<KeyStatus, number> = { active: 0, expired: 1, revoked: 2 };

/** The key's permissions by name (one chip for all of them), and where it may be used from. */
function accessCell(m: ApiPageModel, k: KeyView): Html {
  const { t } = m;
  const names = k.scopes.length === SCOPES.length ? [t.keys.allScopes] : k.scopes.map((s) => t.keys.scopes[s].label);
  return html`<div><ul class="chips">${names.map((n) => html`<li>${n}</li>`)}</ul>
    <span class="sub">${k.allowedIps === null ? t.keys.anyAddress : t.keys.onlyFrom(k.allowedIps.join(', '))}</span></div>`;
}

function expiresCell(m: ApiPageModel, k: KeyView): Html {
  const { t, fmt } = m;
  if (!k.expiresAt) return html`<span class="muted">${t.noExpiry}</span>`;
  const soon =
    k.expiresInDays === null
      ? ''
      : html`<span class="badge badge-soon">${
          k.expiresInDays === 0 ? t.keys.expiresToday : fmt.count(t.keys.expiresSoon, k.expiresInDays)
        }</span>`;
  return html`<div>${timeEl(fmt, k.expiresAt, fmt.dateOf(k.expiresAt))}${soon}</div>`;
}

/**
 * The key's status; a rolled key still in its overlap is marked "Replaced" with when it ends,
 * and the key that replaced it says so, so that two keys of one name tell which is which.
 */
function statusCell(m: ApiPageModel, k: KeyView): Html {
  const { t, fmt } = m;
  if (k.replacedBy !== null && k.status === 'active' && k.expiresAt !== null)
    return html`<div><span class="badge badge-replaced">${t.keys.replacedBadge}</span>
      <span class="sub">${t.keys.replaced(fmt.dateTimeOf(k.expiresAt))}</span></div>`;
  return html`<div><span class="badge badge-${k.status}">${t.status[k.status]}</span>${
    k.replacesUntil === null ? '' : html`<span class="sub">${t.keys.replaces(fmt.dateTimeOf(k.replacesUntil))}</span>`
  }</div>`;
}

function actions(m: ApiPageModel, k: KeyView): Renderable {
  const { t } = m;
  if (k.status !== 'active') return '';
  const base = `/dashboard/settings/api/keys/${k.id}`;
  // A rolled key keeps working for its overlap: it can still be revoked, not changed or rolled again.
  const change =
    k.replacedBy === null
      ? html`<a class="btn btn-sm btn-secondary" href="${m.url(`${base}/edit`)}"
         aria-label="${t.keys.editKeyNamed(k.name)}">${t.keys.edit}</a>
        <a class="btn btn-sm btn-secondary" href="${m.url(`${base}/roll`)}" aria-label="${t.keys.rollKeyNamed(k.name)}">${t.keys.roll}</a>`
      : '';
  return html`<div class="key-actions">${change}<a class="btn btn-sm btn-outline-danger" href="${m.url(`${base}/revoke`)}"
     aria-label="${t.revokeKeyNamed(k.name)}">${t.revoke}</a></div>`;
}

export function keysTable(m: ApiPageModel): Renderable {
  const { t, fmt } = m;
  // Active keys first; within a status, newest first (the order they arrive in).
  const keys = [...m.keys].sort((a, b) => STATUS_ORDER[a.status] - STATUS_ORDER[b.status]);
  if (m.keys.length === 0) {
    return html`<p class="empty">${t.noKeys} ${m.canManage && m.eligible ? t.noKeysCreateHint : ''}</p>`;
  }
  return html`<div class="table-wrap"><table class="keys">
    <caption class="sr-only">${t.keysTitle}: ${m.clinic.name}</caption>
    <thead><tr>
      <th scope="col">${t.colName}</th><th scope="col">${t.keys.colAccess}</th><th scope="col">${t.colCreated}</th>
      <th scope="col">${t.colLastUsed}</th><th scope="col">${t.colExpires}</th><th scope="col">${t.colStatus}</th>
      ${m.canManage ? html`<th scope="col"><span class="sr-only">${t.colActions}</span></th>` : ''}
    </tr></thead>
    <tbody>
    ${keys.map(
      (k) => html`<tr class="${k.status === 'active' ? '' : 'is-inactive'}" data-key-id="${k.id}" data-mode="${k.mode}">
      <td data-label="${t.colName}" class="cell-name"><div><span class="key-name">${k.name}</span>${
        k.mode === 'test' ? html` <span class="badge plain badge-test">${t.sandbox.testBadge}</span>` : ''
      }
        <span class="sub"><span class="sr-only">${t.colKey}: </span><span class="hint">${maskedKey(m.keyPrefix, k.hint)}</span></span>
          </div></td>
      <td data-label="${t.keys.colAccess}" class="cell-access">${accessCell(m, k)}</td>
      <td data-label="${t.colCreated}"><div>${timeEl(fmt, k.createdAt, fmt.dateOf(k.createdAt))}
        <span class="sub"><span class="sr-only">${t.colCreatedBy}: </span>${
          k.createdByEmail ? emailText(k.createdByEmail) : t.createdByCli
        }</span></div></td>
      <td data-label="${t.colLastUsed}" class="nowrap">${
        k.lastUsedAt ? timeEl(fmt, k.lastUsedAt, fmt.ago(k.lastUsedAt)) : html`<span class="muted">${t.neverUsed}</span>`
      }</td>
      <td data-label="${t.colExpires}" class="nowrap">${expiresCell(m, k)}</td>
      <td data-label="${t.colStatus}">${statusCell(m, k)}</td>
      ${m.canManage ? html`<td class="actions">${actions(m, k)}</td>` : ''}
    </tr>`,
    )}
    </tbody>
  </table></div>`;
}
