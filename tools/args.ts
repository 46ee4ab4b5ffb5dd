// The one command-line parser of the benchmarks, scripts and measurements: node:util's parseArgs,
// strict (an unknown option, a missing value or a stray argument is refused), with -h/--help, a
// usage text, and numbers checked against their range. A bad command line prints what was wrong
// and the usage on stderr and exits 2.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

const HELP = { help: { type: 'boolean', short: 'h', default: false } } as const;

export interface CommandLineSpec<O extends ParseArgsOptionsConfig> {
  /** the program's name, before every error message */
  name: string;
  usage: string;
  options: O;
  /** exactly this many positional arguments (default 0) */
  positionals?: number;
  /** default: process.argv.slice(2) */
  argv?: string[];
}

type Parsed<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ options: O & typeof HELP; strict: true; allowPositionals: true }>
>;

export function commandLine<O extends ParseArgsOptionsConfig>(spec: CommandLineSpec<O>) {
  const fail = (message: string): never => {
    process.stderr.write(`${spec.name}: ${message}\n\n${spec.usage}`);
    process.exit(2);
  };
  let parsed: Parsed<O>;
  try {
    parsed = parseArgs({
      args: spec.argv ?? process.argv.slice(2),
      options: { ...spec.options, ...HELP },
      strict: true,
      allowPositionals: true,
    }) as Parsed<O>;
  } catch (err) {
    return fail((err as Error).message);
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(spec.usage);
    process.exit(0);
  }
  const wanted = spec.positionals ?? 0;
  if (parsed.positionals.length !== wanted) {
    fail(
      wanted === 0 ? `unexpected argument "${parsed.positionals[0]}"` : `expected ${wanted} argument(s), got ${parsed.positionals.length}`,
    );
  }
  return {
    values: parsed.values,
    positionals: parsed.positionals,
    fail,
    /** `raw` (the value of --`option`) as a number from `min` to `max`, else a usage error naming it. */
    number(option: string, raw: string, min: number, max: number): number {
      const n = Number(raw);
      if (!/^\d+(\.\d+)?$/.test(raw) || n < min || n > max) fail(`--${option} must be a number from ${min} to ${max}, got "${raw}"`);
      return n;
    },
    /** A comma-separated list of numbers, each checked like number(). */
    numbers(option: string, raw: string, min: number, max: number): number[] {
      return raw.split(',').map((s) => this.number(option, s.trim(), min, max));
    },
    /** `raw` as one of `choices`, else a usage error naming them. */
    choice<C extends string>(option: string, raw: string, choices: readonly C[]): C {
      if (!(choices as readonly string[]).includes(raw)) fail(`--${option} must be ${choices.join(' or ')}, got "${raw}"`);
      return raw as C;
    },
  };
}
