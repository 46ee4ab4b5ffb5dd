// Settings > API > Logs: the clinic's request log (filters, newest first, keyset pages), one
// request in detail, addressed by its request id (every recorded field, the error body; each of the
// requests that carry the id, when a client reused its own), and the client access record (find a
// clienta by name, then every request that disclosed her data). Filters are GET forms: they change
// nothing, so they carry no CSRF token; the page's own forms (sign-out, language) do. Slightly
// over 300 lines: the three views share their helpers (when, who, status, the request line).
import type { Clinic } from '../../services/accounts.js';
import type { ClinicApp } from '../../services/app-log.js';
import type { AccessRow, StoredRequestLogRow } from '../../services/request-log-read.js';
import type { Formatter } from '../format.js';
import { html, type Html, type Renderable } from '../html.js';
import type { Messages } from '../locales/messages.js';
import { STATUS_CLASSES } from '../locales/log-messages.js';
import { icons } from './icons.js';
import { csrfInput, layout, type Person } from './layout.js';
import { exportMessages } from '../locales/export-messages.js';
import { apiTabs } from './api-tabs.js';
import { pathText } from './wrap.js';

export const LOGS_BASE = '/dashboard/settings/api/logs';

interface Common {
  t: Messages;
  fmt: Formatter;
  person: Person;
  csrf: string;
  clinic: Clinic;
  /** a dashboard path with these query parameters (and ?clinic= for a superadmin) */
  link: (path: string, params?: Record<string, string | null>) => string;
  /** the clinic's keys by id, for their names */
  keyNames: ReadonlyMap<string, string>;
  /** the OAuth apps the clinic connected, for the filter */
  apps: readonly ClinicApp[];
  /** the app's name by grant id: a request made with an access token names its app */
  appNames: ReadonlyMap<string, string>;
  /** test mode: the requests of test keys (and apps connected in test mode), to the sandbox */
  test: boolean;
}

export interface LogFilterForm {
  key: string;
  /** an app's client id */
  app: string;
  status: string;
  endpoint: string;
  /** 'test': test mode's requests; '': live ones */
  mode: string;
  /** one request id (the search box) */
  request_id: string;
  since: string;
  until: string;
}

export interface LogsPageModel extends Common {
  days: number;
  form: LogFilterForm;
  badFilter: boolean;
  rows: StoredRequestLogRow[];
  /** the cursor of the next (older) page, or null at the end */
  next: string | null;
  /** this page is not the first */
  paged: boolean;
}

export interface DetailPageModel extends Common {
  requestId: string;
  /** the requests that carry the id, newest first (usually one) */
  found: { entry: StoredRequestLogRow; clientas: string[] }[];
}

/** The address of one request's page: its request id, never the log's row number. */
function detailPath(r: { request_id: string }): string {
  return `${LOGS_BASE}/${encodeURIComponent(r.request_id)}`;
}

export interface AccessPageModel extends Common {
  q: string;
  matches: { rows: { id: string; nombre: string }[]; total: number } | null;
  clienta: { id: string; name: string | null } | null;
  rows: AccessRow[];
  next: string | null;
}

function head(m: Common, title: string, lead: Renderable): Html {
  const { t } = m;
  const test = m.test
    ? html`<div class="alert alert-info" role="status" id="test-mode-notice">${icons.info}<div class="alert-body"><p>
      <span class="badge plain badge-test">${t.sandbox.testBadge}</span> ${t.sandbox.testLogNotice}</p></div></div>`
    : '';
  return html`<nav class="crumbs" aria-label="breadcrumb"><ol>
    <li>${t.settings}</li><li>${t.api}</li><li aria-current="page">${t.logs.tab}</li></ol></nav>
  ${apiTabs(t, (p) => m.link(p), 'logs', true)}
  <div class="page-head"><div><h1>${title}</h1>${lead ? html`<p class="lead">${lead}</p>` : ''}</div>
    <div class="clinic-card"><div class="name">${m.clinic.name}</div></div></div>
  ${test}`;
}

function when(m: Common, atMs: number): Html {
  return html`<time datetime="${new Date(atMs).toISOString()}">${m.fmt.dateTimeOf(Math.floor(atMs / 1000))}</time>`;
}

function keyName(m: Common, keyId: string | null): string {
  if (keyId === null) return m.t.logs.none;
  return m.keyNames.get(keyId) ?? m.t.logs.unknownKey;
}

/** Who made a request: its key, or the app its access token was granted to (by name, marked as an app). */
function callerName(m: Common, r: { key_id: string | null; grant_id: string | null }): Html {
  if (r.grant_id === null) return html`<span class="key-name">${keyName(m, r.key_id)}</span>`;
  return html`<span class="key-name">${appName(m, r.grant_id)}</span> <span class="badge plain badge-plan">${m.t.logs.appBadge}</span>`;
}

function appName(m: Common, grantId: string): string {
  return m.appNames.get(grantId) ?? m.t.logs.unknownApp;
}

function statusBadge(status: number): Html {
  return html`<span class="badge badge-${status < 400 ? 'active' : 'expired'}">${String(status)}</span>`;
}

function requestText(r: { method: string; path: string; query: string | null }): string {
  return `${r.method} ${r.path}${r.query ? `?${r.query}` : ''}`;
}

function filters(m: LogsPageModel): Html {
  const { t, form } = m;
  const L = t.logs;
  const option = (value: string, label: string, current: string) =>
    html`<option value="${value}" ${value === current ? html`selected` : ''}>${label}</option>`;
  return html`<section class="card" aria-labelledby="filters-title">
  <h2 id="filters-title">${L.filtersTitle}</h2>
  ${
    m.badFilter
      ? html`<div class="alert alert-warning" role="status" id="bad-filter">${icons.warning}
        <div class="alert-body"><p>${L.badFilter}</p></div></div>`
      : ''
  }
  <form method="get" action="${LOGS_BASE}" class="log-filters">
    ${m.person.role === 'superadmin' ? html`<input type="hidden" name="clinic" value="${m.clinic.id}">` : ''}
    <div class="form-grid">
      <div class="field"><label for="f-mode">${t.sandbox.modeLabel}</label>
        <select id="f-mode" name="mode">${option('', t.sandbox.modeLive, form.mode)}
          ${option('test', t.sandbox.modeTest, form.mode)}</select></div>
      <div class="field"><label for="f-key">${L.filterKey}</label>
        <select id="f-key" name="key">${option('', L.anyKey, form.key)}
          ${[...m.keyNames].map(([id, name]) => option(id, name, form.key))}</select></div>
      ${
        m.apps.length > 0
          ? html`<div class="field"><label for="f-app">${L.filterApp}</label>
        <select id="f-app" name="app">${option('', L.anyApp, form.app)}
          ${m.apps.map((a) => option(a.clientId, a.name, form.app))}</select></div>`
          : ''
      }
      <div class="field"><label for="f-status">${L.filterStatus}</label>
        <select id="f-status" name="status">${option('', L.anyStatus, form.status)}
          ${STATUS_CLASSES.map((c) => option(c, L.statusClasses[c], form.status))}</select></div>
      <div class="field"><label for="f-endpoint">${L.filterEndpoint}</label>
        <input type="text" id="f-endpoint" name="endpoint" value="${form.endpoint}" maxlength="200" spellcheck="false" autocomplete="off"
           placeholder="/api/v1/citas" aria-describedby="f-endpoint-help"></div>
      <div class="field"><label for="f-request-id">${L.filterRequestId}</label>
        <input type="search" id="f-request-id" name="request_id" value="${form.request_id}" maxlength="128" spellcheck="false"
           autocomplete="off" aria-describedby="f-request-id-help"></div>
      <div class="field"><label for="f-since">${L.filterSince}</label>
        <input type="date" id="f-since" name="since" value="${form.since}" aria-describedby="f-dates-help"></div>
      <div class="field"><label for="f-until">${L.filterUntil}</label>
        <input type="date" id="f-until" name="until" value="${form.until}" aria-describedby="f-dates-help"></div>
    </div>
    <p class="help" id="f-endpoint-help">${L.endpointHelp}</p>
    <p class="help" id="f-request-id-help">${L.requestIdHelp}</p>
    <p class="help" id="f-dates-help">${L.datesHelp}</p>
    <div class="btn-row"><button type="submit" class="btn">${L.apply}</button>
      <a class="btn btn-secondary" href="${m.link(LOGS_BASE)}">${L.clear}</a></div>
  </form>
  </section>`;
}

function requestsTable(m: LogsPageModel): Renderable {
  const { t, fmt } = m;
  const L = t.logs;
  if (m.rows.length === 0) return html`<p class="empty" id="no-requests">${L.noRequests}</p>`;
  return html`<div class="table-wrap"><table class="keys request-log">
    <caption class="sr-only">${L.requestsTitle}</caption>
    <thead><tr><th scope="col">${L.colTime}</th><th scope="col">${L.colKey}</th><th scope="col">${L.colRequest}</th>
      <th scope="col">${L.colStatus}</th><th scope="col">${L.colDuration}</th><th scope="col">${L.colRecords}</th>
      <th scope="col"><span class="sr-only">${t.colActions}</span></th></tr></thead>
    <tbody>
    ${m.rows.map(
      (r) => html`<tr data-request-id="${r.request_id}" data-status="${String(r.status)}">
      <td data-label="${L.colTime}" class="nowrap">${when(m, r.at_ms)}</td>
      <td data-label="${L.colKey}">${callerName(m, r)}</td>
      <td data-label="${L.colRequest}" class="url"><code>${pathText(requestText(r))}</code></td>
      <td data-label="${L.colStatus}">${statusBadge(r.status)}${r.error_code ? html` <code class="small">${r.error_code}</code>` : ''}</td>
      <td data-label="${L.colDuration}" class="nowrap">${fmt.num(r.duration_ms)} ms</td>
      <td data-label="${L.colRecords}">${r.records === null ? L.none : fmt.num(r.records)}</td>
      <td class="actions"><a class="btn btn-sm btn-secondary" href="${m.link(detailPath(r))}"
        aria-label="${L.detailsOf(requestText(r))}">${L.details}</a></td>
    </tr>`,
    )}
    </tbody></table></div>`;
}

export function logsPage(m: LogsPageModel): Html {
  const { t } = m;
  const L = t.logs;
  const pager =
    m.next || m.paged
      ? html`<div class="btn-row pager">${
          m.paged ? html`<a class="btn btn-secondary btn-sm" href="${m.link(LOGS_BASE, { ...m.form })}">${L.newest}</a>` : ''
        }${
          m.next
            ? html`<a class="btn btn-secondary btn-sm" rel="next" href="${m.link(LOGS_BASE, { ...m.form, before: m.next })}">${L.older}</a>`
            : ''
        }</div>`
      : '';
  const body = html`${head(m, L.pageTitle, L.pageLead)}
  ${
    m.days === 0
      ? html`<div class="alert alert-info" role="status" id="log-off">${icons.info}<div class="alert-body"><p>${L.off}</p></div></div>`
      : ''
  }
  ${filters(m)}
  <section class="card" aria-labelledby="requests-title">
    <h2 id="requests-title">${L.requestsTitle}</h2>
    ${requestsTable(m)}
    ${pager}
  </section>
  <section class="card" aria-labelledby="access-title">
    <h2 id="access-title">${L.accessTitle}</h2>
    <p>${L.accessLead}</p>
    ${searchForm(m, '')}
  </section>
  <p class="page-foot">${m.days > 0 ? html`${L.kept(String(m.days))} ` : ''}${t.timesIn(m.clinic.timezone)}</p>`;
  return layout({ t, title: `${L.pageTitle} · ${m.clinic.name}`, person: m.person, csrf: m.csrf, body, here: m.link(LOGS_BASE) });
}

/**
 * One logged request: every recorded field, the error body, the clientas it disclosed. `n`: its
 * place among the requests that carry the id (0: the newest), which suffixes its elements' ids.
 */
function oneRequest(m: DetailPageModel, found: DetailPageModel['found'][number], n: number): Html {
  const { t, fmt } = m;
  const { entry: e, clientas } = found;
  const L = t.logs;
  const id = (name: string) => (n === 0 ? name : `${name}-${n + 1}`);
  const opt = (v: string | null) => (v === null || v === '' ? L.none : v);
  const small = (v: string) => html`<code class="small">${v}</code>`;
  return html`<section class="card" aria-labelledby="${id('detail-title')}">
    <h2 id="${id('detail-title')}">${L.detailTitle}${n === 0 ? '' : html` ${String(n + 1)}`}</h2>
    <dl class="facts" id="${id('request-facts')}">
      <dt>${L.fieldTime}</dt><dd>${when(m, e.at_ms)}</dd>
      <dt>${L.fieldRequestId}</dt><dd><code>${e.request_id}</code></dd>
      ${
        e.grant_id
          ? html`<dt>${L.fieldGrant}</dt><dd id="${id('request-app')}">${appName(m, e.grant_id)} ${small(e.grant_id)}</dd>`
          : html`<dt>${L.fieldKey}</dt><dd>${keyName(m, e.key_id)}${e.key_id ? html` <code class="small">${e.key_id}</code>` : ''}</dd>`
      }
      <dt>${L.fieldMethod}</dt><dd><code>${e.method}</code></dd>
      <dt>${L.fieldPath}</dt><dd class="url"><code>${pathText(e.path)}</code></dd>
      <dt>${L.fieldQuery}</dt><dd class="url">${e.query ? html`<code>${pathText(e.query)}</code>` : L.none}</dd>
      <dt>${L.fieldStatus}</dt><dd>${statusBadge(e.status)}</dd>
      <dt>${L.fieldErrorCode}</dt><dd>${e.error_code ? html`<code>${e.error_code}</code>` : L.none}</dd>
      <dt>${L.fieldDuration}</dt><dd>${fmt.num(e.duration_ms)} ms</dd>
      <dt>${L.fieldRecords}</dt><dd>${e.records === null ? L.none : fmt.num(e.records)}</dd>
      <dt>${L.fieldClientIp}</dt><dd>${opt(e.client_ip)}</dd>
      <dt>${L.fieldUserAgent}</dt><dd class="url">${opt(e.user_agent)}</dd>
    </dl>
    ${
      e.error_body
        ? html`<h3>${L.errorBodyTitle}</h3><pre class="error-body" id="${id('error-body')}"><code>${prettyJson(e.error_body)}</code></pre>`
        : ''
    }
  </section>
  <section class="card" aria-labelledby="${id('disclosed-title')}">
    <h2 id="${id('disclosed-title')}">${L.disclosedTitle}</h2>
    ${
      clientas.length === 0
        ? html`<p class="muted" id="${id('none-disclosed')}">${L.noneDisclosed}</p>`
        : html`<p>${fmt.count(L.disclosed, clientas.length)}</p><ul class="disclosed" id="${id('disclosed')}">${clientas.map(
            (c) => html`<li><a href="${m.link(`${LOGS_BASE}/access`, { clienta: c })}"><code>${c}</code></a></li>`,
          )}</ul>`
    }
  </section>`;
}

export function detailPage(m: DetailPageModel): Html {
  const { t, fmt } = m;
  const L = t.logs;
  const first = m.found[0]!.entry;
  const body = html`${head(m, `${L.detailTitle}: ${first.method} ${first.path}`, '')}
  ${
    m.found.length > 1
      ? html`<div class="alert alert-info" role="status" id="same-request-id">${icons.info}<div class="alert-body"><p>${fmt.count(
          L.sameRequestId,
          m.found.length,
        )} <a href="${m.link(LOGS_BASE, { request_id: m.requestId })}">${L.seeInList}</a></p></div></div>`
      : ''
  }
  ${m.found.map((f, n) => oneRequest(m, f, n))}
  <p class="page-foot"><a href="${m.link(LOGS_BASE)}">${L.back}</a> · ${t.timesIn(m.clinic.timezone)}</p>`;
  return layout({
    t,
    title: `${L.detailTitle} · ${m.clinic.name}`,
    person: m.person,
    csrf: m.csrf,
    body,
    here: m.link(detailPath(first)),
  });
}

/** The error body as stored, indented when it is JSON (it always is, from the API). */
function prettyJson(s: string): string {
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return s;
  }
}

function searchForm(m: Common, q: string): Html {
  const L = m.t.logs;
  return html`<form method="get" action="${LOGS_BASE}/access" class="form-row clienta-search" role="search">
    ${m.person.role === 'superadmin' ? html`<input type="hidden" name="clinic" value="${m.clinic.id}">` : ''}
    ${m.test ? html`<input type="hidden" name="mode" value="test">` : ''}
    <div class="field"><label for="clienta-q">${L.searchLabel}</label>
      <input type="text" id="clienta-q" name="q" value="${q}" maxlength="100" autocomplete="off" spellcheck="false"
         aria-describedby="clienta-q-help">
      <p class="help" id="clienta-q-help">${L.searchHelp}</p></div>
    <div class="actions"><button type="submit" class="btn">${L.searchButton}</button></div>
  </form>`;
}

function matchesList(m: AccessPageModel): Renderable {
  const { fmt } = m;
  const L = m.t.logs;
  if (m.matches === null) return '';
  if (m.matches.rows.length === 0) return html`<p class="empty" id="no-matches">${L.noMatches(m.q)}</p>`;
  return html`<p>${fmt.count(L.matches, m.matches.total)}${m.matches.total > m.matches.rows.length ? html` ${L.narrow}` : ''}</p>
    <ul class="clienta-matches" id="clienta-matches">${m.matches.rows.map(
      (c) =>
        html`<li><span class="key-name">${c.nombre}</span> <a class="btn btn-sm btn-secondary"
           href="${m.link(`${LOGS_BASE}/access`, { clienta: c.id })}">${L.seeAccess}</a></li>`,
    )}</ul>`;
}

function accessTable(m: AccessPageModel): Renderable {
  const { t } = m;
  const L = t.logs;
  if (m.clienta === null) return '';
  const name = m.clienta.name ?? L.erased;
  const table =
    m.rows.length === 0
      ? html`<p class="empty" id="no-access">${L.noAccess}</p>`
      : html`<div class="table-wrap"><table class="keys access-record">
    <caption class="sr-only">${L.accessOf(name)}</caption>
    <thead><tr><th scope="col">${L.colTime}</th><th scope="col">${L.colKey}</th><th scope="col">${L.colEndpoint}</th>
      <th scope="col">${L.colStatus}</th><th scope="col"><span class="sr-only">${t.colActions}</span></th></tr></thead>
    <tbody>${m.rows.map(
      (r) => html`<tr data-request-id="${r.request_id}">
      <td data-label="${L.colTime}" class="nowrap">${when(m, r.at_ms)}</td>
      <td data-label="${L.colKey}">${callerName(m, r)}</td>
      <td data-label="${L.colEndpoint}" class="url"><code>${pathText(requestText(r))}</code></td>
      <td data-label="${L.colStatus}">${statusBadge(r.status)}</td>
      <td class="actions"><a class="btn btn-sm btn-secondary" href="${m.link(detailPath(r))}"
        aria-label="${L.detailsOf(requestText(r))}">${L.details}</a></td>
    </tr>`,
    )}</tbody></table></div>
    ${
      m.next
        ? html`<div class="btn-row pager"><a class="btn btn-secondary btn-sm" rel="next"
           href="${m.link(`${LOGS_BASE}/access`, { clienta: m.clienta.id, before: m.next })}">${L.olderAccess}</a></div>`
        : ''
    }`;
  return html`<section class="card" aria-labelledby="access-of-title">
    <h2 id="access-of-title">${L.accessOf(name)}</h2>
    <p class="muted small"><code>${m.clienta.id}</code></p>
    ${m.person.role === 'owner' ? clientaExportForm(m, m.clienta.id) : ''}
    ${table}
  </section>`;
}

/** The owner's button: her data as a ZIP (routes-logs.ts, `access/export`). */
function clientaExportForm(m: AccessPageModel, clientaId: string): Html {
  const E = exportMessages(m.t.htmlLang);
  return html`<form method="post" action="${LOGS_BASE}/access/export" class="btn-row" id="clienta-export">${csrfInput(m.csrf)}
    <input type="hidden" name="clienta" value="${clientaId}">
    <button type="submit" class="btn btn-secondary btn-sm" aria-describedby="clienta-export-help">${E.clientaButton}</button>
    <p class="help" id="clienta-export-help">${E.clientaHelp}</p></form>`;
}

export function accessPage(m: AccessPageModel): Html {
  const { t } = m;
  const L = t.logs;
  const body = html`${head(m, L.accessTitle, L.accessLead)}
  <section class="card" aria-labelledby="search-title">
    <h2 id="search-title">${m.clienta ? L.otherClienta : L.searchLabel}</h2>
    ${searchForm(m, m.q)}
    ${matchesList(m)}
  </section>
  ${accessTable(m)}
  <p class="page-foot"><a href="${m.link(LOGS_BASE)}">${L.back}</a> · ${t.timesIn(m.clinic.timezone)}</p>`;
  return layout({
    t,
    title: `${L.accessTitle} · ${m.clinic.name}`,
    person: m.person,
    csrf: m.csrf,
    body,
    here: m.link(`${LOGS_BASE}/access`),
  });
}
