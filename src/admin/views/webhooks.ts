// Settings > API > Webhooks: the clinic's endpoints (adding one shows its secret once), one
// endpoint with its recent deliveries and actions, and the delete confirmation. Test endpoints
// (the clinic's sandbox's) are listed in a group of their own and marked on every page with the
// badge that marks test keys.
import { EVENT_TYPES } from '../../collections/index.js';
import type { Clinic } from '../../services/accounts.js';
import type { Flash } from '../../services/sessions.js';
import type { DeliveryRow, EndpointRow, Subscriber } from '../../services/webhooks/endpoints.js';
import { endpointStatus } from '../../services/webhooks/endpoints.js';
import { html, type Html, type Renderable } from '../html.js';
import type { Formatter } from '../format.js';
import { labelOf, type Messages, type WebhookFormError } from '../locales/messages.js';
import { apiTabs } from './api-tabs.js';
import { icons } from './icons.js';
import { csrfInput, layout, type Person } from './layout.js';

export interface WebhookForm {
  url: string;
  events: string[];
  /** "Test endpoint": made in the clinic's sandbox */
  test: boolean;
  error: WebhookFormError | null;
}

interface Common {
  t: Messages;
  fmt: Formatter;
  person: Person;
  csrf: string;
  clinic: Clinic;
  canManage: boolean;
  /** adds ?clinic= for a superadmin */
  url: (path: string) => string;
}

export interface WebhooksPageModel extends Common {
  eligible: boolean;
  /** WEBHOOK_ALLOW_PRIVATE: http:// and private addresses are accepted, and the help says so */
  allowPrivate: boolean;
  eligiblePlans: string[];
  endpoints: EndpointRow[];
  /** the sandbox's endpoints (test endpoints); null: the clinic has no sandbox yet */
  testEndpoints: EndpointRow[] | null;
  /** by endpoint id: the key or app that subscribed it by API (null: added here or with the CLI) */
  subscribers: ReadonlyMap<string, Subscriber | null>;
  flash: Flash | null;
  form: WebhookForm | null;
}

export interface EndpointPageModel extends Common {
  endpoint: EndpointRow;
  deliveries: DeliveryRow[];
  flash: Flash | null;
  /** the key or app that subscribed it by API; null: added here or with the CLI */
  subscriber: Subscriber | null;
  /** the log's filters as asked (query text), the page of older attempts, and how long the log keeps them */
  filter: LogFilter;
  older: string | null;
  logDays: number;
}

export interface LogFilter {
  outcome: string;
  tipo: string;
  since: string;
  until: string;
}

export interface AttemptPageModel extends Common {
  endpoint: EndpointRow;
  delivery: DeliveryRow;
}

const base = '/dashboard/settings/api/webhooks';

function head(m: Common, title: string, lead: string | null): Html {
  const { t } = m;
  return html`<nav class="crumbs" aria-label="breadcrumb"><ol>
    <li>${t.settings}</li><li>${t.api}</li><li aria-current="page">${t.wh.pageTitle}</li></ol></nav>
  ${apiTabs(t, m.url, 'webhooks', m.canManage)}
  <div class="page-head"><div><h1>${title}</h1>${lead ? html`<p class="lead">${lead}</p>` : ''}</div>
    <div class="clinic-card"><div class="name">${m.clinic.name}</div></div></div>`;
}

function flashPanel(m: Common & { flash: Flash | null }): Renderable {
  const { t, flash } = m;
  if (!flash) return '';
  if (flash.kind === 'webhook-notice') {
    const ok = flash.tone === 'success';
    return html`<div class="alert alert-${ok ? 'success' : 'danger'}" role="status" id="webhook-notice">${ok ? icons.check : icons.warning}
      <div class="alert-body"><p>${flash.text}</p></div></div>`;
  }
  if (flash.kind !== 'webhook-created') return '';
  return html`<section class="newkey" aria-labelledby="new-secret-title" id="new-secret-panel">
    <h2 id="new-secret-title">${icons.key}${t.wh.newTitle}</h2>
    <p class="warn" id="new-secret-warning">${icons.lock}<span>${t.wh.newWarning}</span></p>
    <p class="muted small">${flash.url}</p>
    <label for="new-secret">${t.wh.secretLabel}</label>
    <div class="keybox">
      <input type="text" id="new-secret" value="${flash.secret}" readonly autofocus data-select-on-focus spellcheck="false"
        autocomplete="off" aria-describedby="new-secret-warning">
      <button type="button" class="btn" hidden data-copy-target="new-secret" data-copy-status="copy-status" data-copied="${t.copied}"
        data-failed="${t.copyFailed}">${icons.copy}${t.copy}</button>
    </div>
    <p class="copy-status" id="copy-status" role="status" aria-live="polite"></p>
    <div class="after"><span></span><a class="btn btn-secondary btn-sm"
       href="${m.url(`${base}/${flash.endpointId}`)}">${t.wh.newDone}</a></div>
  </section>`;
}

function readOnlyNotice(m: Common): Renderable {
  if (m.canManage) return '';
  const { t } = m;
  return html`<div class="alert alert-info" role="status" id="role-notice">${icons.lock}<div class="alert-body">
    <h2>${t.wh.staffCannotTitle}</h2><p>${t.wh.staffCannotText}</p></div></div>`;
}

function createForm(m: WebhooksPageModel): Renderable {
  const { t, fmt } = m;
  if (!m.canManage) return '';
  if (!m.eligible) {
    return html`<div class="alert alert-warning" role="status" id="plan-notice">${icons.upgrade}
      <div class="alert-body"><p>${t.wh.planText(fmt.or(m.eligiblePlans.map((p) => labelOf(t.plans, p) ?? p)))}</p></div></div>`;
  }
  const f = m.form ?? { url: '', events: [], test: false, error: null };
  const urlError = f.error !== null && f.error !== 'events' ? f.error : null;
  return html`<section class="card" aria-labelledby="create-title">
  <h2 id="create-title">${t.wh.createTitle}</h2>
  <form method="post" action="${base}" class="create webhook-create" novalidate>
    ${csrfInput(m.csrf)}
    <input type="hidden" name="clinic" value="${m.clinic.id}">
    ${
      f.error
        ? html`<div class="alert alert-danger" role="alert">${icons.warning}
          <div class="alert-body"><p>${t.wh.formHasErrors}</p></div></div>`
        : ''
    }
    <div class="field">
      <label for="webhook-url">${t.wh.urlLabel}</label>
      <input type="url" id="webhook-url" name="url" value="${f.url}" required maxlength="2000" placeholder="https://" autocomplete="off"
        spellcheck="false"
        aria-describedby="${urlError ? 'webhook-url-error webhook-url-help' : 'webhook-url-help'}" ${
          urlError ? html`aria-invalid="true" autofocus` : ''
        }>
      ${
        urlError
          ? html`<p class="field-error" id="webhook-url-error">${
              urlError === 'limit' && f.test ? t.sandbox.testEndpointLimit : t.wh.refusals[urlError]
            }</p>`
          : ''
      }
      <p class="help" id="webhook-url-help">${m.allowPrivate ? t.wh.urlHelpPrivate : t.wh.urlHelp}</p>
    </div>
    <fieldset class="field events-choice" aria-describedby="webhook-events-help">
      <legend>${t.wh.eventsLabel}</legend>
      ${f.error === 'events' ? html`<p class="field-error">${t.wh.refusals.events}</p>` : ''}
      <div class="checks">
      ${EVENT_TYPES.map(
        (type) =>
          html`<label class="check"><input type="checkbox" name="events" value="${type}" ${
            f.events.includes(type) ? html`checked` : ''
          }> <code>${type}</code></label>`,
      )}
      </div>
      <p class="help" id="webhook-events-help">${t.wh.eventsHelp}</p>
    </fieldset>
    <div class="field">
      <label class="scope" for="webhook-test">
        <input type="checkbox" id="webhook-test" name="mode" value="test" aria-describedby="webhook-test-help" ${
          f.test ? html`checked` : ''
        }>
        <span><span class="scope-name">${t.sandbox.testEndpointLabel}</span>
        <span class="scope-what" id="webhook-test-help">${t.sandbox.testEndpointHelp}</span></span>
      </label>
    </div>
    <div class="actions"><button type="submit" class="btn">${t.wh.createButton}</button></div>
  </form>
  </section>`;
}

function statusBadge(t: Messages, e: EndpointRow): Html {
  const s = endpointStatus(e);
  return html`<span class="badge badge-${s === 'active' ? 'active' : s === 'failing' ? 'expired' : 'revoked'}">${t.wh.status[s]}</span>`;
}

/** The badge of a test endpoint (one of the sandbox's, not of the clinic in view), as test keys have. */
function testBadge(m: Common, e: EndpointRow): Renderable {
  return e.clinic_id !== m.clinic.id ? html` <span class="badge plain badge-test">${m.t.sandbox.testBadge}</span>` : '';
}

function typesText(t: Messages, e: EndpointRow): string {
  return e.event_types?.join(', ') ?? t.wh.allEvents;
}

function stateLine(m: Common, e: EndpointRow): Renderable {
  const { t, fmt } = m;
  if (!e.enabled) {
    const when = e.disabled_at ? fmt.dateTimeOf(e.disabled_at) : '';
    const reason = e.disabled_reason;
    return html`<p class="state-line" id="state-line">${
      reason === 'failing'
        ? t.wh.disabledFailing(when, errorText(t, e.last_error))
        : reason === 'key_revoked' || reason === 'key_expired' || reason === 'grant_revoked'
          ? t.wh.disabledCredential[reason](when)
          : t.wh.disabledManual(when)
    }</p>`;
  }
  if (e.failing_since_ms !== null) {
    return html`<p class="state-line" id="state-line">${t.wh.failingSince(
      fmt.dateTimeOf(Math.floor(e.failing_since_ms / 1000)),
      errorText(t, e.last_error),
    )}</p>`;
  }
  return '';
}

function errorText(t: Messages, error: string | null): string {
  if (error === null) return '?';
  return labelOf(t.wh.errors, error) ?? error;
}

function subscribedBy(t: Messages, s: Subscriber | null | undefined): Renderable {
  return s ? html`<span class="sub">${t.wh.subscriber[s.kind](s.name)}</span>` : '';
}

function endpointsTable(m: WebhooksPageModel, endpoints: EndpointRow[], title: string, empty: string): Renderable {
  const { t, fmt } = m;
  if (endpoints.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<div class="table-wrap"><table class="keys webhooks">
    <caption class="sr-only">${title}: ${m.clinic.name}</caption>
    <thead><tr><th scope="col">${t.wh.colUrl}</th><th scope="col">${t.wh.colEvents}</th><th scope="col">${t.wh.colCreated}</th>
      <th scope="col">${t.wh.colStatus}</th><th scope="col"><span class="sr-only">${t.colActions}</span></th></tr></thead>
    <tbody>
    ${endpoints.map(
      (e) => html`<tr data-endpoint-id="${e.id}" class="${e.enabled ? '' : 'is-inactive'}">
      <td data-label="${t.wh.colUrl}" class="cell-name"><span class="url">${e.url}</span>${testBadge(m, e)}${subscribedBy(
        t,
        m.subscribers.get(e.id),
      )}</td>
      <td data-label="${t.wh.colEvents}">${typesText(t, e)}</td>
      <td data-label="${t.wh.colCreated}" class="nowrap">${fmt.dateOf(e.created_at)}</td>
      <td data-label="${t.wh.colStatus}">${statusBadge(t, e)}</td>
      <td class="actions"><a class="btn btn-sm btn-secondary" href="${m.url(`${base}/${e.id}`)}"
         aria-label="${t.wh.detailsOf(e.url)}">${t.wh.details}</a></td>
    </tr>`,
    )}
    </tbody></table></div>`;
}

/**
 * The banner on every dashboard page while an endpoint of the clinic is in a delivery incident
 * (failing for WEBHOOK_ALERT_AFTER_MIN, or disabled by it), until deliveries succeed again.
 */
export function incidentBanner(
  t: Messages,
  incidents: { id: string; url: string; alert_stage: number }[],
  url: (path: string) => string,
): Html {
  return html`<div class="alert alert-danger" role="alert" id="webhook-incident">${icons.warning}<div class="alert-body">
    <p>${t.wh.incidentTitle}</p><ul>${incidents.map((e) => {
      const state = e.alert_stage >= 2 ? t.wh.incidentDisabled : t.wh.incidentFailing;
      return html`<li><a href="${url(`${base}/${e.id}`)}">${e.url}</a>: ${state}</li>`;
    })}</ul></div></div>`;
}

export function webhooksPage(m: WebhooksPageModel): Html {
  const { t } = m;
  const body = html`${head(m, t.wh.pageTitle, t.wh.pageLead)}
  ${flashPanel(m)}
  ${readOnlyNotice(m)}
  ${createForm(m)}
  <section class="card" aria-labelledby="endpoints-title">
    <h2 id="endpoints-title">${t.wh.endpointsTitle}</h2>
    ${endpointsTable(m, m.endpoints, t.wh.endpointsTitle, t.wh.noEndpoints)}
  </section>
  ${
    m.testEndpoints === null
      ? ''
      : html`<section class="card" aria-labelledby="test-endpoints-title" id="test-endpoints">
    <h2 id="test-endpoints-title">${t.sandbox.testEndpointsTitle}</h2>
    ${endpointsTable(m, m.testEndpoints, t.sandbox.testEndpointsTitle, t.sandbox.noTestEndpoints)}
  </section>`
  }
  <p class="page-foot">${t.wh.docsHint} ${t.timesIn(m.clinic.timezone)}</p>`;
  return layout({ t, title: `${t.wh.pageTitle} · ${m.clinic.name}`, person: m.person, csrf: m.csrf, body, here: m.url(base) });
}

function postButton(m: Common, action: string, label: string, cls = 'btn btn-secondary btn-sm', aria?: string): Html {
  return html`<form method="post" action="${m.url(action)}" class="inline">${csrfInput(m.csrf)}<button type="submit" class="${cls}" ${
    aria ? html`aria-label="${aria}"` : ''
  }>${label}</button></form>`;
}

/** The log's filters: outcome, event type, from and to (the clinic's dates); a GET form, so the page can be linked. */
function logFilters(m: EndpointPageModel): Html {
  const { t, filter: f } = m;
  const option = (value: string, label: string, chosen: string) =>
    html`<option value="${value}" ${value === chosen ? html`selected` : ''}>${label}</option>`;
  return html`<form method="get" action="${base}/${m.endpoint.id}" class="log-filters" id="log-filters">
    ${m.person.role === 'superadmin' ? html`<input type="hidden" name="clinic" value="${m.clinic.id}">` : ''}
    <label>${t.wh.log.outcome} <select name="outcome">${option('', t.wh.log.any, f.outcome)}${option(
      'delivered',
      t.wh.outcome.delivered,
      f.outcome,
    )}${option('failed', t.wh.outcome.failed, f.outcome)}</select></label>
    <label>${t.wh.log.type} <select name="tipo">${option('', t.wh.log.any, f.tipo)}${EVENT_TYPES.map((e) =>
      option(e, e, f.tipo),
    )}${option('ping', 'ping', f.tipo)}</select></label>
    <label>${t.wh.log.since} <input type="date" name="since" value="${f.since}"></label>
    <label>${t.wh.log.until} <input type="date" name="until" value="${f.until}"></label>
    <button type="submit" class="btn btn-sm btn-secondary">${t.wh.log.apply}</button>
  </form>`;
}

function deliveriesTable(m: EndpointPageModel): Renderable {
  const { t, fmt } = m;
  if (m.deliveries.length === 0) return html`<p class="empty">${t.wh.noDeliveries}</p>`;
  return html`<div class="table-wrap"><table class="keys deliveries">
    <caption class="sr-only">${t.wh.deliveriesTitle}</caption>
    <thead><tr><th scope="col">${t.wh.colTime}</th><th scope="col">${t.wh.colEvent}</th><th scope="col">${t.wh.colAttempt}</th>
      <th scope="col">${t.wh.colResult}</th><th scope="col">${t.wh.colResponse}</th><th scope="col">${t.wh.colDuration}</th>
      <th scope="col"><span class="sr-only">${t.wh.log.details}</span></th>${
        m.canManage ? html`<th scope="col"><span class="sr-only">${t.colActions}</span></th>` : ''
      }</tr></thead>
    <tbody>
    ${m.deliveries.map((d) => {
      const at = Math.floor(d.at_ms / 1000);
      const kind = labelOf(t.wh.kinds, d.kind);
      return html`<tr data-delivery-id="${d.id}" data-outcome="${d.outcome}">
      <td data-label="${t.wh.colTime}" class="nowrap"><time datetime="${new Date(d.at_ms).toISOString()}">${fmt.dateTimeOf(at)}</time></td>
      <td data-label="${t.wh.colEvent}"><code>${d.tipo}</code>${kind ? html` <span class="muted small">(${kind})</span>` : ''}</td>
      <td data-label="${t.wh.colAttempt}">${fmt.num(d.attempt)}</td>
      <td data-label="${t.wh.colResult}"><span class="badge badge-${d.outcome === 'delivered' ? 'active' : 'expired'}">${
        labelOf(t.wh.outcome, d.outcome) ?? d.outcome
      }</span></td>
      <td data-label="${t.wh.colResponse}" class="response">${
        d.status_code !== null ? html`<code>HTTP ${d.status_code}</code>` : errorText(t, d.error)
      }</td>
      <td data-label="${t.wh.colDuration}" class="nowrap">${fmt.num(d.duration_ms)} ms</td>
      <td class="actions"><a class="btn btn-sm btn-secondary" href="${m.url(`${base}/${m.endpoint.id}/deliveries/${d.id}`)}"
        aria-label="${t.wh.log.detailsOf(d.tipo, fmt.dateTimeOf(at))}">${t.wh.log.details}</a></td>
      ${
        m.canManage
          ? html`<td class="actions">${postButton(
              m,
              `${base}/${m.endpoint.id}/deliveries/${d.id}/resend`,
              t.wh.resend,
              'btn btn-sm btn-secondary',
              t.wh.resendOf(d.tipo, fmt.dateTimeOf(at)),
            )}</td>`
          : ''
      }
    </tr>`;
    })}
    </tbody></table></div>`;
}

/** Who subscribed the endpoint by API (a key, or an app), when one did. */
function subscriberFact(m: EndpointPageModel): Renderable {
  const s = m.subscriber;
  if (!s) return '';
  return html`<dt>${m.t.wh.subscribedBy}</dt><dd id="endpoint-subscriber">${m.t.wh.subscriber[s.kind](s.name)}</dd>`;
}

export function endpointPage(m: EndpointPageModel): Html {
  const { t, fmt, endpoint: e } = m;
  const path = `${base}/${e.id}`;
  const body = html`${head(m, e.url, null)}
  ${flashPanel(m)}
  ${readOnlyNotice(m)}
  <section class="card" aria-labelledby="endpoint-title">
    <h2 id="endpoint-title">${t.wh.pageTitle}</h2>
    <dl class="facts">
      <dt>${t.wh.colUrl}</dt><dd class="url">${e.url}${testBadge(m, e)}</dd>
      <dt>${t.wh.colEvents}</dt><dd>${typesText(t, e)}</dd>
      <dt>${t.wh.colStatus}</dt><dd id="endpoint-status">${statusBadge(t, e)}</dd>
      <dt>${t.wh.colCreated}</dt><dd>${fmt.dateTimeOf(e.created_at)}</dd>
      ${subscriberFact(m)}
      ${e.description ? html`<dt>${t.wh.description}</dt><dd>${e.description}</dd>` : ''}
    </dl>
    ${stateLine(m, e)}
    ${
      m.canManage
        ? html`<div class="btn-row">
      ${postButton(m, `${path}/test`, t.wh.sendTest, 'btn btn-sm')}
      ${e.enabled ? postButton(m, `${path}/disable`, t.wh.disable) : postButton(m, `${path}/enable`, t.wh.enable, 'btn btn-sm')}
      <a class="btn btn-sm btn-outline-danger" href="${m.url(`${path}/delete`)}">${t.wh.delete}</a>
    </div>`
        : ''
    }
  </section>
  <section class="card" aria-labelledby="deliveries-title">
    <h2 id="deliveries-title">${t.wh.deliveriesTitle}</h2>
    <p class="muted small">${t.wh.log.kept(m.logDays)}</p>
    ${logFilters(m)}
    ${deliveriesTable(m)}
    ${m.older ? html`<p><a class="btn btn-sm btn-secondary" id="older" href="${m.older}">${t.wh.log.older}</a></p>` : ''}
  </section>
  <p class="page-foot"><a href="${m.url(base)}">${t.wh.back}</a> · ${t.timesIn(m.clinic.timezone)}</p>`;
  return layout({ t, title: `${t.wh.pageTitle} · ${m.clinic.name}`, person: m.person, csrf: m.csrf, body, here: m.url(path) });
}

/** One attempt in full: the event, the answer's first 1 KB (masked), when the next attempt comes; resend. */
export function attemptPage(m: AttemptPageModel): Html {
  const { t, fmt, endpoint: e, delivery: d } = m;
  const path = `${base}/${e.id}`;
  const at = Math.floor(d.at_ms / 1000);
  const body = html`${head(m, t.wh.log.attemptTitle, e.url)}
  <section class="card" aria-labelledby="attempt-title">
    <h2 id="attempt-title"><code>${d.tipo}</code> · ${fmt.dateTimeOf(at)}</h2>
    <dl class="facts" id="attempt-facts">
      ${e.clinic_id !== m.clinic.id ? html`<dt>${t.sandbox.modeLabel}</dt><dd>${testBadge(m, e)}</dd>` : ''}
      <dt>${t.wh.log.eventId}</dt><dd><code>${d.event_id}</code></dd>
      <dt>${t.wh.colAttempt}</dt><dd>${fmt.num(d.attempt)}</dd>
      <dt>${t.wh.log.kind}</dt><dd>${labelOf(t.wh.kinds, d.kind) || d.kind}</dd>
      <dt>${t.wh.colResult}</dt><dd>${labelOf(t.wh.outcome, d.outcome) ?? d.outcome}</dd>
      <dt>${t.wh.colResponse}</dt><dd>${d.status_code !== null ? html`<code>HTTP ${d.status_code}</code>` : errorText(t, d.error)}</dd>
      <dt>${t.wh.colDuration}</dt><dd>${fmt.num(d.duration_ms)} ms</dd>
      ${d.next_retry_ms !== null ? html`<dt>${t.wh.log.nextRetry}</dt><dd>${fmt.dateTimeOf(Math.floor(d.next_retry_ms / 1000))}</dd>` : ''}
    </dl>
    <h3>${t.wh.log.body}</h3>
    ${
      d.response_excerpt
        ? html`<pre class="response-body" id="attempt-body">${d.response_excerpt}</pre>`
        : html`<p class="muted">${t.wh.log.noBody}</p>`
    }
    ${m.canManage ? html`<div class="btn-row">${postButton(m, `${path}/deliveries/${d.id}/resend`, t.wh.resend, 'btn btn-sm')}</div>` : ''}
  </section>
  <p class="page-foot"><a href="${m.url(path)}">${t.wh.back}</a> · ${t.timesIn(m.clinic.timezone)}</p>`;
  return layout({ t, title: `${t.wh.log.attemptTitle} · ${m.clinic.name}`, person: m.person, csrf: m.csrf, body, here: m.url(path) });
}

export function deleteEndpointPage(m: Common & { endpoint: EndpointRow }): Html {
  const { t, endpoint: e } = m;
  const path = `${base}/${e.id}`;
  const body = html`<div class="card narrow confirm">
    <h1>${t.wh.deleteTitle}</h1>
    <div class="alert alert-warning">${icons.warning}<div class="alert-body"><p>${t.wh.deleteText}</p><p>${t.wh.deleteUndo}</p></div></div>
    <dl class="facts">
      <dt>${t.clinicLabel}</dt><dd>${m.clinic.name}</dd>
      <dt>${t.wh.colUrl}</dt><dd class="url">${e.url}${testBadge(m, e)}</dd>
      <dt>${t.wh.colEvents}</dt><dd>${typesText(t, e)}</dd>
    </dl>
    <form method="post" action="${m.url(`${path}/delete`)}">
      ${csrfInput(m.csrf)}
      <div class="btn-row">
        <button type="submit" class="btn btn-danger">${t.wh.deleteConfirm}</button>
        <a class="btn btn-secondary" href="${m.url(path)}">${t.cancel}</a>
      </div>
    </form>
  </div>`;
  return layout({ t, title: t.wh.deleteTitle, person: m.person, csrf: m.csrf, body, here: m.url(path) });
}
