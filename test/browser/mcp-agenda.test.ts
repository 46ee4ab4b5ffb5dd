// The MCP agenda view (docs/ai-assistants.md, "The agenda view") in a real headless Chromium,
// driven by a minimal MCP Apps host made with the ext-apps package's own host side (AppBridge
// over postMessage): the host reads ui://clinic-api/agenda from a real listening server with the
// official MCP client, loads it in a sandboxed frame under the extension's default content
// policy, and gives it a real list_citas result; the view's own tool calls go through the host to
// the same server. The browser runs in a zone far from the clinic's (UTC+14), so an hour drawn in
// the browser's zone would be off by half a day. Set AGENDA_SCREENSHOT=<file.png> to save the
// English week (docs/images/mcp-agenda.png is made so).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as esbuild from 'esbuild';
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENDA_SCRIPT_FILE, agendaScriptModule, buildAgendaScript } from '../../tools/agenda-view.js';
import { buildTestApp, seedRecords, type TestApp } from '../helpers/app.js';
import { citaRecord, clientaRecord, FIXTURE_NOW_MS } from '../helpers/fixtures.js';
import { CHROMIUM_PATH, chromiumPresent, launchChromium, SKIP_REASON } from './chromium.js';

if (!chromiumPresent) process.stderr.write(`\n[browser tests] SKIPPED: ${SKIP_REASON}\n\n`);
const TITLE = chromiumPresent
  ? `the MCP agenda view in headless Chromium (${CHROMIUM_PATH})`
  : `the MCP agenda view in headless Chromium: SKIPPED, ${SKIP_REASON}`;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The host page's script: AppBridge and PostMessageTransport from the package, as a chat client would use them. */
const HOST_SCRIPT = `
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
// The extension's default policy for a view that declares no domains.
const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; media-src data:; " +
  "connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'";
window.startHost = async ({ html, input, result, locale }) => {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.title = 'Agenda';
  frame.style.cssText = 'width: 1100px; height: 560px; border: 0; display: block';
  document.body.append(frame);
  const bridge = new AppBridge(null, { name: 'test-host', version: '1.0.0' }, { serverTools: {}, logging: {} }, {
    hostContext: { locale, theme: 'light', displayMode: 'inline', platform: 'web' },
  });
  bridge.oncalltool = (params) => window.hostCallsTool(params);
  bridge.onsizechange = ({ height }) => { if (height) frame.style.height = height + 'px'; };
  bridge.onloggingmessage = (params) => console.log('view log', JSON.stringify(params));
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = html.replace('<head>', '<head><meta http-equiv="Content-Security-Policy" content="' + CSP + '">');
  await initialized;
  await bridge.sendToolInput({ arguments: input });
  await bridge.sendToolResult(result);
  window.bridge = bridge;
};
window.setContext = (ctx) => window.bridge.setHostContext({ theme: 'light', displayMode: 'inline', platform: 'web', ...ctx });
`;

/** A week around the clock change of Sun 29 March 2026 in Madrid (02:00 -> 03:00), and a few days of the next. */
function records() {
  const id = (kind: 1 | 2, n: number) => `0c00000${kind}-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const people = ['María José Núñez', 'Lucía Romero', 'Carmen Ortiz', 'Elena Sanz', 'Ana Gil'];
  const clientas = people.map((name, i) => clientaRecord(id(1, i + 1), name, `+3460000000${i}`));
  const laura = { profesional_nombre: 'Laura Martín', sede_nombre: 'Sede Centro' };
  const sofia = { profesional_nombre: 'Sofía Ruiz', sede_nombre: 'Sede Nervión' };
  const citas: [number, string, Record<string, unknown>][] = [
    [2, '2026-03-23T09:30:00+01:00', { servicio: 'Manicura semipermanente', duracion_min: 45, estado: 'completada', ...laura }],
    [3, '2026-03-23T12:00:00+01:00', { servicio: 'Limpieza facial', estado: 'completada', ...sofia }],
    [4, '2026-03-24T10:00:00+01:00', { servicio: 'Depilación láser', duracion_min: 30, estado: 'no_asistio', ...laura }],
    [1, '2026-03-25T16:30:00+01:00', { servicio: 'Masaje relajante', estado: 'completada', ...sofia }],
    [5, '2026-03-26T11:15:00+01:00', { servicio: 'Pedicura', duracion_min: 50, estado: 'cancelada', ...sofia }],
    [2, '2026-03-27T18:00:00+01:00', { servicio: 'Presoterapia', duracion_min: 40, estado: 'completada', ...laura }],
    [1, '2026-03-28T09:00:00+01:00', { servicio: 'Limpieza facial', estado: 'confirmada', ...laura }],
    [3, '2026-03-28T09:00:00+01:00', { servicio: 'Manicura', duracion_min: 45, estado: 'pendiente', ...sofia }],
    // 08:00 UTC, as Saturday's 09:00: an hour later on the clinic's wall after the change
    [4, '2026-03-29T10:00:00+02:00', { servicio: 'Masaje relajante', estado: 'confirmada', ...laura }],
    [5, '2026-03-30T10:00:00+02:00', { servicio: 'Limpieza facial', estado: 'confirmada', ...sofia }],
    [1, '2026-04-01T17:00:00+02:00', { servicio: 'Manicura', duracion_min: 45, estado: 'pendiente', ...laura }],
  ];
  return [...clientas, ...citas.map(([who, at, over], i) => citaRecord(id(2, i + 1), id(1, who), at, over))];
}

describe.skipIf(!chromiumPresent)(TITLE, () => {
  let t: TestApp;
  let client: Client;
  let browser: Browser;
  let page: Page;
  let view: Frame;
  const calls: { name: string; arguments?: Record<string, unknown> }[] = [];
  const requests: string[] = [];
  const problems: string[] = [];
  const firstArgs = { desde: '2026-03-23', hasta: '2026-03-29' };
  let first: CallToolResult;

  beforeAll(async () => {
    t = await buildTestApp('sqlite', { seed: false, env: { RATE_LIMIT_BURST: '1000000' } });
    t.clock.now = FIXTURE_NOW_MS;
    await seedRecords(t.database, t.clinicA, records());
    const url = new URL('/mcp', await t.app.listen({ port: 0, host: '127.0.0.1' }));
    client = new Client(
      { name: 'test-host', version: '1.0.0' },
      {
        capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } } as Record<
          string,
          unknown
        >,
      },
    );
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${t.keyA}` } } }));

    // What a host does: the tool names its view; the model's call; the view's document.
    const tool = (await client.listTools()).tools.find((x) => x.name === 'list_citas')!;
    const uri = (tool._meta as { ui: { resourceUri: string } }).ui.resourceUri;
    first = (await client.callTool({ name: 'list_citas', arguments: firstArgs })) as CallToolResult;
    const html = ((await client.readResource({ uri })).contents[0] as { text: string }).text;

    const host = await esbuild.build({
      stdin: { contents: HOST_SCRIPT, resolveDir: ROOT, loader: 'js' },
      bundle: true,
      format: 'iife',
      write: false,
      logLevel: 'silent',
    });
    browser = await launchChromium();
    const context = await browser.newContext({ timezoneId: 'Pacific/Kiritimati', locale: 'en-US', viewport: { width: 1140, height: 700 } });
    page = await context.newPage();
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    await page.exposeFunction('hostCallsTool', async (params: { name: string; arguments?: Record<string, unknown> }) => {
      calls.push({ name: params.name, arguments: params.arguments });
      return client.callTool(params);
    });
    await page.setContent(
      `<!doctype html><html><body style="margin:20px;background:#eef1f5"><script>${host.outputFiles[0]!.text}</script></body></html>`,
    );
    await page.evaluate(`startHost(${JSON.stringify({ html, input: firstArgs, result: first, locale: 'es-ES' })})`);
    view = page.frames().find((f) => f !== page.mainFrame())!;
    await view.locator('.cita').first().waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await client?.close();
    await t?.close();
  });

  const focused = () => view.evaluate<string>("document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent");
  /** Each drawn appointment: its column's day, its time text, its accessible name. */
  const drawn = () =>
    view.evaluate<{ id: string; column: string; time: string; label: string }[]>(
      `[...document.querySelectorAll('.cita')].map((b) => ({
        id: b.dataset.id,
        column: b.closest('.col').dataset.day,
        time: b.querySelector('.time').textContent,
        label: b.getAttribute('aria-label'),
      }))`,
    );

  it('the committed view script is what the sources build to (npm run generate:agenda)', async () => {
    expect(fs.readFileSync(AGENDA_SCRIPT_FILE, 'utf8')).toBe(agendaScriptModule(await buildAgendaScript()));
  });

  it('draws every appointment of the result on its day and hour in the clinic’s zone, across the clock change, in Spanish', async () => {
    const citas = (first.structuredContent as { citas: { id: string; fecha_hora: string }[] }).citas;
    expect(citas).toHaveLength(9);
    const shown = await drawn();
    expect(shown.map((s) => s.id).sort()).toEqual(citas.map((c) => c.id).sort());
    for (const c of citas) {
      const s = shown.find((x) => x.id === c.id)!;
      expect(s.column, c.fecha_hora).toBe(c.fecha_hora.slice(0, 10));
      expect(s.time.startsWith(c.fecha_hora.slice(11, 16)), `${c.fecha_hora}: ${s.time}`).toBe(true);
    }
    // Saturday 09:00 (+01:00) and Sunday 10:00 (+02:00) are both 08:00 UTC (22:00 in the browser's zone)
    expect(shown.filter((s) => s.column === '2026-03-28').map((s) => s.time)).toEqual(['09:00–10:00', '09:00–09:45']);
    const sunday = shown.filter((s) => s.column === '2026-03-29');
    expect(sunday.map((s) => s.label)).toEqual(['10:00–11:00, Elena Sanz, Masaje relajante, Confirmada, con Laura Martín, en Sede Centro']);
    expect(await view.locator('.zone').textContent()).toBe('Horas de la clínica (UTC+01:00 → UTC+02:00)');
    expect(await view.locator('h1').textContent()).toBe('Agenda de citas');
    expect(await view.locator('.range').textContent()).toMatch(/^23.+29 mar 2026$/);
    expect(await view.locator('.day-head[data-day="2026-03-29"]').textContent()).toBe('dom 29');
    expect(await view.locator('.legend li').allTextContents()).toEqual([
      'Pendiente',
      'Confirmada',
      'Completada',
      'Cancelada',
      'No asistió',
    ]);
    expect(await view.locator('.status').textContent()).toBe('9 citas.');
    // a colour per status, and the same colour for the status in the legend
    const colours = await view.evaluate<[string, string | null][]>(
      `['pendiente', 'confirmada', 'completada', 'cancelada', 'no_asistio'].map((s) => {
        const card = document.querySelector('.cita.st-' + s);
        return [
          getComputedStyle(document.querySelector('.legend .st-' + s + ' .swatch')).backgroundColor,
          card ? getComputedStyle(card).borderLeftColor : null,
        ];
      })`,
    );
    expect(new Set(colours.map(([legend]) => legend)).size).toBe(5);
    for (const [legend, card] of colours) expect(card).toBe(legend);
    expect(calls).toEqual([]);
  });

  it('the next week is read through the host with a tool call, by keyboard, and drawn in place; the focus stays', async () => {
    await view.locator('.nav-prev').focus();
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Semana siguiente ›');
    await page.keyboard.press('Enter');
    await view.locator('.cita[data-day="2026-03-30"]').waitFor();
    expect(calls).toEqual([{ name: 'list_citas', arguments: { desde: '2026-03-30', hasta: '2026-04-05', limit: 500 } }]);
    expect(await view.locator('.range').textContent()).toMatch(/^30 mar.+5 abr 2026$/);
    expect((await drawn()).map((s) => [s.column, s.time])).toEqual([
      ['2026-03-30', '10:00–11:00'],
      ['2026-04-01', '17:00–17:45'],
    ]);
    expect(await view.locator('.zone').textContent()).toBe('Horas de la clínica (UTC+02:00)');
    expect(await focused()).toBe('Semana siguiente ›');
  });

  it('arrow keys move between days and appointments; Enter opens the day, Escape goes back to its week', async () => {
    await view.locator('.cita[data-day="2026-03-30"]').focus();
    await page.keyboard.press('ArrowRight'); // Tuesday has none: its heading
    expect(await focused()).toBe('martes, 31 de marzo de 2026: 0 citas. Ver el día');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    expect(await focused()).toMatch(/^17:00–17:45, María José Núñez, Manicura, Pendiente/);
    await page.keyboard.press('Enter');
    expect(await focused()).toBe('miércoles, 1 de abril de 2026');
    expect(await view.locator('.view-day').getAttribute('aria-pressed')).toBe('true');
    expect(await view.locator('.entry').allTextContents()).toEqual([
      '17:00–17:45María José NúñezManicura · 45 minPendientecon Laura Martín, en Sede Centro',
    ]);
    await page.keyboard.press('Escape');
    expect(await focused()).toBe('miércoles, 1 de abril de 2026: 1 cita. Ver el día');
    expect(await view.locator('.view-week').getAttribute('aria-pressed')).toBe('true');
    await page.keyboard.press('Shift+Tab');
    expect(await view.evaluate<string>('document.activeElement.className')).toBe('day-head');
  });

  it('follows the host’s locale: English labels when the host says en-GB', async () => {
    await view.locator('.nav-prev').click();
    await view.locator('.cita[data-day="2026-03-29"]').waitFor();
    expect(calls.at(-1)).toEqual({ name: 'list_citas', arguments: { desde: '2026-03-23', hasta: '2026-03-29', limit: 500 } });
    await page.evaluate("setContext({ locale: 'en-GB' })");
    await view.locator('h1', { hasText: 'Appointments' }).waitFor();
    expect(await view.locator('.nav-next').textContent()).toBe('Next week ›');
    expect(await view.locator('.legend li').allTextContents()).toEqual(['Pending', 'Confirmed', 'Completed', 'Cancelled', 'No-show']);
    expect(await view.locator('.day-head[data-day="2026-03-29"]').textContent()).toBe('Sun 29');
    expect(await view.locator('.cita[data-day="2026-03-29"]').getAttribute('aria-label')).toBe(
      '10:00–11:00, Elena Sanz, Masaje relajante, Confirmed, with Laura Martín, at Sede Centro',
    );
    expect(await view.locator('.zone').textContent()).toBe("Clinic's local time (UTC+01:00 → UTC+02:00)");
    expect(await view.evaluate<string>('document.documentElement.lang')).toBe('en');
    if (process.env.AGENDA_SCREENSHOT) {
      fs.mkdirSync(path.dirname(path.resolve(process.env.AGENDA_SCREENSHOT)), { recursive: true });
      await page.locator('iframe').screenshot({ path: process.env.AGENDA_SCREENSHOT });
    }
  });

  it('follows the host’s theme: dark colours when the host says dark, each status still its own', async () => {
    const colours =
      '[getComputedStyle(document.body).backgroundColor, ' +
      "getComputedStyle(document.querySelector('.cita.st-confirmada')).borderLeftColor]";
    const light = await view.evaluate<string[]>(colours);
    await page.evaluate("setContext({ locale: 'en-GB', theme: 'dark' })");
    await expect.poll(() => view.evaluate<string[]>(colours)).not.toEqual(light);
    const dark = await view.evaluate<string[]>(colours);
    expect(dark[0]).toBe('rgb(23, 23, 23)');
    expect(light[0]).toBe('rgb(255, 255, 255)');
    expect(dark[1]).not.toBe(light[1]);
    await page.evaluate("setContext({ locale: 'en-GB', theme: 'light' })");
  });

  it('loads nothing and breaks no rule of its content policy', () => {
    expect(requests).toEqual([]);
    expect(problems).toEqual([]);
  });
});
