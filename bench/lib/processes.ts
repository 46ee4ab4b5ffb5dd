// Child servers for the benchmark: a free loopback port, start, readiness, memory, and a stop
// that always happens (also on errors and Ctrl-C), so no server outlives the run.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { freePort, HOST } from '../../tools/net.js';
import type { MemoryBudget } from './memory-budget.js';

export interface ChildServer {
  name: string;
  pid: number;
  port: number;
  baseUrl: string;
  /** The last few KB of the child's stdout/stderr, for error messages. */
  output(): string;
  /** Current and peak (high-water mark) resident set size in bytes, from /proc. */
  memory(): { rss: number; hwm: number } | null;
  stop(): Promise<void>;
  exited: Promise<number | null>;
}

const live = new Set<ChildProcess>();
let budget: MemoryBudget | null = null;

/** Every server started from now on runs inside `b` (lib/memory-budget.ts); null: none. */
export function runServersIn(b: MemoryBudget | null): void {
  budget = b;
}
let hooksInstalled = false;

export function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  // Last resort: a synchronous kill of anything still running when this process goes away.
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
  // `on`, not `once`: a second Ctrl-C must not kill the process (default action) while the
  // exit handlers are still cleaning up.
  let exiting = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (exiting) return;
      exiting = true;
      process.stderr.write(`\nbench: ${sig}, stopping the servers\n`);
      process.exit(130);
    });
  }
}

export function readMemory(pid: number): { rss: number; hwm: number } | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return null; // not Linux, or the process is gone
  }
}

export interface StartOptions {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  port: number;
  /** A path that answers (any status) once the server listens. */
  readyPath: string;
  readyTimeoutMs?: number;
  cwd?: string;
  /** the node binary (default: this one's) */
  node?: string | null;
}

export async function startServer(opts: StartOptions): Promise<ChildServer> {
  installHooks();
  const run = { command: opts.node ?? process.execPath, args: opts.args };
  const { command, args } = budget ? budget.wrap(run.command, run.args) : run;
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-8192);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let endedBy: NodeJS.Signals | null = null;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      endedBy = signal;
      resolve(code ?? (signal ? 128 : null));
    });
  });
  let hasExited = false;
  let stopping = false;
  void exited.then((code) => {
    hasExited = true;
    // A server that dies under load would otherwise show only as a case full of errors.
    if (stopping) return;
    const why = endedBy === 'SIGKILL' && budget ? ' (over its memory budget?)' : '';
    process.stderr.write(
      `\nbench: ${opts.name} (pid ${child.pid}) exited with ${endedBy ?? code}${why} during the run; its last output:\n${tail}\n`,
    );
  });

  const baseUrl = `http://${HOST}:${opts.port}`;
  const server: ChildServer = {
    name: opts.name,
    pid: child.pid ?? -1,
    port: opts.port,
    baseUrl,
    output: () => tail,
    memory: () => readMemory(child.pid ?? -1),
    exited,
    async stop() {
      if (hasExited) return;
      stopping = true;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (hasExited) throw new Error(`${opts.name} exited before it was ready:\n${tail}`);
    try {
      await fetch(baseUrl + opts.readyPath, { signal: AbortSignal.timeout(2_000) });
      return server;
    } catch {
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`${opts.name} did not answer on ${baseUrl} within ${opts.readyTimeoutMs ?? 60_000} ms:\n${tail}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Samples a process's resident set size every `everyMs` while a measurement runs. */
export function rssSampler(pid: number, everyMs = 100): { stop(): number } {
  let peak = readMemory(pid)?.rss ?? 0;
  const timer = setInterval(() => {
    const m = readMemory(pid);
    if (m && m.rss > peak) peak = m.rss;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const m = readMemory(pid);
      if (m && m.rss > peak) peak = m.rss;
      return peak;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// CPU accounting from /proc (Linux): the server's CPU time per request, and how much CPU other
// programs (another build, a test run) used during a measurement, which makes a figure
// unreliable on a small shared machine. Both come from per-process counters: the machine-wide
// counters in /proc/stat are not trustworthy in some VMs (here, one busy vCPU made the idle one
// look 77% busy).

const TICK_MS = 10; // USER_HZ is 100 on every Linux this runs on (getconf CLK_TCK)

/** utime + stime (and, with `children`, the reaped children's cutime + cstime), in ticks. */
function processTicks(pid: number | 'self', children = false): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime is field 14, stime 15,
    // cutime 16, cstime 17; `rest` starts at field 3.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(rest[11]) + Number(rest[12]);
    return children ? own + Number(rest[13]) + Number(rest[14]) : own;
  } catch {
    return NaN; // gone, or not Linux
  }
}

/** CPU time (ms) of the processes this one has waited for: a command run with spawnSync, once it ended (Linux; NaN elsewhere). */
export function reapedChildrenMs(): number {
  return (processTicks('self', true) - processTicks('self')) * TICK_MS;
}

/** CPU time (ms) of `pids`, the first with its reaped children (a PostgreSQL postmaster: its ended backends). */
export function processTreeMs(pids: readonly number[]): number {
  return (
    pids.reduce((sum, pid, i) => {
      const t = processTicks(pid, i === 0);
      return sum + (Number.isFinite(t) ? t : 0);
    }, 0) * TICK_MS
  );
}

/**
 * CPU time of every process on the machine, including what reaped children used, so that a
 * short test run that starts and ends inside the window is still counted (in its parent).
 */
function allTicks(): number {
  let sum = 0;
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return NaN;
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const t = processTicks(Number(name), true);
    if (Number.isFinite(t)) sum += t;
  }
  return sum;
}

export interface CpuReport {
  /** CPU time of the measured server, in ms */
  serverMs: number;
  /** CPU time of this process (the load generator), in ms */
  clientMs: number;
  /** CPU time of the database server's processes (PostgreSQL: postmaster and backends), in ms */
  dbMs: number;
  /** average number of cores busy with anything else: other programs on the machine */
  otherCores: number;
  /**
   * average number of cores the hypervisor gave to other machines while this one wanted them
   * (steal time, /proc/stat): a virtual machine's host contention, which otherCores cannot see
   */
  stolenCores: number;
  elapsedMs: number;
}

/** The machine's steal ticks so far (the 8th number of /proc/stat's `cpu` line), or NaN. */
function stealTicks(): number {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const steal = Number(line.trim().split(/\s+/)[8]);
    return Number.isFinite(steal) ? steal : NaN;
  } catch {
    return NaN;
  }
}

/**
 * Starts counting; `stop()` says where the CPU time went since. `ours` = the servers' pids,
 * `dbPids` the database server's (counted as ours, and reported apart as dbMs).
 */
export function cpuMeter(serverPid: number, ours: number[], dbPids: number[] = []): { stop(): CpuReport } {
  const mine = [...new Set([...ours, ...dbPids, process.pid])];
  const sumTicks = (pids: number[]) => pids.reduce((sum, p) => sum + (Number.isFinite(processTicks(p)) ? processTicks(p) : 0), 0);
  const db0 = sumTicks(dbPids);
  const t0 = performance.now();
  const all0 = allTicks();
  const ours0 = mine.map((p) => processTicks(p));
  const s0 = serverPid > 0 ? processTicks(serverPid) : 0;
  const c0 = processTicks('self');
  const steal0 = stealTicks();
  return {
    stop() {
      const all1 = allTicks();
      const elapsedMs = performance.now() - t0;
      const oursDelta = mine.reduce((sum, p, i) => {
        const d = processTicks(p) - (ours0[i] ?? NaN);
        return sum + (Number.isFinite(d) ? d : 0);
      }, 0);
      const foreignMs = (all1 - all0 - oursDelta) * TICK_MS;
      return {
        serverMs: serverPid > 0 ? (processTicks(serverPid) - s0) * TICK_MS : 0,
        clientMs: (processTicks('self') - c0) * TICK_MS,
        dbMs: (sumTicks(dbPids) - db0) * TICK_MS,
        otherCores: Math.max(0, foreignMs / elapsedMs),
        stolenCores: Math.max(0, ((stealTicks() - steal0) * TICK_MS) / elapsedMs),
        elapsedMs,
      };
    },
  };
}

/**
 * Waits (up to `maxWaitMs`) for a second in which other programs use less than `threshold`
 * cores, so a case does not start in the middle of someone else's build. Returns the load seen
 * in the last second.
 */
export async function waitForQuiet(ours: number[], threshold: number, maxWaitMs: number, dbPids: number[] = []): Promise<number> {
  const deadline = Date.now() + maxWaitMs;
  for (;;) {
    const meter = cpuMeter(-1, ours, dbPids);
    await new Promise((r) => setTimeout(r, 1000));
    const { otherCores } = meter.stop();
    if (otherCores < threshold || Date.now() >= deadline) return otherCores;
  }
}

export { freePort, HOST };
