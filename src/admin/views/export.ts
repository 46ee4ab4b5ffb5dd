// Settings > API > Export: ask for an export of the whole clinic, watch it being made (the page
// reloads itself every few seconds meanwhile, no script needed), and download it for 24 hours.
import type { Clinic } from '../../services/accounts.js';
import type { ClinicExportRow } from '../../services/exports/jobs.js';
import type { Formatter } from '../format.js';
import { html, type Html } from '../html.js';
import { exportMessages } from '../locales/export-messages.js';
import type { Messages } from '../locales/messages.js';
import { apiTabs } from './api-tabs.js';
import { csrfInput, layout, type Person } from './layout.js';

export const EXPORT_BASE = '/dashboard/settings/api/export';
/** How often the page reloads while an export is waiting or being made. */
const REFRESH_S = 3;

export interface ExportPageModel {
  t: Messages;
  fmt: Formatter;
  person: Person;
  csrf: string;
  clinic: Clinic;
  exports: ClinicExportRow[];
}

const mb = (fmt: Formatter, bytes: number) => `${fmt.num(Math.round((bytes / 1e6) * 10) / 10)} MB`;

function stateCell(m: ExportPageModel, r: ClinicExportRow): Html {
  const E = exportMessages(m.t.htmlLang);
  const state = r.state as keyof typeof E.states;
  const label = E.states[state] ?? r.state;
  if (state === 'running' && r.total > 0) {
    const percent = `${Math.floor((100 * r.done) / r.total)} %`;
    return html`${label} <progress max="${String(r.total)}" value="${String(r.done)}" aria-label="${E.progress(percent)}"></progress>
      <span class="small">${E.progress(percent)}</span>`;
  }
  return html`<span class="badge badge-${state === 'done' ? 'active' : state === 'failed' ? 'expired' : 'plain'}">${label}</span>`;
}

function fileCell(m: ExportPageModel, r: ClinicExportRow): Html | string {
  const E = exportMessages(m.t.htmlLang);
  if (r.state === 'failed') return html`<span class="small">${E.failed}</span>`;
  if (r.state !== 'done' || r.bytes === null || r.expires_at === null) return '';
  return html`<a class="btn btn-sm" href="${EXPORT_BASE}/${r.id}/file" download>${E.download(mb(m.fmt, r.bytes))}</a>
    <span class="small muted">${E.until(m.fmt.dateTimeOf(Math.floor(r.expires_at / 1000)))}</span>`;
}

export function exportPage(m: ExportPageModel): Html {
  const { t } = m;
  const E = exportMessages(t.htmlLang);
  const busy = m.exports.some((r) => r.state === 'queued' || r.state === 'running');
  const body = html`<nav class="crumbs" aria-label="breadcrumb"><ol>
    <li>${t.settings}</li><li>${t.api}</li><li aria-current="page">${E.tab}</li></ol></nav>
  ${apiTabs(t, (p) => p, 'export', true)}
  <div class="page-head"><div><h1>${E.title}</h1><p class="lead">${E.lead}</p></div>
    <div class="clinic-card"><div class="name">${m.clinic.name}</div></div></div>
  <section class="card">
    <form method="post" action="${EXPORT_BASE}" id="start-export">${csrfInput(m.csrf)}
      <button type="submit" class="btn" ${busy ? html`disabled` : ''} aria-describedby="start-help">${E.start}</button>
      <p class="help" id="start-help">${E.startHelp}</p></form>
  </section>
  <section class="card" aria-labelledby="exports-title">
    <h2 id="exports-title">${E.listTitle}</h2>
    ${busy ? html`<p class="help" role="status">${E.refreshing}</p>` : ''}
    ${
      m.exports.length === 0
        ? html`<p class="empty" id="no-exports">${E.none}</p>`
        : html`<div class="table-wrap"><table class="keys exports">
      <thead><tr><th scope="col">${E.colRequested}</th><th scope="col">${E.colState}</th><th scope="col">${E.colFile}</th></tr></thead>
      <tbody>${m.exports.map(
        (r) => html`<tr data-export-id="${r.id}" data-state="${r.state}">
        <td data-label="${E.colRequested}" class="nowrap">${m.fmt.dateTimeOf(Math.floor(r.requested_at / 1000))}</td>
        <td data-label="${E.colState}">${stateCell(m, r)}</td>
        <td data-label="${E.colFile}">${fileCell(m, r)}</td></tr>`,
      )}</tbody></table></div>`
    }
  </section>
  <p class="page-foot">${t.timesIn(m.clinic.timezone)}</p>`;
  return layout({
    t,
    title: `${E.title} · ${m.clinic.name}`,
    person: m.person,
    csrf: m.csrf,
    body,
    here: EXPORT_BASE,
    refreshS: busy ? REFRESH_S : undefined,
  });
}
