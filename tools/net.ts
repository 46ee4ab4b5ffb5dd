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
