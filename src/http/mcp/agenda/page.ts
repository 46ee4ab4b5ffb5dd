// The agenda's HTML document: one self-contained page (its style and its bundled script inline,
// no address outside it: a host's default MCP Apps policy lets the view load nothing), made once
// when the module loads. Colours take the host's theme variables when it sends them (MCP Apps'
// standard names), with light and dark defaults; each status has its colour, always with its name
// beside it (the legend, the card's label), never colour alone.
import { AGENDA_SCRIPT } from './view-script.generated.js';

const CSS = `
:root {
  color-scheme: light dark;
  --bg: var(--color-background-primary, light-dark(#fff, #171717));
  --bg2: var(--color-background-secondary, light-dark(#f4f6f8, #222));
  --text: var(--color-text-primary, light-dark(#18212d, #f2f2f2));
  --muted: var(--color-text-secondary, light-dark(#566273, #b4b4b4));
  --border: var(--color-border-primary, light-dark(#dce2ea, #3a3a3a));
  --ring: var(--color-ring-primary, #1570ef);
  --radius: var(--border-radius-md, 8px);
  --font: var(--font-sans, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
}
.st-pendiente { --st: light-dark(#b45309, #f59e0b); }
.st-confirmada { --st: light-dark(#1d4ed8, #60a5fa); }
.st-completada { --st: light-dark(#15803d, #4ade80); }
.st-cancelada { --st: light-dark(#6b7280, #9ca3af); }
.st-no_asistio { --st: light-dark(#b91c1c, #f87171); }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); font: 14px/1.4 var(--font); }
main { padding: 12px; }
h1 { font-size: 1.1rem; margin: 0; }
h2 { font-size: .85rem; margin: 0; }
p { margin: 0; }
button { font: inherit; color: inherit; }
:focus-visible { outline: 3px solid var(--ring); outline-offset: 2px; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.bar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; }
.titles { flex: 1 1 220px; }
.range { font-weight: 600; }
.zone, .status, .none { color: var(--muted); font-size: .85rem; }
nav, .views { display: flex; gap: 4px; }
nav button, .views button {
  border: 1px solid var(--border); background: var(--bg2); border-radius: var(--radius); padding: 4px 10px; cursor: pointer;
}
.views button[aria-pressed="true"] { background: var(--text); color: var(--bg); border-color: var(--text); }
button[aria-disabled="true"] { opacity: .55; cursor: progress; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; list-style: none; padding: 0; margin: 10px 0 4px; font-size: .8rem; }
.legend li { display: flex; align-items: center; gap: 5px; }
.swatch { width: 12px; height: 12px; border-radius: 3px; background: var(--st); }
.status { margin-bottom: 8px; }
.week { display: grid; grid-template-columns: repeat(7, minmax(0, 1fr)); gap: 6px; }
.col { background: var(--bg2); border-radius: var(--radius); padding: 6px; min-height: 120px; min-width: 0; }
.col.outside { background: repeating-linear-gradient(135deg, var(--bg2) 0 6px, var(--bg) 6px 12px); }
.day-head { width: 100%; border: 0; background: none; padding: 2px 0 6px; text-align: left; font-weight: 700; cursor: pointer; }
.list, .daylist { list-style: none; margin: 0; padding: 0; display: grid; gap: 5px; }
.cita {
  display: grid; width: 100%; text-align: left; cursor: pointer; border: 1px solid var(--border); border-left: 4px solid var(--st);
  border-radius: 6px; padding: 4px 6px; background: color-mix(in srgb, var(--st) 10%, var(--bg)); font-size: .78rem; gap: 1px;
}
.cita span, .entry span { overflow-wrap: anywhere; }
.time { font-weight: 700; font-variant-numeric: tabular-nums; }
.where, .what { color: var(--muted); }
.st-cancelada .who { text-decoration: line-through; }
.day-title { font-size: 1rem; margin: 4px 0 8px; }
.entry {
  display: grid; grid-template-columns: 7.5em 1fr auto; gap: 2px 12px; border-left: 4px solid var(--st); border-radius: 6px;
  padding: 6px 10px; background: color-mix(in srgb, var(--st) 10%, var(--bg));
}
.entry .who { font-weight: 600; }
.entry .what, .entry .where { grid-column: 2 / 4; }
.entry .state { color: var(--st); font-weight: 700; grid-row: 1; grid-column: 3; }
@media (max-width: 560px) { .week { grid-template-columns: 1fr; } .col { min-height: 0; } }
`;

export const AGENDA_HTML =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
  `<title>Agenda</title><style>${CSS.replace(/\n\s*/g, '\n').trim()}</style></head>` +
  `<body><main id="agenda"></main><script>${AGENDA_SCRIPT}</script></body></html>`;
