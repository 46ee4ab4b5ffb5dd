// The one network helper of the tests, the bench and the database launchers: a free port on the
// loopback interface. Every real server they start listens on 127.0.0.1 only.
import net from 'node:net';

export const HOST = '127.0.0.1';

/** A port that was free a moment ago on the loopback interface (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, HOST, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** What a server's start throws when another process bound its port first. */
export class PortInUseError extends Error {}

/**
 * `start` on a free port. Another process may take the port before the server binds it: then
 * `start` throws PortInUseError and another port is tried, `attempts` times in all.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (err) {
      if (!(err instanceof PortInUseError)) throw err;
      if (attempt >= attempts) {
        const message = `No free port in ${attempts} attempts (another process took each one first). The last: ${err.message}`;
        throw new Error(message, { cause: err });
      }
    }
  }
}
