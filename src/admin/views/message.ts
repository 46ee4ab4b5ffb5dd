// Error and refusal pages: the dashboard answers in HTML, never in the API's JSON shape.
import { html, type Html, type Renderable } from '../html.js';
import type { Messages } from '../locales/messages.js';
import { icons } from './icons.js';
import { authLayout, layout, type Person } from './layout.js';

export interface MessageModel {
  t: Messages;
  title: string;
  text: Renderable;
  person: Person | null;
  csrf: string | null;
  tone?: 'danger' | 'warning' | 'info';
  /** where the button leads; defaults to the dashboard (or sign-in when signed out) */
  back?: { href: string; label: string };
  reference?: string;
  /** where the language switch comes back to */
  here?: string;
}

export function messagePage(m: MessageModel): Html {
  const { t } = m;
  const back =
    m.back ?? (m.person ? { href: '/dashboard', label: t.backToDashboard } : { href: '/dashboard/sign-in', label: t.goToSignIn });
  const icon = m.tone === 'info' ? icons.info : icons.warning;
  const body = html`
    <div class="alert alert-${m.tone ?? 'danger'}" role="alert">${icon}
      <div class="alert-body"><h1 class="h-alert">${m.title}</h1></div></div>
    <p>${m.text}</p>
    ${m.reference ? html`<p><code>${m.reference}</code></p>` : ''}
    <div class="btn-row"><a class="btn btn-secondary" href="${back.href}">${back.label}</a></div>`;
  if (!m.person) return authLayout({ t, title: m.title, body });
  return layout({ t, title: m.title, person: m.person, csrf: m.csrf, body: html`<div class="card narrow">${body}</div>`, here: m.here });
}
