// docs/spreadsheets.md as a clinic would use it. The Google Sheets script the page shows is the file
// docs/spreadsheets/clinic-api.gs, run as it is in Node's vm with stand-ins for Apps Script's
// services (apps-script-stand-ins.ts, in a process of its own) against a real listening server on
// both databases: every page of each list lands in its sheet exactly as the API's JSON has it,
// text columns formatted as plain text before anything is written; a refused key, a bad filter
// and an unreachable server each leave the data as it was and say why. The Excel query is the
// file docs/spreadsheets/clinic-api.pq: Microsoft's own M parser reads it, and the requests it
// makes (path, query, headers, the walk over the pages) are sent to the real server, which
// answers them with CSV and its paging headers, and its errors with the JSON the query reads.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cita } from '../../src/collections/citas.js';
import { Clienta } from '../../src/collections/clientas.js';
import { Llamada } from '../../src/collections/llamadas.js';
import { buildTestApp, seedRecords, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A, citaRecord, clientaRecord } from '../helpers/fixtures.js';
import { ok, tick } from '../http/helpers.js';
import type { AppsScriptJob, AppsScriptRun } from './run-apps-script.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = path.join(ROOT, 'docs/spreadsheets/clinic-api.gs');
const QUERY = path.join(ROOT, 'docs/spreadsheets/clinic-api.pq');
const DOC = fs.readFileSync(path.join(ROOT, 'docs/spreadsheets.md'), 'utf8');
const LISTS = { citas: Cita, clientas: Clienta, llamadas: Llamada } as const;
type List = keyof typeof LISTS;
type Json = Record<string, any>;

/** Runs a job in run-apps-script.ts (its own process: the stand-in fetch blocks while curl waits for the server). */
function runAppsScript(job: Omit<AppsScriptJob, 'script' | 'timeZone'>): Promise<AppsScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/docs/run-apps-script.ts'], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (err += b.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out) as AppsScriptRun) : reject(new Error(`run-apps-script exited ${code}: ${err}`)),
    );
    child.stdin.end(JSON.stringify({ ...job, script: SCRIPT, timeZone: 'Europe/Madrid' }));
  });
}

/** The API's number fields with the format the script gives them: integers '0', other numbers '0.00'. */
function numberFormats(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const schema of Object.values(LISTS)) {
    for (const [name, field] of Object.entries(schema.properties as Record<string, { type?: unknown }>)) {
      if (field.type === 'integer') out[name] = '0';
      if (field.type === 'number') out[name] = '0.00';
    }
  }
  return out;
}

/**
 * What the sheet must hold for these JSON records: the columns, then a row per record, numbers as
 * numbers and the rest as the JSON's text.
 */
function expectedSheet(list: List, records: Json[]): unknown[][] {
  const columns = Object.keys(LISTS[list].properties);
  const numbers = numberFormats();
  const rows = records.map((r) => columns.map((c) => (r[c] === null ? '' : c in numbers ? r[c] : String(r[c]))));
  return [columns, ...rows];
}

/** The fenced block of the given language in docs/spreadsheets.md that follows `heading`. */
function docBlock(heading: string, lang: string): string {
  const at = DOC.indexOf(heading);
  if (at < 0) throw new Error(`docs/spreadsheets.md: no heading "${heading}"`);
  const section = DOC.slice(at);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section);
  if (!m) throw new Error(`docs/spreadsheets.md: no \`\`\`${lang} block after "${heading}"`);
  return m[1]!;
}

describe('docs/spreadsheets.md', () => {
  it('shows the Power Query file exactly, and links the Apps Script file that the tests run', () => {
    expect(docBlock('## 2. Excel', 'powerquery')).toBe(fs.readFileSync(QUERY, 'utf8'));
    const sheets = DOC.slice(DOC.indexOf('## 3. Google Sheets'));
    expect(sheets).toContain('](spreadsheets/clinic-api.gs)');
  });

  it("the script's number columns are exactly the API's number fields, with their formats", () => {
    const context = vm.createContext({});
    vm.runInContext(fs.readFileSync(SCRIPT, 'utf8'), context);
    expect(JSON.parse(JSON.stringify(context['NUMBER_COLUMNS']))).toEqual(numberFormats());
    const query = fs.readFileSync(QUERY, 'utf8');
    const listed = /NumberColumns = \{([^}]*)\}/
      .exec(query)![1]!
      .split(',')
      .map((s) => JSON.parse(s.trim()) as string);
    expect(listed.sort()).toEqual(Object.keys(numberFormats()).sort());
  });
});

describe.each(dialects())('the Google Sheets script against a real server (%s)', (dialect) => {
  let t: TestApp;
  let base: string;
  const copies = [
    { sheet: 'Citas', list: 'citas', query: '' },
    { sheet: 'Clientas', list: 'clientas', query: '' },
    { sheet: 'Llamadas', list: 'llamadas', query: 'desde=2026-01-01' },
  ];
  beforeAll(async () => {
    t = await buildTestApp(dialect);
    // Text a spreadsheet program would take for something else: a formula, a line break, quotes, a comma, a leading +.
    await seedRecords(t.database, t.clinicA, [
      clientaRecord('0a000001-0000-4000-8000-000000000901', '=HYPERLINK("x")', '+34600000009', { email: 'a,b@example.com' }),
      citaRecord('0a000002-0000-4000-8000-000000000901', A.maria, '2026-03-30T10:00:00+02:00', {
        notas: '=1+1',
        precio_cents: 3505,
      }),
      citaRecord('0a000002-0000-4000-8000-000000000902', A.maria, '2026-03-30T11:00:00+02:00', {
        notas: 'Línea 1\r\n"dos", tres',
      }),
    ]);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t.close();
  });

  async function jsonRecords(list: List, query: string): Promise<Json[]> {
    const body = await ok(t, `/api/v1/${list}?${query ? query + '&' : ''}limit=500`);
    return body[list] as Json[];
  }

  it.each([false, true])(
    'copies every page of each list exactly as the JSON has it (parser yields a blank last row: %s)',
    async (blankRow) => {
      tick(t);
      const run = await runAppsScript({
        properties: { CLINIC_API_URL: `${base}/`, CLINIC_API_KEY: t.keyA },
        settings: { COPIES: copies, PAGE_SIZE: 2 },
        csvTrailingBlankRow: blankRow,
        steps: [{ call: 'updateClinicData' }],
      });
      expect(run.errors).toEqual([null]);
      const formats = numberFormats();
      for (const copy of copies) {
        const records = await jsonRecords(copy.list as List, copy.query);
        expect(records.length, copy.list).toBeGreaterThan(2);
        const sheet = run.sheets[copy.sheet]!;
        expect(sheet.values, copy.sheet).toEqual(expectedSheet(copy.list as List, records));
        // Formats were set before the values: text columns were plain text when written.
        const columns = sheet.values[0] as string[];
        sheet.formatsWhenWritten.forEach((row, r) =>
          row.forEach((format, c) =>
            expect(format, `${copy.sheet} ${r + 1},${c + 1}`).toBe(r > 0 && formats[columns[c]!] ? formats[columns[c]!] : '@'),
          ),
        );
        expect(sheet.frozenRows).toBe(1);
        expect(sheet.notes['1,1']).toMatch(new RegExp(`^Updated \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d: ${records.length} rows\\.$`));
        // Every page was asked for, following the Link of the page before; the key and Accept on each.
        const asked = run.requests.filter((r) => r.url.startsWith(`${base}/api/v1/${copy.list}?`));
        expect(asked).toHaveLength(Math.ceil(records.length / 2));
        expect(asked[0]!.url).toBe(`${base}/api/v1/${copy.list}?${copy.query ? copy.query + '&' : ''}limit=2`);
        asked.forEach((r, i) => {
          expect(r.headers).toEqual({ Authorization: `Bearer ${t.keyA}`, Accept: 'text/csv' });
          expect(r.status).toBe(200);
          const link = /^<([^>]+)>; rel="next"$/.exec(r.responseHeaders['link'] ?? '');
          if (i + 1 < asked.length) expect(base + link![1]).toBe(asked[i + 1]!.url);
          else expect(link).toBeNull();
        });
      }
      expect(run.toasts).toEqual([{ message: 'Every sheet is up to date.', title: 'Clinic data' }]);
    },
  );

  it('a refused key (401) leaves the data as it was and says why, in the sheet and in a toast', async () => {
    tick(t);
    const run = await runAppsScript({
      properties: { CLINIC_API_URL: base, CLINIC_API_KEY: t.keyA },
      settings: { COPIES: copies.slice(0, 1) },
      steps: [{ call: 'updateClinicData' }, { properties: { CLINIC_API_KEY: `svc_${'x'.repeat(43)}` } }, { call: 'updateClinicData' }],
    });
    const expected = expectedSheet('citas', await jsonRecords('citas', ''));
    expect(run.errors[0]).toBeNull();
    expect(run.errors[2]).toMatch(/^Citas: the API key was refused \(401 invalid_api_key\): it is wrong, revoked or expired\./);
    expect(run.sheets['Citas']!.values).toEqual(expected);
    expect(run.sheets['Citas']!.notes['1,1']).toMatch(/^Update failed .*: the API key was refused \(401 invalid_api_key\)/);
    expect(run.toasts.at(-1)).toEqual({ message: run.errors[2], title: 'Clinic data: not updated' });
  });

  it('a bad filter (400) names the parameter; an unreachable server names the address; missing settings say where to set them', async () => {
    tick(t);
    const bad = await runAppsScript({
      properties: { CLINIC_API_URL: base, CLINIC_API_KEY: t.keyA },
      settings: { COPIES: [{ sheet: 'Citas', list: 'citas', query: 'estado=bogus' }] },
      steps: [{ call: 'updateClinicData' }],
    });
    expect(bad.errors[0]).toMatch(
      /^Citas: the request was refused \(400 invalid_parameter\)\. The server said: .*estado.*Check this sheet's line in COPIES\.$/,
    );
    const closed = await buildTestApp(dialect, { seed: false });
    const gone = await closed.app.listen({ port: 0, host: '127.0.0.1' });
    await closed.close();
    const unreachable = await runAppsScript({
      properties: { CLINIC_API_URL: gone, CLINIC_API_KEY: t.keyA },
      steps: [{ call: 'updateClinicData' }],
    });
    expect(unreachable.errors[0]).toContain(`Citas: could not reach ${gone} (`);
    const unset = await runAppsScript({ properties: {}, steps: [{ call: 'updateClinicData' }] });
    expect(unset.errors[0]).toMatch(/^CLINIC_API_URL is missing .*Project Settings > Script properties/);
    expect(unset.requests).toEqual([]);
  });

  it('the menu calls functions the script has; hourly updates are one trigger, however often they are started, until stopped', async () => {
    const run = await runAppsScript({
      properties: {},
      steps: [{ call: 'onOpen' }, { call: 'startHourlyUpdates' }, { call: 'startHourlyUpdates' }],
    });
    expect(run.errors).toEqual([null, null, null]);
    expect(run.menus).toEqual([
      {
        name: 'Clinic data',
        items: [
          ['Update now', 'updateClinicData'],
          ['Update every hour', 'startHourlyUpdates'],
          ['Stop hourly updates', 'stopHourlyUpdates'],
        ],
      },
    ]);
    expect(run.triggers).toEqual([{ handler: 'updateClinicData', everyHours: 1 }]);
    const stopped = await runAppsScript({ properties: {}, steps: [{ call: 'startHourlyUpdates' }, { call: 'stopHourlyUpdates' }] });
    expect(stopped.triggers).toEqual([]);
  });
});
