// The throw-away servers' processes (postgres for tools/postgres-process.ts, redis-server for
// tools/redis-server.ts): each runs under a tiny sh watchdog that holds our stdin pipe, so that it
// never outlives the Node process that started it. When the pipe closes, because this process
// exited for any reason (even SIGKILL) or because we closed it, the watchdog thaws the server and
// its children (a fault test may have frozen them with SIGSTOP, and a stopped process never acts on
// a signal), sends it the server's own stop signal and deletes the server's temp dir once it has
// exited: a crashed test worker leaves neither a server nor its files behind. A server that exits
// otherwise (a fault test signalled it) keeps its files, for a start() later. Also what both need
// around it: readiness, the log tail that error messages quote, signals.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import readline from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { PortInUseError } from './net.js';

export interface WatchdogSpec {
  /** The watchdog's name in `ps`. */
  name: string;
  /** The server's executable and its arguments. */
  command: string[];
  /** The server's own temp dir, which the watchdog deletes once the server it stopped has exited. */
  dir: string;
  /** What the watchdog sends the thawed server when the pipe closes. */
  stopSignal: 'INT' | 'KILL';
  /** The log line that says the server accepts connections, and one that says its port was taken. */
  ready: RegExp;
  portInUse: RegExp;
  startTimeoutMs: number;
  /** The server in error messages, e.g. "redis-server (port 6379)". */
  what: string;
  log: LogTail;
  /** cwd, env, uid/gid: the watchdog's, and so the server's. */
  options?: SpawnOptions;
}

export interface Watched {
  /** The server's pid while it runs. */
  pid(): number | undefined;
  /** The server's exit code (the watchdog exits with it); null if a signal ended it or it could not be spawned. */
  exited: Promise<number | null>;
  readonly finished: boolean;
  /** Closes our pipe: the watchdog stops the server (see the top of this file). */
  closePipe(): void;
  /** SIGKILL to the server and its watchdog: the last resort. */
  killAll(): void;
}

// $1: the server's dir, $2: its stop signal; then the command.
// `exec 3<&0`: keep our pipe as fd 3; the server gets /dev/null and writes its log to stderr, so
// stdout carries its pid alone. The background loop reads the pipe until it closes, then marks that
// in the dir (the dir is deleted only after a stop the watchdog made), thaws and signals the server.
// The mark is this watchdog's own ($$): one left by an earlier watchdog in the same dir means nothing.
// Then the shell's own output goes nowhere: its stdout and stderr are pipes to a process that may be
// gone, and its "Killed" for a killed server would kill it there (SIGPIPE) before it deletes the dir.
const WATCHDOG = `
dir=$1 sig=$2; shift 2
mark="$dir/.watchdog-stopping.$$"
exec 3<&0
"$@" </dev/null 3<&- 1>&2 &
pid=$!
echo "$pid"
( while read -r _; do :; done
  : > "$mark"
  kill -CONT "$pid" 2>/dev/null
  for c in $(ps -o pid= --ppid "$pid" 2>/dev/null); do kill -CONT "$c" 2>/dev/null; done
  kill -"$sig" "$pid" 2>/dev/null ) <&3 &
w=$!
exec 3<&- >/dev/null 2>&1
wait "$pid"
code=$?
if [ -e "$mark" ]; then
  wait "$w"
  rm -rf "$dir"
else
  kill "$w" 2>/dev/null
  wait "$w" 2>/dev/null
fi
rm -f "$mark"
exit "$code"
`;

/**
 * Starts the server under the watchdog and resolves once it is ready. If it is not, `abandon` makes
 * sure it is gone and this throws: PortInUseError if its port was taken meanwhile, else an error
 * with the last lines of its log.
 */
export async function startWatched(spec: WatchdogSpec, abandon: (server: Watched) => Promise<void>): Promise<Watched> {
  const { log } = spec;
  const args = ['-c', WATCHDOG, spec.name, spec.dir, spec.stopSignal, ...spec.command];
  const child = spawn('/bin/sh', args, { ...spec.options, stdio: 'pipe' });
  child.stdin.on('error', () => {}); // EPIPE if the watchdog is already gone
  let finished = false;
  const exited = exitCode(child, log).finally(() => {
    finished = true;
    child.stdin.destroy();
  });
  let pid: number | undefined;
  const pidKnown = new Promise<void>((resolve) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /^(\d+)\n/.exec(out);
      if (m && pid === undefined) {
        pid = Number(m[1]);
        resolve();
      }
    });
  });
  let portInUse = false;
  const readyLine = new Promise<void>((resolve) => {
    log.follow(child.stderr, (line) => {
      if (spec.ready.test(line)) resolve();
      if (spec.portInUse.test(line)) portInUse = true;
    });
  });
  const server: Watched = {
    pid: () => (finished ? undefined : pid),
    exited,
    get finished() {
      return finished;
    },
    closePipe: () => child.stdin.end(),
    killAll() {
      signal(pid, 'SIGKILL');
      signal(child.pid, 'SIGKILL');
    },
  };

  const timeout = new AbortController();
  const outcome = await Promise.race([
    Promise.all([readyLine, pidKnown]).then(() => 'ready' as const),
    exited,
    delay(spec.startTimeoutMs, 'timeout' as const, { signal: timeout.signal }).catch(() => null),
  ]);
  timeout.abort();
  if (outcome === 'ready') return server;

  await abandon(server);
  if (portInUse) throw new PortInUseError(`${spec.what}: another process took the port first. Last server log lines:\n${log.tail()}`);
  const why = outcome === 'timeout' ? `did not become ready within ${spec.startTimeoutMs / 1000}s` : `exited with code ${outcome}`;
  throw new Error(`${spec.what} ${why}. Last server log lines:\n${log.tail()}`);
}

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
export async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
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
