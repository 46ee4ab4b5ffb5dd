// The `postgres` process of tools/postgres-server.ts: started under the watchdog of
// tools/watchdog.ts (closing its pipe makes it a fast shutdown, SIGINT, after which the watchdog
// deletes the cluster's temp dir), awaited until it accepts connections, and stopped: fast, then
// immediate, then killed.
import type { SpawnOptions } from 'node:child_process';
import { signal, startWatched, within, type LogTail, type Watched } from './watchdog.js';

export type ShutdownMode = 'fast' | 'immediate';

export interface Launched {
  pid(): number | undefined;
  /** Stops postgres: 'fast' or 'immediate' keep the cluster's files (for a start() later); 'remove' deletes them too. */
  stop(mode: ShutdownMode | 'remove'): Promise<void>;
}

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
  const server = await startWatched(
    {
      name: 'pg-watchdog',
      command: [postgres, '-D', dataDir, ...settings],
      dir: root,
      stopSignal: 'INT',
      ready: /database system is ready to accept connections/,
      portInUse: /could not bind .*Address already in use|could not create any TCP\/IP sockets/,
      startTimeoutMs: 60_000,
      what: `PostgreSQL (${dataDir}, port ${port})`,
      log,
      options,
    },
    (s) => stopper(s)('fast'), // the data stays, for another port
  );
  return { pid: server.pid, stop: stopper(server) };
}

/** A shutdown for fault tests signals postgres itself and keeps the pipe, and so the data. */
function stopper(server: Watched): Launched['stop'] {
  return async (mode) => {
    if (server.finished) return;
    // SIGINT: a fast shutdown; SIGQUIT: an immediate one, a crash (recovery on the next start).
    if (mode === 'remove') server.closePipe();
    else signal(server.pid(), mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    if (await within(server.exited, 15_000)) return;
    signal(server.pid(), 'SIGQUIT');
    if (await within(server.exited, 5_000)) return;
    server.killAll();
    await within(server.exited, 5_000);
  };
}
