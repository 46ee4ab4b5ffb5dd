// Which code is benchmarked. The service runs compiled, as `npm start` runs it, from one of:
//   - the working tree's src/, compiled into bench/.build/worktree (dist/ is left alone);
//   - a git revision (--ref), exported with `git archive` and compiled into bench/.build/ref-<sha>,
//     so that a before/after comparison needs no checkout and ignores uncommitted edits;
//   - the existing dist/ (--dist), or any directory holding bin/clinic-api.js and dist/
//     (--prebuilt DIR), e.g. an experiment compiled by hand.
// The data set is made by the same compiled code (loaded from there, not from src/), so the data
// and the server always agree.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface ServiceBuild {
  /** the directory holding the compiled cli/, services/, ... */
  distDir: string;
  /** the production launcher, bin/clinic-api.js, next to that dist */
  bin: string;
  /** for the report */
  describe: string;
}

export interface ServiceModules {
  loadConfig: typeof import('../../src/config.js').loadConfig;
  openRuntime: typeof import('../../src/runtime.js').openRuntime;
  createDemoClinic: typeof import('../../src/services/demo.js').createDemoClinic;
  demoCounts: typeof import('../../src/demo/generate.js').demoCounts;
  todayIn: typeof import('../../src/time.js').todayIn;
  dayStart: typeof import('../../src/time.js').dayStart;
  addDays: typeof import('../../src/time.js').addDays;
}

function git(root: string, args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function tsc(root: string, args: string[], log: (line: string) => void, mainJs: string): void {
  try {
    execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), ...args], { cwd: root, stdio: 'pipe' });
  } catch (err) {
    // tsc emits despite type errors; go on if it did, but say so.
    const text = String((err as { stdout?: Buffer }).stdout ?? err);
    if (!fs.existsSync(mainJs)) throw new Error(`tsc failed:\n${text}`, { cause: err });
    log(`tsc reported type errors (the build was emitted anyway):\n${text.split('\n').slice(0, 10).join('\n')}`);
  }
}

export function buildService(
  root: string,
  opts: { ref: string | null; prebuilt: string | null },
  log: (line: string) => void,
): ServiceBuild {
  if (opts.prebuilt !== null) {
    const distDir = path.join(opts.prebuilt, 'dist');
    const bin = path.join(opts.prebuilt, 'bin/clinic-api.js');
    if (!fs.existsSync(path.join(distDir, 'cli/main.js')) || !fs.existsSync(bin)) {
      throw new Error(
        `${opts.prebuilt} holds no bin/clinic-api.js and ` +
          `dist/cli/main.js${opts.prebuilt === root ? ': run `npm run build`, or leave out --dist' : ''}`,
      );
    }
    const rel = path.relative(root, opts.prebuilt) || '.';
    return {
      distDir,
      bin,
      describe: rel === '.' ? 'bin/clinic-api.js serve on the existing dist/' : `the prebuilt ${rel}, run as \`clinic-api serve\``,
    };
  }
  const buildRoot = path.join(root, 'bench/.build');
  if (opts.ref !== null) {
    let sha: string;
    try {
      sha = git(root, ['rev-parse', '--verify', '--quiet', `${opts.ref}^{commit}`]);
    } catch {
      throw new Error(`--ref ${opts.ref}: not a commit in this repository`);
    }
    const dir = path.join(buildRoot, `ref-${sha.slice(0, 12)}`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    log(`exporting ${opts.ref} (${sha.slice(0, 12)}) and compiling it into ${path.relative(root, dir)} ...`);
    // package.json too: the CLI reads its version from it (../../package.json of dist/cli).
    const tar = execFileSync(
      'git',
      ['archive', '--format=tar', sha, 'src', 'bin', 'package.json', 'tsconfig.json', 'tsconfig.build.json'],
      { cwd: root, maxBuffer: 1 << 30 },
    );
    execFileSync('tar', ['-x', '-C', dir], { input: tar });
    // Inside the checkout, so node_modules and package.json ("type": "module") resolve as usual.
    tsc(root, ['-p', path.join(dir, 'tsconfig.build.json'), '--sourceMap', 'false'], log, path.join(dir, 'dist/cli/main.js'));
    return {
      distDir: path.join(dir, 'dist'),
      bin: path.join(dir, 'bin/clinic-api.js'),
      describe: `commit ${sha.slice(0, 12)} (${opts.ref}), compiled, run as \`clinic-api serve\``,
    };
  }
  const dir = path.join(buildRoot, 'worktree');
  fs.rmSync(dir, { recursive: true, force: true });
  log(`compiling the working tree's src/ into ${path.relative(root, dir)} ...`);
  tsc(
    root,
    ['-p', 'tsconfig.build.json', '--outDir', path.join(dir, 'dist'), '--sourceMap', 'false'],
    log,
    path.join(dir, 'dist/cli/main.js'),
  );
  // The production launcher, unchanged: it loads ../dist/cli/main.js relative to itself.
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  fs.copyFileSync(path.join(root, 'bin/clinic-api.js'), path.join(dir, 'bin/clinic-api.js'));
  // The CLI reads its version from the package.json beside dist/ (../../package.json of dist/cli).
  fs.copyFileSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
  let describe = 'the working tree';
  try {
    const head = git(root, ['rev-parse', '--short=12', 'HEAD']);
    const dirty = git(root, ['status', '--porcelain', '--', 'src', 'bin']) !== '';
    describe = `the working tree (${head}${dirty ? ' + uncommitted changes in src/' : ''})`;
  } catch {
    // not a git checkout
  }
  return {
    distDir: path.join(dir, 'dist'),
    bin: path.join(dir, 'bin/clinic-api.js'),
    describe: `${describe}, compiled, run as \`clinic-api serve\``,
  };
}

export async function loadServiceModules(build: ServiceBuild): Promise<ServiceModules> {
  const load = <T>(rel: string) => import(pathToFileURL(path.join(build.distDir, rel)).href) as Promise<T>;
  const [config, runtime, demo, generate, time] = await Promise.all([
    load<typeof import('../../src/config.js')>('config.js'),
    load<typeof import('../../src/runtime.js')>('runtime.js'),
    load<typeof import('../../src/services/demo.js')>('services/demo.js'),
    load<typeof import('../../src/demo/generate.js')>('demo/generate.js'),
    load<typeof import('../../src/time.js')>('time.js'),
  ]);
  return {
    loadConfig: config.loadConfig,
    openRuntime: runtime.openRuntime,
    createDemoClinic: demo.createDemoClinic,
    demoCounts: generate.demoCounts,
    todayIn: time.todayIn,
    dayStart: time.dayStart,
    addDays: time.addDays,
  };
}
