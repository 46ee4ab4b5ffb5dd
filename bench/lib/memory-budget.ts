// The memory budget the servers run in: a Linux memory cgroup, as a container's memory limit
// (`docker run --memory`, Compose's `mem_limit`, systemd's `MemoryMax=`) gives one. It matters to
// the memory target because Node sizes V8's young generation from the memory the process may use
// (the cgroup's limit, else the machine's): on Node 24, a 1 GiB budget gives 16 MiB semi-spaces,
// this 23.5 GiB machine 64 MiB, which a sustained load fills (docs/benchmarks.md). Node 22 stops
// at 16 MiB either way. The limit is the deployment's, not a V8 flag: the process runs unchanged.
//
// The harness makes a cgroup for each server beside its own processes (v1's memory hierarchy, or
// v2 when its memory controller is delegated), writes the limit, and starts the server through
// `sh`, which enters the cgroup and then execs the server (same pid). Where it cannot (not Linux, no
// write access), it says why and the servers run without a budget.
import fs from 'node:fs';
import path from 'node:path';

export interface MemoryBudget {
  /** the command and arguments that run `command args` inside a budget of its own */
  wrap(command: string, args: string[]): { command: string; args: string[] };
  /** removes the cgroups (once their processes are gone) */
  remove(): void;
}

/** "1G", "768M", "none" -> bytes (null: no budget). */
export function parseBudget(text: string): number | null {
  if (text === 'none') return null;
  const m = /^(\d+)([MG])$/i.exec(text);
  if (!m) throw new Error(`--memory-budget: "${text}" is not a size: write e.g. 1G or 768M, or "none"`);
  return Number(m[1]) * 2 ** (m[2]!.toUpperCase() === 'G' ? 30 : 20);
}

/** Cgroups limited to `bytes`, one per server, or the reason there can be none here. */
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
    // A cgroup per server: a limit applies to the processes of its cgroup together.
    const made: string[] = [];
    const make = (): string => {
      const dir = path.join(c.dir, `clinic-api-bench-${process.pid}-${made.length}`);
      fs.mkdirSync(dir);
      made.push(dir);
      fs.writeFileSync(path.join(dir, c.limitFile), String(bytes));
      return path.join(dir, 'cgroup.procs');
    };
    const remove = () => {
      for (const dir of made.splice(0)) {
        try {
          fs.rmdirSync(dir);
        } catch {
          // still in use (a server not yet reaped) or already gone: an empty cgroup holds no memory
        }
      }
    };
    try {
      make();
    } catch (err) {
      remove();
      reasons.push(`${c.dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      continue;
    }
    remove();
    return {
      wrap: (command, args) => ({ command: '/bin/sh', args: ['-c', 'echo $$ > "$0" && exec "$@"', make(), command, ...args] }),
      remove,
    };
  }
  return { unavailable: reasons.length > 0 ? reasons.join('; ') : 'no memory cgroup in /proc/self/cgroup' };
}
