// The keys page's card for test mode: what the sandbox is, whether it exists yet, and (owners and
// superadmins) the form that starts it again, a POST with the CSRF token like every other form.
import { html, type Renderable } from '../html.js';
import type { ApiPageModel } from './api-keys.js';
import { icons } from './icons.js';
import { csrfInput } from './layout.js';

export function sandboxCard(m: ApiPageModel): Renderable {
  if (!m.canManage || !m.eligible) return '';
  const S = m.t.sandbox;
  const done = m.sandbox.reset
    ? html`<div class="alert alert-success" role="status" id="sandbox-reset-done">${icons.check}
      <div class="alert-body"><p>${S.resetDone}</p></div></div>`
    : '';
  const action = m.sandbox.exists
    ? html`<form method="post" action="${m.url('/dashboard/settings/api/sandbox/reset')}" id="sandbox-reset">
      ${csrfInput(m.csrf)}
      <p class="help" id="sandbox-reset-help">${S.resetHelp}</p>
      <button type="submit" class="btn btn-secondary" aria-describedby="sandbox-reset-help">${S.resetButton}</button>
    </form>`
    : html`<p class="muted" id="sandbox-none">${S.none}</p>`;
  return html`<section class="card" aria-labelledby="sandbox-title" id="sandbox">
    <h2 id="sandbox-title">${S.title}</h2>
    <p>${S.lead}</p>
    ${done}
    ${action}
  </section>`;
}
