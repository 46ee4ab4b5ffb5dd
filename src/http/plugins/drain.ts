// A graceful shutdown's drain (docs/operations.md, "Shutdown"). server.ts calls
// app.lifecycle.beginDrain() on SIGTERM/SIGINT, then app.close(). From that moment:
//
// - /readyz answers 503 (health.ts), so load balancers stop sending traffic;
// - every response carries `Connection: close`, so each connection ends after the request it is
//   serving, also one whose request began before the shutdown (Fastify marks only those that
//   begin after it, and a keep-alive connection left open held the process until its deadline,
//   exit code 1);
// - app.close() closes the listener (new connections are refused) and waits for every request
//   in flight to be answered in full;
// - idle keep-alive connections are closed at once, and so is every connection that becomes
//   idle later. A connection that has not sent a request yet gets a moment (FRESH_GRACE_MS) to
//   send it and be answered (its request may be on the wire already), and is closed after that:
//   Node's own server.close() leaves such connections open for good, and stops checking their
//   headers timeout, so one silent client would hold the shutdown until its deadline;
// - a client that holds its connection mid-request is cut off by the deadline
//   (SHUTDOWN_TIMEOUT_S, in server.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import fp from 'fastify-plugin';

/** How long a connection that has sent nothing yet may still send its request once draining. */
export const FRESH_GRACE_MS = 1_000;
const SWEEP_EVERY_MS = 100;

interface Tracked {
  /** requests received on this connection */
  requests: number;
  /** of which not answered yet */
  active: number;
}

export class Lifecycle {
  draining = false;
  private drainStartedAt = 0;
  private readonly sockets = new Map<Socket, Tracked>();
  private sweeper: NodeJS.Timeout | null = null;

  /** Called on the server's 'connection' event. */
  track(socket: Socket): void {
    this.sockets.set(socket, { requests: 0, active: 0 });
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** Called on the server's 'request' event (the request's headers are in). */
  request(req: IncomingMessage, res: ServerResponse): void {
    const t = this.sockets.get(req.socket);
    if (!t) return;
    t.requests++;
    t.active++;
    res.once('close', () => {
      t.active--;
    });
  }

  /** Closes the connections with no request in flight (those that never sent one after the grace). */
  closeIdle(): void {
    const fresh = performance.now() - this.drainStartedAt < FRESH_GRACE_MS;
    for (const [socket, t] of this.sockets) {
      if (t.active > 0) continue;
      if (t.requests === 0 && fresh) continue;
      socket.destroy();
    }
  }

  /** The first step of a shutdown; app.close() follows. */
  beginDrain(server: { once(event: 'close', fn: () => void): unknown }): void {
    if (this.draining) return;
    this.draining = true;
    this.drainStartedAt = performance.now();
    this.closeIdle();
    this.sweeper = setInterval(() => this.closeIdle(), SWEEP_EVERY_MS);
    this.sweeper.unref();
    server.once('close', () => {
      if (this.sweeper) clearInterval(this.sweeper);
      this.sweeper = null;
    });
  }

  get openConnections(): number {
    return this.sockets.size;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    lifecycle: Lifecycle;
  }
}

export const drain = fp(
  async (app) => {
    const lifecycle = new Lifecycle();
    app.decorate('lifecycle', lifecycle);
    app.server.on('connection', (socket: Socket) => lifecycle.track(socket));
    app.server.on('request', (req: IncomingMessage, res: ServerResponse) => lifecycle.request(req, res));
    app.addHook('onSend', (_req, reply, payload, done) => {
      if (lifecycle.draining) reply.header('connection', 'close');
      done(null, payload);
    });
  },
  { name: 'drain' },
);
