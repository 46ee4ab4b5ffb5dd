// The tabs of Settings > API (keys, webhooks, connected apps, logs), on each of those pages.
import { html, type Html } from '../html.js';
import type { Messages } from '../locales/messages.js';
import { exportMessages } from '../locales/export-messages.js';
import { oauthMessages } from '../locales/oauth-messages.js';

type Tab = 'keys' | 'webhooks' | 'apps' | 'logs' | 'export';

/** The tabs of Settings > API; Logs and Export only for those who may see them (owners and superadmins). */
export function apiTabs(t: Messages, url: (p: string) => string, current: Tab, logs: boolean): Html {
  const tab = (id: Tab, href: string, label: string) =>
    html`<li><a href="${url(href)}" ${current === id ? html`aria-current="page" class="active"` : ''}>${label}</a></li>`;
  return html`<nav class="tabs" aria-label="${t.api}"><ul>
    ${tab('keys', '/dashboard/settings/api', t.wh.tabKeys)}
    ${tab('webhooks', '/dashboard/settings/api/webhooks', t.wh.tabWebhooks)}
    ${tab('apps', '/dashboard/settings/api/apps', oauthMessages(t.htmlLang).tabApps)}
    ${logs ? tab('logs', '/dashboard/settings/api/logs', t.logs.tab) : ''}
    ${logs ? tab('export', '/dashboard/settings/api/export', exportMessages(t.htmlLang).tab) : ''}</ul></nav>`;
}
