// Settings > API > Connected apps: every grant the clinic gave an app (its name, scopes, who
// granted it and when, when it was last used), and Disconnect (after a confirmation page).
import type { Clinic } from '../../services/accounts.js';
import { SCOPE_TEXTS, readStoredScopes } from '../../domain/scopes.js';
import { grantResourceKind } from '../../services/app-log.js';
import type { OAuthGrantListing } from '../../services/oauth/grants.js';
import { html, type Html } from '../html.js';
import type { Formatter } from '../format.js';
import type { Messages } from '../locales/messages.js';
import type { OAuthMessages } from '../locales/oauth-messages.js';
import type { Flash } from '../../services/sessions.js';
import { icons } from './icons.js';
import { csrfInput, layout, type Person } from './layout.js';
import { apiTabs } from './api-tabs.js';
import { emailText } from './wrap.js';

export interface AppsModel {
  t: Messages;
  o: OAuthMessages;
  fmt: Formatter;
  person: Person;
  csrf: string;
  clinic: Clinic;
  canManage: boolean;
  grants: OAuthGrantListing[];
  /** OAUTH_ISSUER is set: apps can connect (otherwise the page says who turns it on) */
  oauthOn: boolean;
  flash: Flash | null;
  url: (path: string) => string;
}

function scopesText(m: { t: Messages }, stored: string): string {
  return readStoredScopes(stored)
    .map((s) => SCOPE_TEXTS[s][m.t.htmlLang].label)
    .join(', ');
}

export function appsPage(m: AppsModel): Html {
  const { t, o, fmt } = m;
  const flash =
    m.flash?.kind === 'app-disconnected'
      ? html`<div class="alert alert-success" role="status" id="apps-notice">${icons.check}
        <div class="alert-body"><p>${o.disconnected(m.flash.name)}</p></div></div>`
      : '';
  const rows = m.grants.map((g) => {
    const ended = g.revoked_at !== null;
    const state = ended
      ? (o.stateEnded[g.revoked_reason as keyof OAuthMessages['stateEnded']] ?? o.stateEnded.disconnected)
      : o.stateActive;
    return html`<tr class="${ended ? 'is-inactive' : ''}" data-grant-id="${g.id}">
      <td data-label="${o.colApp}"
         class="cell-name"><span class="key-name">${g.client_name}</span>
         <span class="badge plain badge-plan" data-resource="${grantResourceKind(g.resource)}">${
           grantResourceKind(g.resource) === 'mcp' ? t.sandbox.resourceMcp : t.sandbox.resourceApi
         }</span>${g.mode === 'test' ? html` <span class="badge plain badge-test">${t.sandbox.testBadge}</span>` : ''}
         <br><span class="muted small">${g.redirect_host}</span></td>
      <td data-label="${o.colScopes}">${scopesText(m, g.scopes)}</td>
      <td data-label="${o.colGrantedBy}">${g.granted_by_email ? emailText(g.granted_by_email) : ''}</td>
      <td data-label="${o.colGranted}">${fmt.dateTimeOf(Number(g.created_at))}</td>
      <td data-label="${o.colLastUsed}" class="nowrap">${
        g.last_used_at === null ? html`<span class="muted">${o.neverUsed}</span>` : fmt.ago(Number(g.last_used_at))
      }</td>
      <td data-label="${o.colState}"><span class="badge badge-${ended ? 'revoked' : 'active'}">${state}</span></td>
      ${
        m.canManage
          ? html`<td class="actions">${
              ended
                ? ''
                : html`<a class="btn btn-sm btn-outline-danger"
                   href="${m.url(`/dashboard/settings/api/apps/${g.id}/disconnect`)}">${o.disconnect}</a>`
            }</td>`
          : ''
      }
    </tr>`;
  });
  const table =
    m.grants.length === 0
      ? html`<p class="empty" id="apps-empty">${o.appsNone}</p>`
      : html`<div class="table-wrap"><table class="keys" id="apps">
    <caption class="sr-only">${o.appsTitle}: ${m.clinic.name}</caption>
    <thead><tr><th scope="col">${o.colApp}</th><th scope="col">${o.colScopes}</th><th scope="col">${o.colGrantedBy}</th>
      <th scope="col">${o.colGranted}</th><th scope="col">${o.colLastUsed}</th><th scope="col">${o.colState}</th>${
        m.canManage ? html`<th scope="col"><span class="sr-only">${t.colActions}</span></th>` : ''
      }</tr></thead>
    <tbody>${rows}</tbody></table></div>`;
  const body = html`<nav class="crumbs" aria-label="breadcrumb"><ol>
    <li>${t.settings}</li><li>${t.api}</li><li aria-current="page">${o.appsTitle}</li></ol></nav>
  ${apiTabs(t, m.url, 'apps', m.canManage)}
  <div class="page-head"><div><h1>${o.appsTitle}</h1><p class="lead">${o.appsLead}</p></div>
    <div class="clinic-card"><div class="name">${m.clinic.name}</div></div></div>
  ${flash}
  ${
    m.oauthOn
      ? ''
      : html`<div class="alert alert-info" role="note" id="apps-oauth-off">${icons.info}
        <div class="alert-body"><p>${o.oauthOff}</p></div></div>`
  }
  <section class="card">${table}</section>`;
  return layout({ t, title: o.appsTitle, person: m.person, csrf: m.csrf, body, here: m.url('/dashboard/settings/api/apps') });
}

export function disconnectPage(m: {
  t: Messages;
  o: OAuthMessages;
  fmt: Formatter;
  person: Person;
  csrf: string;
  clinic: Clinic;
  grant: OAuthGrantListing;
  action: string;
  cancel: string;
}): Html {
  const { t, o, fmt, grant } = m;
  const body = html`<div class="card narrow confirm">
    <h1>${o.disconnectTitle(grant.client_name)}</h1>
    <div class="alert alert-warning">${icons.warning}<div class="alert-body"><p>${o.disconnectText}</p></div></div>
    <dl class="facts">
      <dt>${t.clinicLabel}</dt><dd>${m.clinic.name}</dd>
      <dt>${o.colApp}</dt><dd>${grant.client_name} <span class="muted small">${grant.redirect_host}</span></dd>
      <dt>${o.colScopes}</dt><dd>${scopesText(m, grant.scopes)}</dd>
      <dt>${o.colGranted}</dt><dd>${fmt.dateTimeOf(Number(grant.created_at))}${
        grant.granted_by_email ? html` · ${emailText(grant.granted_by_email)}` : ''
      }</dd>
    </dl>
    <form method="post" action="${m.action}">
      ${csrfInput(m.csrf)}
      <div class="btn-row">
        <button type="submit" class="btn btn-danger" id="disconnect-confirm">${o.disconnectConfirm}</button>
        <a class="btn btn-secondary" href="${m.cancel}">${o.cancel}</a>
      </div>
    </form>
  </div>`;
  return layout({ t, title: o.disconnectTitle(grant.client_name), person: m.person, csrf: m.csrf, body, here: m.cancel });
}
