// The memory budget the servers run in: a Linux memory cgroup, as a container's memory limit
// (`docker run --memory`, Compose's `mem_limit`, systemd's `MemoryMax=`) gives one. It matters to
// the memory target because Node sizes V8's young generation from the memory the process may use
// (the cgroup's limit, else the machine's): on Node 24, a 1 GiB budget gives 16 MiB semi-spaces,
// this 23.5 GiB machine 64 MiB, which a sustained load fills (docs/benchmarks.md). Node 22 stops
// at 16 MiB either way. The limit is the deployment's, not a V8 flag: the process runs unchanged.
//
// The harness makes a cgroup of its own beside its processes (v1's memory hierarchy, or v2 when
// its memory controller is delegated), writes the limit, and starts each server through `sh`,
// which enters the cgroup and then execs the server (same pid). Where it cannot (not Linux, no
// write access), it says why and the servers run without a budget.
import fs from 'node:fs';
import path from 'node:path';

export interface MemoryBudget {
  /** the limit, bytes */
  bytes: number;
  /** the command and arguments that run `command args` inside the budget */
  wrap(command: string, args: string[]): { command: string; args: string[] };
  /** removes the cgroup (once its processes are gone) */
  remove(): void;
}

/** "1G", "768M", "none" -> bytes (null: no budget). */
export function parseBudget(text: string): number | null {
  if (text === 'none') return null;
  const m = /^(\d+)([MG])$/i.exec(text);
  if (!m) throw new Error(`--memory-budget: "${text}" is not a size: write e.g. 1G or 768M, or "none"`);
  return Number(m[1]) * 2 ** (m[2]!.toUpperCase() === 'G' ? 30 : 20);
}

/** A cgroup limited to `bytes`, or the reason there can be none here. */
export function makeMemoryBudget(bytes: number): MemoryBudget | { unavailable: string } {
  if (process.platform !== 'linux') return { unavailable: 'not Linux' };
  let own: string;
  try {
    own = fs.readFileSync('/proc/self/cgroup', 'utf8');
  } catch (err) {
    return { unavailable: `cannot read /proc/self/cgroup (${(err as Error).message})` };
  }
  // v1: "4:memory:/path"; v2: "0::/path".
  const v1 = /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:(.*)$/m.exec(own)?.[1];
  const v2 = /^0::(.*)$/m.exec(own)?.[1];
  const candidates: { dir: string; limitFile: string }[] = [];
  if (v1 !== undefined) candidates.push({ dir: path.join('/sys/fs/cgroup/memory', v1), limitFile: 'memory.limit_in_bytes' });
  if (v2 !== undefined) candidates.push({ dir: path.join('/sys/fs/cgroup', v2), limitFile: 'memory.max' });
  const reasons: string[] = [];
  for (const c of candidates) {
    const dir = path.join(c.dir, `clinic-api-bench-${process.pid}`);
    try {
      fs.mkdirSync(dir);
    } catch (err) {
      reasons.push(`${c.dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      continue;
    }
    try {
      fs.writeFileSync(path.join(dir, c.limitFile), String(bytes));
    } catch (err) {
      fs.rmdirSync(dir);
      reasons.push(`${path.join(dir, c.limitFile)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      continue;
    }
    const procs = path.join(dir, 'cgroup.procs');
    return {
      bytes,
      wrap: (command, args) => ({ command: '/bin/sh', args: ['-c', 'echo $$ > "$0" && exec "$@"', procs, command, ...args] }),
      remove: () => {
        try {
          fs.rmdirSync(dir);
        } catch {
          // still in use (a server not yet reaped) or already gone: the system removes nothing
          // by itself, but an empty cgroup holds no memory
        }
      },
    };
  }
  return { unavailable: reasons.length > 0 ? reasons.join('; ') : 'no memory cgroup in /proc/self/cgroup' };
}
