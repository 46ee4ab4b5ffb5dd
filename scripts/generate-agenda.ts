// npm run generate:agenda: rebuilds src/http/mcp/agenda/view-script.generated.ts, the MCP agenda
// view's bundled script (tools/agenda-view.ts), after a change of its sources or of the ext-apps
// package. The agenda's browser test fails until the committed file matches.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AGENDA_SCRIPT_FILE, agendaScriptModule, buildAgendaScript } from '../tools/agenda-view.js';

const script = await buildAgendaScript();
writeFileSync(AGENDA_SCRIPT_FILE, agendaScriptModule(script));
process.stderr.write(`wrote ${fileURLToPath(AGENDA_SCRIPT_FILE)} (${Math.round(script.length / 1024)} KB of script)\n`);
