// Runs an Apps Script file in Node's vm with the stand-ins of apps-script-stand-ins.ts: a job as
// JSON on stdin (the script's path, its script properties, top-level settings to replace as a
// person would edit them, then the steps: functions to call, or properties to change), and what
// happened as JSON on stdout. A process of its own, because the stand-in UrlFetchApp.fetch is
// synchronous (as Apps Script's is) and would otherwise block the test's server.
import fs from 'node:fs';
import vm from 'node:vm';
import { appsScriptGlobals, type FetchRecord, type SheetState, type Trigger } from './apps-script-stand-ins.js';

export interface AppsScriptJob {
  script: string;
  properties: Record<string, string>;
  timeZone: string;
  csvTrailingBlankRow?: boolean;
  /** Top-level variables of the script to replace before the steps (COPIES, PAGE_SIZE). */
  settings?: Record<string, unknown>;
  steps: ({ call: string } | { properties: Record<string, string> })[];
}

export interface AppsScriptRun {
  /** Per step: the message of the error it threw, or null. */
  errors: (string | null)[];
  sheets: Record<string, SheetState>;
  toasts: { message: string; title: string }[];
  requests: FetchRecord[];
  triggers: Trigger[];
  menus: { name: string; items: [string, string][] }[];
}

function run(job: AppsScriptJob): AppsScriptRun {
  const properties = { ...job.properties };
  const { timeZone, csvTrailingBlankRow } = job;
  const { globals, recorded, cleanUp } = appsScriptGlobals({ properties, timeZone, csvTrailingBlankRow });
  try {
    const context = vm.createContext({ ...globals });
    vm.runInContext(fs.readFileSync(job.script, 'utf8'), context, { filename: job.script });
    Object.assign(context, job.settings ?? {});
    const errors = job.steps.map((step) => {
      if ('properties' in step) {
        Object.assign(properties, step.properties);
        return null;
      }
      try {
        (context[step.call] as () => void)();
        return null;
      } catch (e) {
        return (e as Error).message;
      }
    });
    return {
      errors,
      sheets: Object.fromEntries([...recorded.sheets].map(([name, sheet]) => [name, sheet.state()])),
      toasts: recorded.toasts,
      requests: recorded.requests,
      triggers: recorded.triggers,
      menus: recorded.menus,
    };
  } finally {
    cleanUp();
  }
}

const job = JSON.parse(fs.readFileSync(0, 'utf8')) as AppsScriptJob;
process.stdout.write(JSON.stringify(run(job)));
