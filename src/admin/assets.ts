// The dashboard's stylesheet, script and icon, served from memory under content-hashed names
// (cached for a year, immutable). Kept in a TypeScript module so the build needs no copy step.
// The script is needed only for the copy button: every page works without it. Longer than most
// files: the stylesheet is one text, read top to bottom, whose rules' order matters.
import { createHash } from 'node:crypto';

const steps = Array.from({ length: 21 }, (_, i) => i);

const CSS = `
:root {
  --bg: #f3f5f8; --surface: #fff; --text: #18212d; --muted: #566273; --border: #dce2ea; --border-strong: #c5ced9;
  --primary: #0b6b66; --primary-hover: #08524e; --primary-soft: #e7f4f3; --primary-bar: #14928b;
  --danger: #b42318; --danger-hover: #912018; --danger-soft: #fef3f2; --danger-border: #fecdca;
  --warning: #8a3a0a; --warning-soft: #fffaeb; --warning-border: #fedf89;
  --success: #05603a; --success-soft: #ecfdf3; --success-border: #abefc6;
  --info: #1849a9; --info-soft: #eff8ff; --info-border: #b2ddff;
  --focus: #1570ef; --radius: 12px;
  --shadow: 0 1px 2px rgba(16, 24, 40, .05), 0 1px 3px rgba(16, 24, 40, .08);
  --font: Inter, system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --mono: ui-monospace, "SFMono-Regular", "Cascadia Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace;
}
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 15px/1.55 var(--font); color: var(--text); background: var(--bg); }
a { color: var(--primary); text-underline-offset: 2px; }
a:hover { color: var(--primary-hover); }
h1, h2, h3 { line-height: 1.25; margin: 0; }
h1 { font-size: 1.75rem; letter-spacing: -.01em; }
h2 { font-size: 1.125rem; }
h3 { font-size: 1rem; }
p { margin: 0 0 .75rem; }
p:last-child { margin-bottom: 0; }
code, .mono { font-family: var(--mono); font-size: .9em; }
code { background: #eef1f5; border-radius: 6px; padding: .1em .4em; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.sr-only {
  position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap;
  border: 0;
}
.skip {
  position: absolute; left: 12px; top: -48px; background: var(--surface); padding: 8px 14px; border-radius: 8px; z-index: 10;
  box-shadow: var(--shadow);
}
.skip:focus { top: 12px; }
.muted { color: var(--muted); }
.small { font-size: .875rem; }

/* top bar */
.topbar { background: var(--surface); border-bottom: 1px solid var(--border); }
.topbar-inner { max-width: 1160px; margin: 0 auto; padding: 10px 24px; display: flex; align-items: center; gap: 16px; min-height: 60px; }
.brand {
  white-space: nowrap; display: inline-flex; align-items: center; gap: 10px; font-weight: 700; color: var(--text); text-decoration: none;
  font-size: 1rem;
}
.brand svg { flex: none; }
.who { margin-left: auto; display: flex; align-items: center; gap: 12px; flex-wrap: wrap; justify-content: flex-end; }
.who-name { font-size: .9rem; color: var(--muted); overflow-wrap: anywhere; }
.who form { margin: 0; }

/* language switch (top bar and under the sign-in card) */
.lang-switch form { margin: 0; }
.lang-switch ul { list-style: none; display: flex; align-items: center; gap: 4px; padding: 0; margin: 0; font-size: .875rem; }
.lang-switch li + li::before { content: "·"; margin-right: 4px; color: var(--muted); }
.lang-switch .lang-current { font-weight: 600; padding: 4px 2px; }
.lang-switch .btn-link { font-weight: 400; }
.auth-foot .lang-switch ul { justify-content: center; }

/* page */
.container { max-width: 1160px; margin: 0 auto; padding: 24px; }
.crumbs { font-size: .875rem; color: var(--muted); margin-bottom: 8px; }
.crumbs ol { list-style: none; display: flex; gap: 6px; padding: 0; margin: 0; }
.crumbs li + li::before { content: "/"; margin-right: 6px; color: var(--border-strong); }
.page-head { display: flex; gap: 24px; align-items: flex-start; justify-content: space-between; margin-bottom: 24px; }
.page-head .lead { color: var(--muted); max-width: 68ch; margin-top: 8px; }
.page-head > div:first-child { min-width: 0; }
.page-head h1 { overflow-wrap: anywhere; }
.clinic-card {
  background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); padding: 12px 16px; min-width: 220px;
  box-shadow: var(--shadow);
}
.clinic-card .name { font-weight: 600; }
.clinic-card dl { margin: 4px 0 0; display: grid; grid-template-columns: auto 1fr; gap: 2px 10px; font-size: .875rem; }
.clinic-card dt { color: var(--muted); }
.clinic-card dd { margin: 0; }

.card {
  background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); box-shadow: var(--shadow); padding: 24px;
  margin-bottom: 24px;
}
.card-head { display: flex; align-items: baseline; justify-content: space-between; gap: 12px; margin-bottom: 16px; flex-wrap: wrap; }
.card-head p { margin: 4px 0 0; color: var(--muted); font-size: .9rem; }
.card > h2 { margin-bottom: 12px; }
.divider { border: 0; border-top: 1px solid var(--border); margin: 24px 0; }

/* alerts */
.alert { display: flex; gap: 12px; border: 1px solid; border-radius: var(--radius); padding: 14px 16px; margin-bottom: 20px; }
.alert .icon { flex: none; margin-top: 2px; }
.alert h2, .alert h3, .alert .h-alert { font-size: 1rem; margin-bottom: 4px; }
.alert .h-alert { font-size: 1.125rem; margin: 0; }
main:focus { outline: none; }
.alert-info { background: var(--info-soft); border-color: var(--info-border); color: var(--info); }
.alert-warning { background: var(--warning-soft); border-color: var(--warning-border); color: var(--warning); }
.alert-success { background: var(--success-soft); border-color: var(--success-border); color: var(--success); }
.alert-danger { background: var(--danger-soft); border-color: var(--danger-border); color: var(--danger); }
.alert p { color: var(--text); }
.alert-body { min-width: 0; flex: 1; }

/* new key */
.newkey {
  border: 2px solid var(--success); background: var(--surface); border-radius: var(--radius); padding: 20px 24px; margin-bottom: 24px;
  box-shadow: 0 4px 16px rgba(5, 96, 58, .10);
}
.newkey h2 { display: flex; align-items: center; gap: 10px; color: var(--success); margin-bottom: 12px; }
.newkey .warn {
  display: flex; gap: 10px; background: var(--warning-soft); border: 1px solid var(--warning-border); color: var(--warning);
  border-radius: 10px; padding: 10px 14px; font-weight: 600; margin-bottom: 14px;
}
.newkey .warn svg { flex: none; margin-top: 2px; }
.keybox { display: flex; gap: 8px; align-items: stretch; }
.keybox input[type=text] { flex: 1; min-width: 0; font-family: var(--mono); font-size: .95rem; background: #f7f9fb; letter-spacing: .01em; }
.newkey .after {
  display: flex; gap: 16px; align-items: center; justify-content: space-between; flex-wrap: wrap; margin-top: 14px; color: var(--muted);
  font-size: .9rem;
}
.copy-status { min-height: 1.5em; font-size: .9rem; color: var(--success); margin-top: 6px; }

/* forms */
label, .label { display: block; font-weight: 600; font-size: .9rem; margin-bottom: 6px; }
input[type=text], input[type=email], input[type=password], input[type=url], input[type=date], select, textarea {
  width: 100%; min-height: 44px; padding: 9px 12px; font: inherit; color: inherit; background: var(--surface);
  border: 1px solid var(--border-strong); border-radius: 8px; transition: border-color .15s, box-shadow .15s;
}
select {
  appearance: none; padding-right: 36px;
  background-image: linear-gradient(45deg, transparent 50%, var(--muted) 50%), linear-gradient(135deg, var(--muted) 50%, transparent 50%);
  background-position: calc(100% - 18px) 50%, calc(100% - 13px) 50%; background-size: 5px 5px; background-repeat: no-repeat;
}
textarea { min-height: 0; resize: vertical; font-family: var(--mono); font-size: .9rem; }
input:focus, select:focus, textarea:focus { outline: none; border-color: var(--focus); box-shadow: 0 0 0 4px rgba(21, 112, 239, .18); }
input[aria-invalid=true], select[aria-invalid=true], textarea[aria-invalid=true] { border-color: var(--danger); }
.field { margin-bottom: 16px; }
.help { font-size: .85rem; color: var(--muted); margin-top: 6px; }
.field-error { font-size: .875rem; color: var(--danger); margin-top: 6px; font-weight: 600; }
.form-row { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 1fr) auto; gap: 16px; align-items: start; }
.form-row .actions { padding-top: 27px; }
.form-row .field { margin-bottom: 0; }
ul.field-error { padding-left: 18px; }
.form-grid { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 1fr) minmax(0, 1fr); gap: 0 16px; align-items: start; }
.form-grid .field-wide { grid-column: 1 / -1; margin: -8px 0 16px; }
.key-form .actions { margin-top: 8px; }
.scopes-choice { border: 0; padding: 0; margin: 4px 0 16px; }
.scopes-choice legend { font-weight: 600; font-size: .9rem; margin-bottom: 4px; padding: 0; }
.scope-list { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 8px 16px; margin-top: 8px; }
.scope {
  display: flex; gap: 10px; align-items: flex-start; font-weight: normal; margin: 0; padding: 10px 12px; border: 1px solid var(--border);
  border-radius: 10px; cursor: pointer;
}
.scope:has(input:checked) { border-color: #b6dfdc; background: var(--primary-soft); }
.scope input { width: 18px; height: 18px; margin-top: 2px; flex: none; accent-color: var(--primary); }
.scope-name { font-weight: 600; }
.scope code { font-size: .78rem; }
.scope-what { display: block; color: var(--muted); font-size: .85rem; margin-top: 2px; }
td .sub { display: block; font-size: .8rem; color: var(--muted); margin-top: 4px; overflow-wrap: anywhere; }
.cell-access { min-width: 150px; max-width: 240px; }
.chips { list-style: none; display: flex; flex-wrap: wrap; gap: 4px; padding: 0; margin: 0; }
.chips li {
  font-size: .78rem; font-weight: 600; padding: 1px 8px; border-radius: 999px; background: var(--primary-soft); color: var(--primary);
  border: 1px solid #b6dfdc; white-space: nowrap;
}
td time { white-space: nowrap; }
.badge.badge-soon {
  display: flex; width: max-content; margin-top: 4px; background: var(--warning-soft); color: var(--warning);
  border-color: var(--warning-border);
}
.rolled { font-size: .9rem; }
.key-actions { display: flex; flex-direction: column; gap: 6px; align-items: stretch; }

/* buttons */
.btn {
  display: inline-flex; align-items: center; justify-content: center; gap: 8px; min-height: 44px; padding: 0 18px; font: inherit;
  font-weight: 600; border-radius: 8px; border: 1px solid transparent; cursor: pointer; text-decoration: none; white-space: nowrap;
  background: var(--primary); color: #fff;
}
.btn:hover { background: var(--primary-hover); color: #fff; }
.btn-secondary { background: var(--surface); color: var(--text); border-color: var(--border-strong); }
.btn-secondary:hover { background: #f5f7fa; color: var(--text); }
.btn-danger { background: var(--danger); color: #fff; }
.btn-danger:hover { background: var(--danger-hover); color: #fff; }
.btn-sm { min-height: 34px; padding: 0 12px; font-size: .875rem; }
.btn-outline-danger { background: var(--surface); color: var(--danger); border-color: var(--danger-border); }
.btn-outline-danger:hover { background: var(--danger-soft); color: var(--danger-hover); }
.btn-link {
  background: none; border: 0; padding: 4px 2px; color: var(--primary); font: inherit; font-weight: 600; cursor: pointer;
  text-decoration: underline; text-underline-offset: 2px;
}
.btn-link:hover { color: var(--primary-hover); }
.btn.done { background: var(--success); }
.btn-row { display: flex; gap: 12px; flex-wrap: wrap; margin-top: 20px; }

/* badges */
.badge {
  display: inline-flex; align-items: center; gap: 6px; font-size: .78rem; font-weight: 600; padding: 2px 10px; border-radius: 999px;
  border: 1px solid var(--border); background: #f5f7fa; color: var(--muted); white-space: nowrap;
}
.badge::before { content: ""; width: 7px; height: 7px; border-radius: 50%; background: currentColor; opacity: .8; }
.badge.plain::before { display: none; }
.badge-active { background: var(--success-soft); color: var(--success); border-color: var(--success-border); }
.badge-revoked { background: #f2f4f7; color: #475467; border-color: #d0d5dd; }
.badge-expired { background: var(--warning-soft); color: var(--warning); border-color: var(--warning-border); }
.badge-replaced { background: #f4f3ff; color: #4e36c2; border-color: #d9d6fe; }
.badge-test { background: #fff8e6; color: #8a5a00; border-color: #f3d48b; }
.badge-plan { background: var(--primary-soft); color: var(--primary); border-color: #b6dfdc; }
.badge-role { background: #f4f3ff; color: #4e36c2; border-color: #d9d6fe; }

/* keys table */
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th {
  text-align: left; font-size: .78rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600;
  padding: 10px 12px; border-bottom: 1px solid var(--border); white-space: nowrap;
}
td { padding: 14px 12px; border-bottom: 1px solid var(--border); vertical-align: middle; font-size: .925rem; }
tbody tr:last-child td { border-bottom: 0; }
tr.is-inactive td { color: var(--muted); }
.key-name { font-weight: 600; overflow-wrap: anywhere; }
.hint {
  font-family: var(--mono); font-size: .85rem; background: #f2f4f7; border-radius: 6px; padding: 2px 8px; white-space: nowrap;
  color: var(--text);
}
td.actions { text-align: right; white-space: nowrap; }
td.nowrap { white-space: nowrap; }
.idle-keys { margin-top: 16px; font-size: .875rem; color: var(--muted); }
.idle-keys .key-name { color: var(--text); }
.empty { text-align: center; padding: 32px 16px; color: var(--muted); }

/* usage */
.legend { display: flex; gap: 16px; font-size: .85rem; color: var(--muted); }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
.swatch { width: 12px; height: 12px; border-radius: 3px; display: inline-block; }
.swatch-ok { background: var(--primary-bar); }
.swatch-err { background: #e5484d; }
.usage-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 16px; }
.usage-card { border: 1px solid var(--border); border-radius: 10px; padding: 16px; display: flex; flex-direction: column; gap: 12px; }
.usage-card header { display: flex; justify-content: space-between; gap: 8px; align-items: baseline; flex-wrap: wrap; }
.usage-card .totals { font-size: .85rem; color: var(--muted); }
.usage-card .totals strong { color: var(--text); }
.usage-card .totals .err { color: var(--danger); }
.bars { list-style: none; margin: 0; padding: 0; display: grid; grid-template-columns: repeat(7, 1fr); gap: 6px; align-items: end; }
.bars li { display: flex; flex-direction: column; align-items: stretch; gap: 4px; text-align: center; }
.bar-track {
  height: 84px; display: flex; align-items: flex-end; background: linear-gradient(to top, #f2f4f7 1px, transparent 1px) 0 0 / 100% 21px;
  border-bottom: 1px solid var(--border-strong);
}
.bar { width: 100%; background: var(--primary-bar); border-radius: 4px 4px 0 0; display: flex; flex-direction: column; overflow: hidden; }
.bar .bar-err { background: #e5484d; width: 100%; }
.bars .count { font-size: .78rem; font-weight: 600; font-variant-numeric: tabular-nums; }
.bars .day { font-size: .72rem; color: var(--muted); white-space: nowrap; }
${steps.map((i) => `.h${i}{height:${i * 5}%}`).join('')}
${steps.map((i) => `.e${i}{height:${i * 5}%}`).join('')}
.h-min { min-height: 3px; }
.errors-list { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 6px; }
.errors-list li {
  display: grid; grid-template-columns: 1fr auto; grid-template-areas: "code when" "what what"; gap: 2px 8px; align-items: baseline;
  font-size: .85rem; padding: 8px 10px; background: #fbfcfd; border: 1px solid #eef1f5; border-radius: 8px;
}
.errors-list code { grid-area: code; background: var(--danger-soft); color: var(--danger); justify-self: start; }
.errors-list .what { grid-area: what; color: var(--muted); }
.errors-list time { grid-area: when; color: var(--muted); white-space: nowrap; font-size: .8rem; }
.usage-card h4 { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 0 0 6px; }
.ok-line { font-size: .85rem; color: var(--success); }

/* how-to */
.howto pre {
  background: #101828; color: #e4e7ec; padding: 12px 14px; border-radius: 8px; overflow-x: auto; font-size: .85rem; margin: 8px 0 12px;
}
.howto pre code { background: none; padding: 0; color: inherit; }
.error-body {
  background: #101828; color: #e4e7ec; padding: 12px 14px; border-radius: 8px; overflow-x: auto; font-size: .85rem; margin: 8px 0 0;
}
.error-body code { background: none; padding: 0; color: inherit; white-space: pre; }
.pager { justify-content: flex-end; }
.disclosed, .clienta-matches { list-style: none; padding: 0; margin: 8px 0 0; display: grid; gap: 6px; }
.clienta-matches li {
  display: flex; gap: 12px; align-items: center; justify-content: space-between; padding: 8px 0; border-bottom: 1px solid var(--border);
}
.log-filters .form-grid { grid-template-columns: repeat(auto-fill, minmax(180px, 1fr)); gap: 0 16px; }

/* superadmin bar */
.su-bar {
  display: flex; align-items: center; gap: 12px 16px; flex-wrap: wrap; background: #f4f3ff; border: 1px solid #d9d6fe; color: #3e1c96;
  border-radius: var(--radius); padding: 12px 16px; margin-bottom: 20px;
}
.su-bar form { display: flex; gap: 8px; align-items: center; margin-left: auto; flex-wrap: wrap; }
.su-bar label { margin: 0; }
.su-bar select { width: auto; min-width: 240px; }
.clinic-list { list-style: none; padding: 0; margin: 16px 0 0; display: grid; gap: 10px; }
.clinic-list a {
  display: flex; justify-content: space-between; align-items: center; gap: 12px; padding: 14px 16px; border: 1px solid var(--border);
  border-radius: 10px; text-decoration: none; color: var(--text);
}
.clinic-list a:hover { border-color: var(--primary); background: var(--primary-soft); }

/* sign-in */
.auth {
  min-height: 100vh; display: flex; flex-direction: column; align-items: center; justify-content: center; padding: 32px 16px;
  background: radial-gradient(1200px 600px at 50% -10%, #dff1ef 0%, transparent 60%), var(--bg);
}
.auth .brand { margin-bottom: 20px; font-size: 1.125rem; }
.auth-card {
  width: 100%; max-width: 420px; background: var(--surface); border: 1px solid var(--border); border-radius: 16px;
  box-shadow: 0 12px 32px rgba(16, 24, 40, .08); padding: 32px;
}
.auth-card h1 { font-size: 1.5rem; margin-bottom: 6px; }
.auth-card .lead { color: var(--muted); margin-bottom: 22px; }
.auth-card .btn { width: 100%; margin-top: 4px; }
.auth-foot { margin-top: 20px; font-size: .875rem; color: var(--muted); text-align: center; max-width: 420px; }

/* confirm and message pages */
.narrow { max-width: 640px; margin: 24px auto; }
.confirm h1 { font-size: 1.5rem; margin-bottom: 12px; }
.narrow h1 + .lead { margin-top: 8px; }
.tabs ul { list-style: none; display: flex; gap: 4px; padding: 0; margin: 4px 0 20px; border-bottom: 1px solid var(--border); }
.tabs a {
  display: inline-block; padding: 8px 14px; text-decoration: none; color: var(--muted); border-bottom: 2px solid transparent;
  margin-bottom: -1px; font-weight: 600;
}
.tabs a.active { color: var(--primary); border-bottom-color: var(--primary); }
.events-choice { border: 0; padding: 0; margin: 12px 0; }
.events-choice legend { font-weight: 600; margin-bottom: 6px; }
.checks { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 6px 16px; }
.check { display: flex; align-items: center; gap: 6px; font-weight: normal; margin: 0; }
.check input { width: 18px; height: 18px; accent-color: var(--primary); }
form.inline { display: inline; margin: 0; }
.url { font-family: var(--mono); font-size: .9rem; overflow-wrap: anywhere; }
/* e-mail addresses and request paths wrap only where views/wrap.ts marks (before "@"; after "/", before "?" and "&", ...): an
   address's halves stay whole, a path's piece breaks only when it is wider than its cell */
.email { overflow-wrap: normal; word-break: keep-all; }
.email > span { white-space: nowrap; }
.path { overflow-wrap: break-word; word-break: normal; }
.state-line { margin: 8px 0 0; color: var(--warning); }
.facts {
  display: grid; grid-template-columns: max-content 1fr; gap: 6px 16px; margin: 16px 0; padding: 14px 16px; background: #f7f9fb;
  border-radius: 10px; font-size: .925rem;
}
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.page-foot { color: var(--muted); font-size: .85rem; margin-top: 8px; }

@media (max-width: 760px) {
  .container { padding: 16px; }
  .topbar-inner { padding: 8px 16px; flex-wrap: wrap; row-gap: 4px; }
  .who-name { display: none; }
  .who { flex-wrap: nowrap; }
  .topbar .lang-switch { margin-left: auto; }
  .tabs ul { flex-wrap: wrap; }
  h1 { font-size: 1.5rem; }
  .page-head { flex-direction: column; gap: 12px; }
  .clinic-card { width: 100%; }
  .card { padding: 16px; }
  .form-row { grid-template-columns: 1fr; }
  .form-grid { grid-template-columns: 1fr; }
  .form-row .actions { padding-top: 0; }
  .form-row .btn { width: 100%; }
  .keybox { flex-direction: column; }
  table.keys thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.keys, table.keys tbody, table.keys tr, table.keys td { display: block; width: 100%; }
  table.keys tr { border: 1px solid var(--border); border-radius: 10px; padding: 6px 12px; margin-bottom: 12px; }
  table.keys td {
    display: flex; justify-content: space-between; gap: 12px; padding: 8px 0; border-bottom: 1px solid #eef1f5; text-align: right;
  }
  table.keys td::before { content: attr(data-label); font-weight: 600; color: var(--muted); text-align: left; flex-shrink: 0; }
  table.keys td > * { min-width: 0; }
  table.keys td.cell-name { justify-content: flex-start; text-align: left; font-size: 1.05rem; }
  table.keys td.cell-name::before { content: none; }
  table.keys td.actions { justify-content: flex-end; border-bottom: 0; }
  table.keys .key-actions { flex-direction: row; flex-wrap: wrap; justify-content: flex-end; }
  table.keys td .chips { justify-content: flex-end; }
  .cell-access { max-width: none; }
  table.keys td.actions::before { content: none; }
  .usage-grid { grid-template-columns: 1fr; }
  .su-bar form { margin-left: 0; width: 100%; }
  .su-bar select { min-width: 0; flex: 1; }
}
@media (max-width: 460px) {
  .who .badge-role { display: none; }
  .brand span { font-size: .95rem; }
}
@media (prefers-reduced-motion: reduce) { * { transition: none !important; } }
`;

const JS = `"use strict";
(function () {
  document.querySelectorAll("[data-copy-target]").forEach(function (btn) {
    var input = document.getElementById(btn.getAttribute("data-copy-target"));
    var status = document.getElementById(btn.getAttribute("data-copy-status"));
    if (!input) return;
    btn.hidden = false;
    btn.addEventListener("click", function () {
      var done = function (ok) {
        if (status) status.textContent = ok ? btn.getAttribute("data-copied") : btn.getAttribute("data-failed");
        if (ok) btn.classList.add("done");
        if (!ok) { input.focus(); input.select(); }
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(function () { done(true); }, function () { done(legacyCopy(input)); });
      } else {
        done(legacyCopy(input));
      }
    });
  });
  function legacyCopy(input) {
    input.focus();
    input.select();
    try { return document.execCommand("copy"); } catch (e) { return false; }
  }
  document.querySelectorAll("input[data-select-on-focus]").forEach(function (input) {
    input.addEventListener("focus", function () { input.select(); });
    input.addEventListener("click", function () { input.select(); });
  });
})();
`;

export const ICON_SVG =
  `<svg xmlns="http://www.w3.org/2000/svg" width="28" height="28" viewBox="0 0 28 28" aria-hidden="true" ` +
  `focusable="false"><rect width="28" height="28" rx="8" fill="#0b6b66"/><path d="M11.5 7h5v4.5H21v5h-4.5V21h-5v-4.5H7v-5h4.5z" ` +
  `fill="#fff"/></svg>`;

interface Asset {
  body: string;
  type: string;
}

function hashed(name: string, ext: string, body: string, type: string): [string, Asset] {
  const h = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return [`${name}-${h}.${ext}`, { body, type }];
}

const css = hashed('app', 'css', CSS, 'text/css; charset=utf-8');
const js = hashed('app', 'js', JS, 'text/javascript; charset=utf-8');
const icon = hashed('icon', 'svg', ICON_SVG, 'image/svg+xml');

export const ASSET_PREFIX = '/dashboard/assets/';
export const assetUrls = { css: ASSET_PREFIX + css[0], js: ASSET_PREFIX + js[0], icon: ASSET_PREFIX + icon[0] };
export const assets = new Map<string, Asset>([css, js, icon]);
