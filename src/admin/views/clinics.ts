// A superadmin's first page: pick the clinic to act for.
import type { Clinic } from '../../services/accounts.js';
import { html, type Html } from '../html.js';
import { labelOf, type Messages } from '../locales/messages.js';
import { layout, type Person } from './layout.js';

export function clinicsPage(m: { t: Messages; person: Person; csrf: string; clinics: Clinic[] }): Html {
  const { t } = m;
  const body = html`
  <div class="narrow">
  <nav class="crumbs" aria-label="breadcrumb"><ol><li>${t.settings}</li><li aria-current="page">${t.api}</li></ol></nav>
  <div class="card">
    <h1>${t.chooseClinicTitle}</h1>
    <p class="muted">${t.chooseClinicLead}</p>
    ${
      m.clinics.length === 0
        ? html`<p class="empty">${t.noClinics}</p>`
        : html`<ul class="clinic-list">${m.clinics.map(
            (c) => html`<li><a href="/dashboard/settings/api?clinic=${encodeURIComponent(c.id)}">
          <span><strong>${c.name}</strong><br><span class="muted small">${c.timezone}</span></span>
          <span class="badge badge-plan plain">${labelOf(t.plans, c.plan) ?? c.plan}</span></a></li>`,
          )}</ul>`
    }
  </div>
  </div>`;
  return layout({ t, title: t.chooseClinicTitle, person: m.person, csrf: m.csrf, body, here: '/dashboard/settings/api' });
}
