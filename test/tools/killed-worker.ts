// A test worker that dies without cleaning up, for the launchers' watchdog tests: a child Node
// process starts a server with a tool of tools/, freezes it or not, prints its pid, and is killed
// with SIGKILL.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The states the server is left in: running, or frozen (SIGSTOP) by a fault test. */
export const STATES = [
  ['running', false],
  ['frozen by a fault test', true],
] as const;

export interface Worker {
  /** The file in tools/, its start function (resolving with `s`), and the expression for the server's pid. */
  tool: string;
  start: string;
  pid: string;
  frozen: boolean;
}

/**
 * Runs the worker in a child process, reads the server's pid it prints, gives it to `look` (what
 * must be read while the worker lives) and kills the worker with SIGKILL, also when `look` failed:
 * the watchdog is what the caller checks.
 */
export async function killWorker<T>(worker: Worker, look: (pid: number) => Promise<T>): Promise<T> {
  const tool = fileURLToPath(new URL(`../../tools/${worker.tool}`, import.meta.url));
  const script = `
    import { ${worker.start} } from ${JSON.stringify(tool)};
    const s = await ${worker.start}();
    ${worker.frozen ? 's.freeze();' : ''}
    console.log(${worker.pid});
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const pidLine = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding('utf8');
      let out = '';
      child.stdout.on('data', (s: string) => {
        out += s;
        if (out.includes('\n')) resolve(out.trim());
      });
      child.on('exit', (code) => reject(new Error(`helper exited early with code ${code}`)));
    });
    return await look(Number(pidLine));
  } finally {
    child.kill('SIGKILL');
  }
}
