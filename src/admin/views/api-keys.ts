// Settings > API: the clinic's keys, creating one (shown once), revoking, and usage at a glance.
import type { Scope } from '../../domain/scopes.js';
import type { Clinic } from '../../services/accounts.js';
import type { KeyMode, KeyStatus } from '../../services/api-keys.js';
import type { KeyUsage } from '../../services/usage.js';
import { html, type Html, type Renderable } from '../html.js';
import type { Formatter } from '../format.js';
import { hasErrors, type KeyForm } from '../key-input.js';
import { labelOf, type Messages } from '../locales/messages.js';
import type { Flash } from '../../services/sessions.js';
import { icons } from './icons.js';
import { accessFields, expiryFields, nameField, testField } from './key-form.js';
import { sandboxCard } from './sandbox.js';
import { keysTable } from './keys-table.js';
import { apiTabs } from './api-tabs.js';
import { csrfInput, layout, type Person } from './layout.js';

export interface KeyView {
  id: string;
  name: string;
  hint: string;
  createdByEmail: string | null;
  createdAt: number;
  lastUsedAt: number | null;
  expiresAt: number | null;
  status: KeyStatus;
  scopes: Scope[];
  allowedIps: string[] | null;
  /** an active key that expires within 14 days: whole days left (0: today) */
  expiresInDays: number | null;
  /** rolled: the key that replaced it (it works until expiresAt) */
  replacedBy: string | null;
  /**
   * it replaced a key still in its roll's overlap: when that key ends (until then it follows
   * this one's changes and is revoked with it)
   */
  replacesUntil: number | null;
  /** 'test': reads the clinic's sandbox */
  mode: KeyMode;
}

export interface ApiPageModel {
  t: Messages;
  fmt: Formatter;
  person: Person;
  csrf: string;
  clinic: Clinic;
  /** every clinic, for a superadmin's switcher; null for owners and staff */
  clinics: Clinic[] | null;
  canManage: boolean;
  eligible: boolean;
  eligiblePlans: string[];
  owners: string[];
  keys: KeyView[];
  usage: Map<string, KeyUsage>;
  days: string[];
  flash: Flash | null;
  /** the create form: blank, or as posted with its errors */
  form: KeyForm;
  /** the clinic's today, the date field's lowest value */
  today: string;
  apiBase: string;
  /** the MCP server's address (/mcp), for AI assistants */
  mcpUrl: string;
  keyPrefix: string;
  /** adds ?clinic= for a superadmin */
  url: (path: string) => string;
  /** test mode: whether the clinic's sandbox exists, and whether it was just reset */
  sandbox: { exists: boolean; reset: boolean };
}

export function maskedKey(prefix: string, hint: string): string {
  return `${prefix}_…${hint}`;
}

/** What an error code means, then " · "; nothing for a code the catalogue does not know (one since removed). */
function errorHelp(t: Messages, code: string): string {
  const help = labelOf(t.errorHelp, code);
  return help === undefined ? '' : `${help} · `;
}

export function timeEl(fmt: Formatter, epochS: number, text: string): Html {
  return html`<time datetime="${new Date(epochS * 1000).toISOString()}" title="${fmt.dateTimeOf(epochS)}">${text}</time>`;
}

function superadminBar(m: ApiPageModel): Renderable {
  if (!m.clinics) return '';
  const { t } = m;
  return html`<div class="su-bar">
    ${icons.info}<span>${t.superadminBar}</span>
    <form method="get" action="/dashboard/settings/api">
      <label for="clinic-switch">${t.clinicLabel}</label>
      <select id="clinic-switch" name="clinic">
        ${m.clinics.map((c) => html`<option value="${c.id}" ${c.id === m.clinic.id ? html`selected` : ''}>${c.name}</option>`)}
      </select>
      <button type="submit" class="btn btn-secondary btn-sm">${t.switchClinic}</button>
    </form>
  </div>`;
}

function flashPanel(m: ApiPageModel): Renderable {
  const { t, flash } = m;
  if (!flash) return '';
  if (flash.kind !== 'created' && flash.kind !== 'revoked' && flash.kind !== 'updated') return '';
  if (flash.kind === 'revoked' || flash.kind === 'updated') {
    const text = flash.kind === 'revoked' ? t.revokedNotice(flash.name) : t.keys.updatedNotice(flash.name);
    return html`<div class="alert alert-success" role="status">${icons.check}<div class="alert-body"><p>${text}</p></div></div>`;
  }
  const old = flash.oldExpiresAt;
  return html`<section class="newkey" aria-labelledby="new-key-title" id="new-key-panel">
    <h2 id="new-key-title">${icons.key}${t.newKeyTitle(flash.name)}</h2>
    <p class="warn" id="new-key-warning">${icons.lock}<span>${t.newKeyWarning}</span></p>
    <label for="new-key">${t.newKeyLabel}</label>
    <div class="keybox">
      <input type="text" id="new-key" value="${flash.key}" readonly autofocus data-select-on-focus spellcheck="false" autocomplete="off"
        aria-describedby="new-key-warning">
      <button type="button" class="btn" hidden data-copy-target="new-key" data-copy-status="copy-status" data-copied="${t.copied}"
        data-failed="${t.copyFailed}">${icons.copy}${t.copy}</button>
    </div>
    <p class="copy-status" id="copy-status" role="status" aria-live="polite"></p>
    ${
      old === undefined
        ? ''
        : html`<p class="rolled" id="rolled-old">${
            old * 1000 <= m.fmt.nowMs ? t.keys.rolledOldEnded : t.keys.rolledOldUntil(m.fmt.dateTimeOf(old))
          }</p>`
    }
    <div class="after">
      <span>${flash.expiresAt ? t.newKeyExpires(m.fmt.dateOf(flash.expiresAt)) : t.newKeyNoExpiry}</span>
      <a class="btn btn-secondary btn-sm" href="${m.url('/dashboard/settings/api')}">${t.newKeyDone}</a>
    </div>
  </section>`;
}

function notices(m: ApiPageModel): Renderable {
  const { t, fmt } = m;
  const out: Html[] = [];
  if (!m.eligible) {
    const plan = labelOf(t.plans, m.clinic.plan) ?? m.clinic.plan;
    const plans = fmt.or(m.eligiblePlans.map((p) => labelOf(t.plans, p) ?? p));
    out.push(html`<div class="alert alert-warning" role="status" id="plan-notice">${icons.upgrade}<div class="alert-body">
      <h2>${t.planTitle(plan)}</h2><p>${t.planText(plans)}</p></div></div>`);
  }
  if (!m.canManage) {
    out.push(html`<div class="alert alert-info" role="status" id="role-notice">${icons.lock}<div class="alert-body">
      <h2>${t.staffCannotTitle}</h2><p>${t.staffCannotText(m.owners.length ? fmt.or(m.owners) : null)}</p></div></div>`);
  }
  return out;
}

function createForm(m: ApiPageModel): Renderable {
  if (!m.canManage || !m.eligible) return '';
  const { t } = m;
  const f = m.form;
  return html`<section class="card" aria-labelledby="create-title">
  <h2 id="create-title">${t.createTitle}</h2>
  <form method="post" action="/dashboard/settings/api/keys" class="create key-form" novalidate>
    ${csrfInput(m.csrf)}
    <input type="hidden" name="clinic" value="${m.clinic.id}">
    ${
      hasErrors(f)
        ? html`<div class="alert alert-danger" role="alert">${icons.warning}<div class="alert-body"><p>${t.formHasErrors}</p></div></div>`
        : ''
    }
    <div class="form-grid">
      ${nameField(t, f)}
      ${expiryFields(t, f, m.today)}
    </div>
    ${accessFields(t, f)}
    ${testField(t, f, m.keyPrefix)}
    <div class="actions"><button type="submit" class="btn">${icons.key}${t.createButton}</button></div>
  </form>
  </section>`;
}

function usageCard(m: ApiPageModel, k: KeyView, u: KeyUsage | undefined): Html {
  const { t, fmt } = m;
  const days = u?.days ?? m.days.map((day) => ({ day, ok: 0, errors: 0 }));
  const max = Math.max(1, ...days.map((d) => d.ok + d.errors));
  const total = u?.total ?? 0;
  const errors = u?.errors ?? 0;
  return html`<article class="usage-card" aria-labelledby="usage-${k.id}">
    <header>
      <h3 id="usage-${k.id}">${k.name} <span class="hint">${maskedKey(m.keyPrefix, k.hint)}</span></h3>
      <span class="totals"><strong>${fmt.count(t.requests, total)}</strong>${
        errors ? html` · <span class="err">${fmt.count(t.errorsCount, errors)}</span>` : ''
      }</span>
    </header>
    ${html`<ol class="bars">
      ${days.map((d) => {
        const n = d.ok + d.errors;
        const h = n === 0 ? 0 : Math.max(1, Math.round((n / max) * 20));
        const e = d.errors === 0 ? 0 : Math.max(1, Math.round((d.errors / n) * 20));
        return html`<li>
          <span class="sr-only">${t.dayBar(fmt.longDayOf(d.day), fmt.count(t.okRequests, d.ok), fmt.count(t.errorsCount, d.errors))}</span>
          <span class="bar-track"
             aria-hidden="true"><span class="bar h${h} ${n ? 'h-min' : ''}"><span class="bar-err e${e}"></span></span></span>
          <span class="count" aria-hidden="true">${fmt.num(n)}</span>
          <span class="day" aria-hidden="true">${fmt.shortDay(d.day)}</span>
        </li>`;
      })}
    </ol>`}
    <div>
      <h4>${t.lastErrors}</h4>
      ${
        u && u.lastErrors.length
          ? html`<ul class="errors-list">${u.lastErrors.map(
              (e) => html`<li>
            <code>${e.status} ${e.code}</code>
            <span class="what">${errorHelp(t, e.code)}${fmt.count(t.errorTimes, e.count)}</span>
            ${timeEl(fmt, e.at, fmt.ago(e.at))}
          </li>`,
            )}</ul>`
          : html`<p class="ok-line">${t.noErrors}</p>`
      }
    </div>
  </article>`;
}

function usageSection(m: ApiPageModel): Renderable {
  const { t, fmt } = m;
  const nDays = m.days.length;
  const used = m.keys.filter((k) => (m.usage.get(k.id)?.total ?? 0) > 0);
  const idle = m.keys.filter((k) => k.status === 'active' && (m.usage.get(k.id)?.total ?? 0) === 0);
  if (used.length === 0 && idle.length === 0) return '';
  return html`<section class="card" aria-labelledby="usage-title">
    <div class="card-head">
      <div><h2 id="usage-title">${fmt.count(t.usageTitle, nDays)}</h2><p>${t.usageLead(m.clinic.timezone)}</p></div>
      <div class="legend" aria-hidden="true" ${
        used.length ? '' : html`hidden`
      }><span><i class="swatch swatch-ok"></i>${t.legendOk}</span><span><i class="swatch swatch-err"></i>${t.legendErrors}</span></div>
    </div>
    ${
      used.length
        ? html`<div class="usage-grid">${used.map((k) => usageCard(m, k, m.usage.get(k.id)))}</div>`
        : html`<p class="muted">${fmt.count(t.noUsageAtAll, nDays)}</p>`
    }
    ${
      used.length && idle.length
        ? html`<p class="idle-keys">${fmt.count(t.idleKeys, nDays)} ${idle.map(
            (k, i) => html`${i ? ', ' : ''}<span class="key-name">${k.name}</span>`,
          )}</p>`
        : ''
    }
  </section>`;
}

export function apiKeysPage(m: ApiPageModel): Html {
  const { t } = m;
  const body = html`
  <nav class="crumbs" aria-label="breadcrumb"><ol><li>${t.settings}</li><li aria-current="page">${t.api}</li></ol></nav>
  ${superadminBar(m)}
  ${apiTabs(t, m.url, 'keys', m.canManage)}
  <div class="page-head">
    <div><h1>${t.pageTitle}</h1><p class="lead">${t.pageLead}</p></div>
    <div class="clinic-card">
      <div class="name">${m.clinic.name}</div>
      <dl><dt>${t.planLabel}</dt>
        <dd><span class="badge badge-plan plain">${labelOf(t.plans, m.clinic.plan) ?? m.clinic.plan}</span></dd></dl>
    </div>
  </div>
  ${flashPanel(m)}
  ${notices(m)}
  ${createForm(m)}
  <section class="card" aria-labelledby="keys-title">
    <h2 id="keys-title">${t.keysTitle}</h2>
    ${keysTable(m)}
  </section>
  ${usageSection(m)}
  ${sandboxCard(m)}
  <section class="card howto" aria-labelledby="howto-title">
    <h2 id="howto-title">${t.howToTitle}</h2>
    <p>${t.howToText}</p>
    <pre><code>Authorization: Bearer ${m.keyPrefix}_…
curl -H "Authorization: Bearer ${m.keyPrefix}_…" "${m.apiBase}citas?limit=5"</code></pre>
    <p class="muted small">${t.howToMore}</p>
    <h3 id="mcp-title">${t.mcpTitle}</h3>
    <p>${t.mcpText}</p>
    <pre><code id="mcp-url">${m.mcpUrl}</code></pre>
    <p class="muted small">${t.mcpMore(t.keys.scopes['contacto:read'].label)}</p>
  </section>
  <p class="page-foot">${t.timesIn(m.clinic.timezone)}</p>`;
  return layout({
    t,
    title: `${t.pageTitle} · ${m.clinic.name}`,
    person: m.person,
    csrf: m.csrf,
    body,
    here: m.url('/dashboard/settings/api'),
  });
}
