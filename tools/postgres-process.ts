// The `postgres` process of tools/postgres-server.ts: started under a watchdog so it never outlives
// the Node process that started it, awaited until it accepts connections, stopped (fast, then
// immediate, then killed), and the signals the fault tests send it. Also the log tail that error
// messages quote.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import readline from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';

export type ShutdownMode = 'fast' | 'immediate';

export interface Launched {
  pid(): number | undefined;
  /** Stops postgres: 'fast' or 'immediate' keep the cluster's files (for a start() later); 'remove' deletes them too. */
  stop(mode: ShutdownMode | 'remove'): Promise<void>;
}

export class PortInUseError extends Error {}

const READY_LINE = 'database system is ready to accept connections';
const PORT_IN_USE = /could not bind .*Address already in use|could not create any TCP\/IP sockets/;
const START_TIMEOUT_MS = 60_000;

/** Settings for a disposable cluster: durability off, TCP on 127.0.0.1 only, no Unix socket. */
const SERVER_SETTINGS: Record<string, string> = {
  listen_addresses: '127.0.0.1',
  unix_socket_directories: '',
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  TimeZone: 'UTC',
  log_timezone: 'UTC',
  lc_messages: 'C',
};

/** Keeps the last lines for error messages and forwards every line to the optional logger. */
export class LogTail {
  private readonly lines: string[] = [];
  constructor(private readonly sink?: (line: string) => void) {}

  push(line: string): void {
    if (line === '') return;
    this.lines.push(line);
    if (this.lines.length > 40) this.lines.shift();
    this.sink?.(line);
  }

  tail(n = 20): string {
    const last = this.lines.slice(-n);
    return last.length ? last.map((l) => `  | ${l}`).join('\n') : '  | (no output)';
  }

  /** Records every line of `stream`, and calls `onLine` with each. */
  follow(stream: NodeJS.ReadableStream | null, onLine?: (line: string) => void): void {
    if (!stream) return;
    readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      this.push(line.trimEnd());
      onLine?.(line);
    });
  }
}

// The watchdog: a tiny sh that holds our stdin pipe. When the pipe closes, because this Node
// process exited for any reason (even SIGKILL) or because stop() closed it, the watchdog sends
// postgres SIGINT (a fast shutdown) and, once it has exited, deletes the cluster's temp dir: a
// crashed or killed test worker leaves neither a server nor its files behind. A server frozen by a
// fault test (SIGSTOP) is sent SIGCONT first, its backends too, or it would never act on the
// SIGINT. A shutdown() for a fault test signals postgres itself and keeps the pipe, and the data.
// It prints postgres' pid on stdout.
const WATCHDOG = `
root=$1; shift
exec 3<&0
"$@" </dev/null 3<&- 1>&2 &
pg=$!
echo "$pg"
( while read -r _; do :; done
  : > "$root/stopping"
  kill -CONT "$pg" 2>/dev/null
  for c in $(ps -o pid= --ppid "$pg" 2>/dev/null); do kill -CONT "$c" 2>/dev/null; done
  kill -INT "$pg" 2>/dev/null ) <&3 &
w=$!
exec 3<&-
wait "$pg"
code=$?
if [ -e "$root/stopping" ]; then wait "$w"; rm -rf "$root"; else kill "$w" 2>/dev/null; wait "$w" 2>/dev/null; fi
exit "$code"
`;

/**
 * Starts `postgres` (the executable's path) on `dataDir` (in the cluster's temp dir `root`) and
 * `port`, spawned with `options`, and resolves once it accepts connections; PortInUseError if the
 * port was taken meanwhile.
 */
export async function launch(
  postgres: string,
  root: string,
  dataDir: string,
  port: number,
  options: SpawnOptions,
  log: LogTail,
): Promise<Launched> {
  log.push(`--- starting postgres on 127.0.0.1:${port} ---`);
  const settings = Object.entries({ ...SERVER_SETTINGS, port: String(port) }).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'pg-watchdog', root, postgres, '-D', dataDir, ...settings], {
    ...options,
    stdio: 'pipe',
  });
  let finished = false;
  const exited = exitCode(child, log).finally(() => {
    finished = true;
  });
  let pgPid: number | undefined;
  child.stdout?.setEncoding('utf8');
  child.stdout?.once('data', (s: string) => {
    pgPid = Number.parseInt(s, 10) || undefined;
  });
  child.stdin?.on('error', () => {}); // EPIPE if the watchdog is already gone

  let portInUse = false;
  const ready = new Promise<'ready'>((resolve) => {
    log.follow(child.stderr, (line) => {
      if (line.includes(READY_LINE)) resolve('ready');
      if (PORT_IN_USE.test(line)) portInUse = true;
    });
  });

  const stop = async (mode: ShutdownMode | 'remove'): Promise<void> => {
    if (!finished) {
      // SIGINT: a fast shutdown; SIGQUIT: an immediate one, a crash (recovery on the next start).
      if (mode === 'remove')
        child.stdin?.end(); // the watchdog: SIGINT, then it deletes the files
      else signal(pgPid, mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
      if (!(await within(exited, 15_000))) {
        signal(pgPid, 'SIGQUIT');
        if (!(await within(exited, 5_000))) {
          signal(pgPid, 'SIGKILL');
          signal(child.pid, 'SIGKILL');
          await within(exited, 5_000);
        }
      }
    }
    child.stdin?.destroy();
  };

  const timeout = new AbortController();
  const outcome = await Promise.race([
    ready,
    exited,
    delay(START_TIMEOUT_MS, 'timeout' as const, { signal: timeout.signal }).catch(() => null),
  ]);
  timeout.abort();
  if (outcome === 'ready') return { stop, pid: () => (finished ? undefined : pgPid) };

  await stop('fast'); // the data stays, for another port
  if (portInUse) throw new PortInUseError(`port ${port} already in use`);
  const why = outcome === 'timeout' ? `did not become ready within ${START_TIMEOUT_MS / 1000}s` : `exited with code ${outcome}`;
  throw new Error(`PostgreSQL (${dataDir}, port ${port}) ${why}. Last server log lines:\n${log.tail()}`);
}

/** Resolves with the exit code (null if killed by a signal or if it could not be spawned at all). */
export function exitCode(child: ChildProcess, log?: LogTail): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('error', (err) => {
      log?.push(`cannot run ${child.spawnfile}: ${err.message}`);
      resolve(null); // e.g. EACCES/ENOENT: no 'exit' event follows
    });
    child.once('exit', (code) => resolve(code));
  });
}

/** Whether `p` settles within `ms`. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  const timeout = new AbortController();
  const settled = await Promise.race([p.then(() => true), delay(ms, false, { signal: timeout.signal }).catch(() => false)]);
  timeout.abort();
  return settled;
}

export function signal(pid: number | undefined, sig: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** True while process `pid` exists (EPERM: it exists, owned by another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
