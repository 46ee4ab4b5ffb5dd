// The agenda view's entry (bundled into the ui://clinic-api/agenda document by
// scripts/generate-agenda.ts): an MCP App (the ext-apps package's App over postMessage) that
// draws the list_citas result its host sends, follows the host's locale and theme, and reads
// another week by calling list_citas through the host, with the first call's status filter.
import { App, applyDocumentTheme, applyHostStyleVariables, type McpUiHostContext } from '@modelcontextprotocol/ext-apps';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { weekArguments, type AgendaPage } from './calendar.js';
import { Agenda } from './render.js';

const TOOL = 'list_citas';

/** The agenda's data in a tool result, or the reason there is none (the tool's own error text). */
function pageOf(result: CallToolResult): AgendaPage | string {
  const text = result.content.find((c) => c.type === 'text')?.text ?? 'no result';
  if (result.isError) return text;
  const page = result.structuredContent as Partial<AgendaPage> | undefined;
  return page && Array.isArray(page.citas) && page.rango ? (page as AgendaPage) : text;
}

const app = new App({ name: 'Clinic API agenda', version: '1.0.0' }, { availableDisplayModes: ['inline'] }, { autoResize: true });
let estado: unknown;

const agenda = new Agenda(document.getElementById('agenda')!, {
  fetchWeek: async (monday) => {
    const got = pageOf(await app.callServerTool({ name: TOOL, arguments: weekArguments(monday, estado) }));
    if (typeof got === 'string') throw new Error(got);
    return got;
  },
});

function applyContext(ctx: McpUiHostContext): void {
  if (ctx.theme) applyDocumentTheme(ctx.theme);
  if (ctx.styles?.variables) applyHostStyleVariables(ctx.styles.variables);
  if (ctx.locale) agenda.setLocale(ctx.locale);
}

agenda.setLocale(navigator.language);
app.ontoolinput = (params) => {
  estado = params.arguments?.estado;
};
app.ontoolresult = (result) => {
  const got = pageOf(result);
  if (typeof got === 'string') agenda.fail(got);
  else agenda.showResult(got);
};
app.ontoolcancelled = (params) => agenda.fail(params.reason ?? 'cancelled');
app.onhostcontextchanged = applyContext;
app.onteardown = async () => ({});
app.onerror = (err) => console.error(err);
void app.connect().then(() => {
  const ctx = app.getHostContext();
  if (ctx) applyContext(ctx);
});
