// The command line of `npm run bench` (see USAGE, or `npm run bench -- --help`).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandLine } from '../../tools/args.js';
import { CASES } from './cases.js';
import { parseBudget } from './memory-budget.js';

/** The repository's root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

const USAGE = `Usage: npm run bench -- [options]

  --cases LIST           run only these cases (ids: CASE_IDS); a target is judged when
                         its cases ran (default: all). The platformatic case installs
                         Platformatic DB into bench/.platformatic on its first run (npm install)
  --scale N              size of the clinic under load: N x (1000 citas, 200 clientas,
                         500 llamadas) (default 100)
  --small-clinics N      other clinics beside it (default 2)
  --small-scale N        their scale (default 5)
  --duration S           seconds of load per case (default 10)
  --warmup S             seconds of warm-up before each case, not measured (default 2)
  --connections N        concurrent connections in the closed-loop cases (default 20)
  --rate N               offered requests/s of the open-loop case (default 300)
  --repeat N             N rounds, each running every case once in turn; each case's median
                         round is reported (default 1)
  --quiet-wait S         before each case, wait up to S seconds for other programs on the
                         machine to go quiet (default 60; 0: do not wait)
  --node PATH            the node binary that runs the service (default: this one), e.g.
                         /opt/node22/bin/node for the memory target on Node 22
  --node-arg ARG         pass ARG to the service's node (repeatable)
  --ref REV              benchmark a git revision (e.g. main~1) instead of the working tree:
                         exported and compiled into bench/.build, no checkout needed
  --dist                 run the existing dist/ (bin/clinic-api.js) instead of compiling
  --memory-budget SIZE   the servers' memory limit, a memory cgroup as a container's limit
                         (e.g. 768M; "none": the machine's memory) (default 1G)
  --data-dir DIR         keep the data set in DIR and reuse it on later runs, its request
                         log emptied (default: a temporary directory, removed at the end)
  -h, --help
`;

export function parseOptions(argv?: string[]) {
  const cli = commandLine({
    name: 'bench',
    usage: USAGE.replace('CASE_IDS', CASES.map((c) => c.id).join(', ')),
    argv,
    options: {
      cases: { type: 'string' },
      scale: { type: 'string', default: '100' },
      'small-clinics': { type: 'string', default: '2' },
      'small-scale': { type: 'string', default: '5' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '20' },
      rate: { type: 'string', default: '300' },
      repeat: { type: 'string', default: '1' },
      'quiet-wait': { type: 'string', default: '60' },
      node: { type: 'string' },
      'node-arg': { type: 'string', multiple: true },
      ref: { type: 'string' },
      dist: { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      'memory-budget': { type: 'string', default: '1G' },
    },
  });
  const { values, fail } = cli;
  if (values.ref !== undefined && values.dist) fail('--ref and --dist exclude each other');
  let cases = CASES;
  if (values.cases) {
    const ids = values.cases.split(',').map((s) => s.trim());
    const unknown = ids.filter((id) => !CASES.some((c) => c.id === id));
    if (unknown.length) fail(`unknown case(s): ${unknown.join(', ')}`);
    cases = CASES.filter((c) => ids.includes(c.id));
  }
  if (values.node !== undefined && !fs.existsSync(values.node)) fail(`--node ${values.node}: no such file`);
  return {
    cases,
    scale: cli.number('scale', values.scale, 0.01, 10_000),
    smallClinics: cli.number('small-clinics', values['small-clinics'], 0, 20),
    smallScale: cli.number('small-scale', values['small-scale'], 0.01, 1000),
    duration: cli.number('duration', values.duration, 1, 3600),
    warmup: cli.number('warmup', values.warmup, 0, 600),
    connections: cli.number('connections', values.connections, 1, 1000),
    rate: cli.number('rate', values.rate, 1, 100_000),
    repeat: cli.number('repeat', values.repeat, 1, 99),
    quietWait: cli.number('quiet-wait', values['quiet-wait'], 0, 3600),
    node: values.node ?? null,
    nodeArgs: values['node-arg'] ?? [],
    ref: values.ref ?? null,
    prebuilt: values.dist ? ROOT : null,
    dataDir: values['data-dir'] ? path.resolve(values['data-dir']) : null,
    memoryBudget: budgetOption(values['memory-budget'], fail),
  };
}

export type Options = ReturnType<typeof parseOptions>;

function budgetOption(text: string, fail: (message: string) => never): number | null {
  try {
    return parseBudget(text);
  } catch (err) {
    return fail((err as Error).message);
  }
}
