// The command line of `npm run bench` (see USAGE, or `npm run bench -- --help`).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandLine } from '../../tools/args.js';
import { BACKUP_ID } from './backup.js';
import { CASES } from './cases.js';

/** The repository's root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

/** The id of the rate-limit comparison in --cases. */
export const LIMITS_ID = 'limits';
/** The id of the MCP server's comparison with REST in --cases (lib/mcp.ts). */
export const MCP_ID = 'mcp';
/** The id of the SDK's auto-paging walk (lib/sdk-paging.ts) in --cases. */
export const SDK_PAGING_ID = 'sdk-paging';

const USAGE = `Usage: npm run bench -- [options]

  --db sqlite|postgres   database (default sqlite). postgres starts a throw-away PostgreSQL 17
                         (embedded binaries, 127.0.0.1), one database per scale; the bare route
                         (SQLite only) is skipped and --data-dir keeps nothing between runs
  --scale N[,N...]       size of the clinic under load: N x (1000 citas, 200 clientas, 500 llamadas);
                         a list runs a growth series, e.g. 10,100,1000 (default 100)
  --small-clinics N      other clinics beside it (default 2)
  --small-scale N        their scale (default 5)
  --duration S           seconds of load per case (default 10)
  --warmup S             seconds of warm-up before each case, not measured (default 2)
  --connections N        concurrent connections in the closed-loop cases (default 20)
  --rate N               offered requests/s in the open-loop cases (default 300)
  --repeat N             run each case N times and report the median run (default 1); the
                         closed-loop cases in N rounds that run each of them once in turn
  --quiet-wait S         before each case, wait up to S seconds for other programs on the
                         machine to go quiet (default 60; 0: do not wait)
  --cases LIST           run only these cases (ids: CASE_IDS), the rate-limit
                         comparison only if the list names \`limits\` (e.g. --cases limits),
                         the MCP comparison only if it names \`mcp\`, and the SDK's
                         auto-paging only if it names \`sdk-paging\`;
                         \`backup\` (SQLite; only when named): \`clinic-api backup\` of the data
                         set while the service answers the citas page at 100 req/s, then a
                         restore of it; e.g. --scale 600 --cases backup (1M records)
  --no-mcp               skip the MCP server's comparison with REST (alternating rounds of the
                         same page as a tool call and as a GET; then 1,000 requests from 50
                         connections to a fresh process per side and round, for memory), which
                         otherwise runs after the cases; --cases mcp runs it alone
  --no-sdk-paging        skip the SDK's auto-paging walk: every cita of the big clinic read with
                         @clinic-api/sdk's for-await (packages/sdk/dist: npm install builds it),
                         its requests counted and its heap sampled (runs after the cases)
  --no-limits            skip the rate-limit comparison (in memory vs Redis, and two instances
                         sharing one limit), which otherwise runs after the fixed-rate cases and
                         needs redis-server (Debian: apt-get install redis-server)
  --ref REV              benchmark a git revision (e.g. HEAD, main~1) instead of the working
                         tree: exported and compiled into bench/.build, no checkout needed
  --dist                 run the existing dist/ (bin/clinic-api.js) instead of compiling
  --prebuilt DIR         run DIR/bin/clinic-api.js on DIR/dist (e.g. an experiment compiled by hand)
  --data-dir DIR         keep the data set in DIR/<db>-scale-N and reuse it on later runs
                         (default: a temporary directory, removed at the end)
  --node-arg ARG         pass ARG to the service's node (repeatable), e.g. --node-arg=--max-semi-space-size=8
  --cpu-prof DIR         run the service under node --cpu-prof, write the .cpuprofile to DIR
  --doc FILE             where to write the results (default docs/benchmarks.md)
  --no-doc               print the results only
  -h, --help
`;

export function parseOptions(argv?: string[]) {
  const cli = commandLine({
    name: 'bench',
    usage: USAGE.replace('CASE_IDS', [...CASES.map((c) => c.id), MCP_ID, LIMITS_ID, SDK_PAGING_ID, BACKUP_ID].join(', ')),
    argv,
    options: {
      db: { type: 'string', default: 'sqlite' },
      scale: { type: 'string', default: '100' },
      'small-clinics': { type: 'string', default: '2' },
      'small-scale': { type: 'string', default: '5' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '20' },
      rate: { type: 'string', default: '300' },
      repeat: { type: 'string', default: '1' },
      'quiet-wait': { type: 'string', default: '60' },
      cases: { type: 'string' },
      ref: { type: 'string' },
      dist: { type: 'boolean', default: false },
      prebuilt: { type: 'string' },
      'data-dir': { type: 'string' },
      'cpu-prof': { type: 'string' },
      'node-arg': { type: 'string', multiple: true },
      doc: { type: 'string', default: 'docs/benchmarks.md' },
      'no-doc': { type: 'boolean', default: false },
      'no-limits': { type: 'boolean', default: false },
      'no-mcp': { type: 'boolean', default: false },
      'no-sdk-paging': { type: 'boolean', default: false },
    },
  });
  const { values, fail } = cli;
  const db = cli.choice('db', values.db, ['sqlite', 'postgres'] as const);
  if ([values.ref !== undefined, values.dist, values.prebuilt !== undefined].filter(Boolean).length > 1)
    fail('--ref, --dist and --prebuilt exclude each other');
  const scales = cli.numbers('scale', values.scale, 0.01, 10_000);
  let cases = CASES;
  let limits = !values['no-limits'];
  let mcp = !values['no-mcp'];
  let sdkPaging = !values['no-sdk-paging'];
  // It copies the whole data set (a gigabyte at 1M records): only when asked for.
  let backup = false;
  if (values.cases) {
    const ids = values.cases.split(',').map((s) => s.trim());
    const unknown = ids.filter(
      (id) => id !== LIMITS_ID && id !== MCP_ID && id !== SDK_PAGING_ID && id !== BACKUP_ID && !CASES.some((c) => c.id === id),
    );
    if (unknown.length) fail(`unknown case(s): ${unknown.join(', ')}`);
    cases = CASES.filter((c) => ids.includes(c.id));
    limits = ids.includes(LIMITS_ID) && limits;
    mcp = ids.includes(MCP_ID) && mcp;
    sdkPaging = ids.includes(SDK_PAGING_ID) && sdkPaging;
    backup = ids.includes(BACKUP_ID);
  }
  if (backup && db === 'postgres') fail('the backup case is SQLite only: PostgreSQL is backed up with its own tools (pg_dump)');
  // The bare route is plain better-sqlite3 on the SQLite file: there is nothing to run it on.
  const skippedBare = db === 'postgres' && cases.some((c) => c.target === 'bare');
  if (skippedBare) {
    cases = cases.filter((c) => c.target !== 'bare');
    process.stderr.write('bench: --db postgres: the bare route is SQLite only, skipping it\n');
  }
  if (cases.length === 0 && !limits && !mcp && !sdkPaging && !backup) fail('no cases left to run');
  return {
    db,
    scales,
    smallClinics: cli.number('small-clinics', values['small-clinics'], 0, 20),
    smallScale: cli.number('small-scale', values['small-scale'], 0.01, 1000),
    duration: cli.number('duration', values.duration, 1, 3600),
    warmup: cli.number('warmup', values.warmup, 0, 600),
    connections: cli.number('connections', values.connections, 1, 1000),
    rate: cli.number('rate', values.rate, 1, 100_000),
    repeat: cli.number('repeat', values.repeat, 1, 99),
    quietWait: cli.number('quiet-wait', values['quiet-wait'], 0, 3600),
    cases,
    /** the rate-limit comparison (lib/limits.ts) */
    limits,
    /** the MCP server's comparison with REST (lib/mcp.ts) */
    mcp,
    /** the SDK's auto-paging walk (lib/sdk-paging.ts) */
    sdkPaging,
    /** the backup case (lib/backup.ts) */
    backup,
    skippedBare,
    ref: values.ref ?? null,
    prebuilt: values.prebuilt !== undefined ? path.resolve(values.prebuilt) : values.dist ? ROOT : null,
    dataDir: values['data-dir'] ? path.resolve(values['data-dir']) : null,
    cpuProf: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : null,
    nodeArgs: values['node-arg'] ?? [],
    doc: values['no-doc'] ? null : path.resolve(ROOT, values.doc),
  };
}

export type Options = ReturnType<typeof parseOptions>;
