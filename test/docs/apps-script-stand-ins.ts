// Thin stand-ins for the Apps Script services docs/spreadsheets/clinic-api.gs uses, so that the
// very file the docs tell a clinic to paste runs in Node's vm against a real server:
// - UrlFetchApp.fetch: synchronous, as in Apps Script, by running curl (so the server must live in
//   another process: see run-apps-script.ts); without muteHttpExceptions a status of 400 or more
//   throws, and a server that cannot be reached throws, as Apps Script does;
// - PropertiesService: the script properties the test sets;
// - Utilities.parseCsv: a real CSV parser (csv-parse), optionally followed by a blank row, which
//   the script must ignore (whether Apps Script's parser yields one after the last line break is
//   not documented); Utilities.formatDate for the one pattern the script uses;
// - SpreadsheetApp: an in-memory grid per sheet recording each cell's value, its number format,
//   and the number format it had when its value was written; notes, toasts, the menu;
// - ScriptApp: the project's triggers.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';

/** The options of UrlFetchApp.fetch() that the scripts use. */
interface FetchParams {
  method?: string;
  headers?: Record<string, string>;
  muteHttpExceptions?: boolean;
  followRedirects?: boolean;
}

export interface FetchRecord {
  url: string;
  headers: Record<string, string>;
  status: number;
  responseHeaders: Record<string, string>;
}

export interface SheetState {
  values: unknown[][];
  formats: string[][];
  /** The number format each cell had when its value was written. */
  formatsWhenWritten: string[][];
  notes: Record<string, string>;
  frozenRows: number;
}

export class FakeSheet {
  private cells = new Map<string, { value?: unknown; format?: string; formatWhenWritten?: string }>();
  notes: Record<string, string> = {};
  frozenRows = 0;

  constructor(readonly name: string) {}

  getName(): string {
    return this.name;
  }

  getRange(row: number, column: number, rows = 1, columns = 1): FakeRange {
    if (![row, column, rows, columns].every((n) => Number.isInteger(n) && n >= 1))
      throw new Error(`bad range ${row},${column},${rows},${columns}`);
    return new FakeRange(this, row, column, rows, columns);
  }

  clearContents(): void {
    for (const cell of this.cells.values()) delete cell.value;
  }

  setFrozenRows(n: number): void {
    this.frozenRows = n;
  }

  cell(row: number, column: number) {
    const key = `${row},${column}`;
    let c = this.cells.get(key);
    if (!c) this.cells.set(key, (c = {}));
    return c;
  }

  /** The cells from A1 to the last one holding a value ('' where none). */
  state(): SheetState {
    let height = 0;
    let width = 0;
    for (const [key, c] of this.cells) {
      if (c.value === undefined) continue;
      const [r, col] = key.split(',').map(Number) as [number, number];
      height = Math.max(height, r);
      width = Math.max(width, col);
    }
    const grid = <T>(f: (c: { value?: unknown; format?: string; formatWhenWritten?: string }) => T) =>
      Array.from({ length: height }, (_, r) => Array.from({ length: width }, (_, c) => f(this.cells.get(`${r + 1},${c + 1}`) ?? {})));
    return {
      values: grid((c) => c.value ?? ''),
      formats: grid((c) => c.format ?? ''),
      formatsWhenWritten: grid((c) => c.formatWhenWritten ?? ''),
      notes: this.notes,
      frozenRows: this.frozenRows,
    };
  }
}

class FakeRange {
  constructor(
    private sheet: FakeSheet,
    private row: number,
    private column: number,
    private rows: number,
    private columns: number,
  ) {}

  private each(f: (r: number, c: number) => void) {
    for (let r = 0; r < this.rows; r++) for (let c = 0; c < this.columns; c++) f(r, c);
  }

  setNumberFormat(format: string): this {
    this.each((r, c) => (this.sheet.cell(this.row + r, this.column + c).format = format));
    return this;
  }

  setValues(values: unknown[][]): this {
    // Apps Script refuses data whose size differs from the range's.
    if (values.length !== this.rows || values.some((v) => v.length !== this.columns)) {
      throw new Error(`The data (${values.length} rows) does not match the range (${this.rows}x${this.columns})`);
    }
    this.each((r, c) => {
      const cell = this.sheet.cell(this.row + r, this.column + c);
      cell.value = values[r]![c];
      cell.formatWhenWritten = cell.format ?? '';
    });
    return this;
  }

  setNote(note: string): this {
    this.sheet.notes[`${this.row},${this.column}`] = note;
    return this;
  }
}

export interface Trigger {
  handler: string;
  everyHours: number;
}

export interface StandInOptions {
  properties: Record<string, string>;
  timeZone: string;
  /** Utilities.parseCsv also yields a blank row at the end. */
  csvTrailingBlankRow?: boolean;
}

/** The globals of an Apps Script project bound to one spreadsheet, and what they recorded. */
export function appsScriptGlobals(opts: StandInOptions) {
  const sheets = new Map<string, FakeSheet>();
  const toasts: { message: string; title: string }[] = [];
  const requests: FetchRecord[] = [];
  const triggers: Trigger[] = [];
  const menus: { name: string; items: [string, string][] }[] = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'apps-script-'));

  const spreadsheet = {
    getSheetByName: (name: string) => sheets.get(name) ?? null,
    insertSheet: (name: string) => {
      if (sheets.has(name)) throw new Error(`A sheet with the name "${name}" already exists`);
      const sheet = new FakeSheet(name);
      sheets.set(name, sheet);
      return sheet;
    },
    toast: (message: string, title: string) => void toasts.push({ message, title }),
    getSpreadsheetTimeZone: () => opts.timeZone,
  };

  const UrlFetchApp = {
    fetch(url: string, params: FetchParams) {
      const headersFile = path.join(tmp, 'headers');
      const bodyFile = path.join(tmp, 'body');
      const args = ['-sS', '--max-time', '20', '-D', headersFile, '-o', bodyFile, '-X', (params.method ?? 'get').toUpperCase()];
      for (const [name, value] of Object.entries(params.headers ?? {})) args.push('-H', `${name}: ${value}`);
      if (params.followRedirects !== false) args.push('-L');
      args.push('--', url);
      try {
        execFileSync('curl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
      } catch {
        throw new Error(`Address unavailable: ${url}`);
      }
      const lines = fs.readFileSync(headersFile, 'latin1').split('\r\n');
      const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(lines[0]!)![1]);
      const responseHeaders: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) responseHeaders[line.slice(0, colon)] = line.slice(colon + 1).trim();
      }
      const body = fs.readFileSync(bodyFile);
      requests.push({ url, headers: { ...params.headers }, status, responseHeaders });
      if (status >= 400 && !params.muteHttpExceptions) throw new Error(`Request failed for ${url} returned code ${status}`);
      return {
        getResponseCode: () => status,
        getContentText: (charset?: string) => {
          if (charset !== undefined && charset.toUpperCase() !== 'UTF-8') throw new Error(`this stand-in reads UTF-8 only, not ${charset}`);
          return body.toString('utf8');
        },
        getAllHeaders: () => ({ ...responseHeaders }),
      };
    },
  };

  const Utilities = {
    parseCsv: (text: string): string[][] => {
      const rows = parse(text) as string[][];
      return opts.csvTrailingBlankRow ? [...rows, ['']] : rows;
    },
    formatDate: (date: Date, timeZone: string, pattern: string) => {
      if (pattern !== 'yyyy-MM-dd HH:mm') throw new Error(`this stand-in formats yyyy-MM-dd HH:mm only, not ${pattern}`);
      const parts = new Intl.DateTimeFormat('en-CA', {
        timeZone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }).formatToParts(date);
      const p = (type: string) => parts.find((x) => x.type === type)!.value;
      return `${p('year')}-${p('month')}-${p('day')} ${p('hour')}:${p('minute')}`;
    },
  };

  const menuBuilder = (name: string) => {
    const items: [string, string][] = [];
    const builder = {
      addItem: (label: string, fn: string) => (items.push([label, fn]), builder),
      addToUi: () => void menus.push({ name, items }),
    };
    return builder;
  };

  const ScriptApp = {
    newTrigger: (handler: string) => ({
      timeBased: () => ({
        everyHours: (n: number) => ({ create: () => void triggers.push({ handler, everyHours: n }) }),
      }),
    }),
    getProjectTriggers: () => triggers.map((t) => ({ getHandlerFunction: () => t.handler, trigger: t })),
    deleteTrigger: (t: { trigger: Trigger }) => void triggers.splice(triggers.indexOf(t.trigger), 1),
  };

  const globals = {
    UrlFetchApp,
    Utilities,
    ScriptApp,
    PropertiesService: { getScriptProperties: () => ({ getProperty: (name: string) => opts.properties[name] ?? null }) },
    SpreadsheetApp: { getActiveSpreadsheet: () => spreadsheet, getUi: () => ({ createMenu: menuBuilder }) },
  };
  return {
    globals,
    recorded: { sheets, toasts, requests, triggers, menus },
    cleanUp: () => fs.rmSync(tmp, { recursive: true, force: true }),
  };
}
