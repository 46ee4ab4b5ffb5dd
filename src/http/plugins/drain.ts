// A graceful shutdown's drain (docs/operations.md, "Shutdown"). server.ts calls
// app.lifecycle.beginDrain() on SIGTERM/SIGINT and waits for app.lifecycle.drained() before it
// closes the app and the database, so the database closes after the last response. From the signal:
//
// - /readyz answers 503 (health.ts), so load balancers stop sending traffic;
// - every response carries `Connection: close`, so each connection ends after the request it is
//   serving, also one whose request began before the shutdown;
// - the listener closes (new connections are refused) at the first turn of the event loop that
//   accepted no connection and was short. Node (libuv) accepts one connection per turn, so when
//   the loop is busy (a queue of synchronous SQLite queries) connections the kernel accepted
//   before the signal, with their requests already sent, wait in the listener's queue; closing
//   the listener resets every one of them. A turn that accepted none found the queue empty, and
//   a short one leaves only what arrived in its last milliseconds to be reset, at once. Every
//   turn is watched until then (an idle loop turns in microseconds), so the listener closes
//   about as soon as the signal is handled when the loop is not busy. At the
//   latest it closes after `closeListenerWithinMs`, so that a client that keeps connecting
//   cannot hold the shutdown;
// - a connection is closed when it is idle: no request in flight and not one byte received
//   since its last response. Bytes are read only in the loop's poll phase, so a request already
//   sent may still be unread in its socket while the loop is busy: idleness is judged in the
//   check phase (setImmediate, right after a poll phase), and only a connection found idle by two
//   checks in different turns is closed. Whatever was sent before the first check has been read
//   by the second, and makes the connection busy. Node's own http.Server.close() calls
//   closeIdleConnections(), whose idea of idle is the parser's (a connection whose next request
//   is still unread is idle to it, and destroying it resets that request), so the listener is
//   closed here at the net.Server level, and the app's close runs only once no connection is left;
// - a connection that has sent nothing at all gets FRESH_GRACE_MS to send its request (it may
//   be on its way), then it is closed when idle;
// - a client that holds its connection mid-request is cut off by the headers and request
//   timeouts (still checked: the http.Server is not closed yet), or by the deadline
//   (SHUTDOWN_TIMEOUT_S, in server.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';
import fp from 'fastify-plugin';

/** How long a connection that has sent nothing yet may still send its request once draining. */
export const FRESH_GRACE_MS = 1_000;
/** How often the connections are checked while draining. */
const CHECK_EVERY_MS = 50;
/** A turn of the event loop that accepted no connection and took less than this closes the listener. */
const SHORT_TURN_MS = 5;
/** The listener closes this long after the signal at the latest, unless beginDrain says otherwise. */
const LISTENER_CLOSE_MAX_MS = 2_000;

interface Tracked {
  /** requests received on this connection and not answered yet */
  active: number;
  /** socket.bytesRead when its last response ended (0: none yet); more read since is a request on its way */
  answeredBytes: number;
  /** consecutive checks that found it idle */
  idleChecks: number;
  /** when it was accepted (performance.now()) */
  since: number;
}

export class Lifecycle {
  draining = false;
  private drainStartedAt = 0;
  private readonly sockets = new Map<Socket, Tracked>();
  private checker: NodeJS.Timeout | null = null;
  private server: net.Server | null = null;
  private listenerClosed = false;
  /** connections accepted so far: a turn that accepts none found nothing waiting in the listener's queue */
  private accepted = 0;
  private listenerCloseBy = 0;
  private finished: (() => void) | null = null;
  private readonly done: Promise<void>;

  constructor() {
    this.done = new Promise((resolve) => {
      this.finished = resolve;
    });
  }

  /** Called on the server's 'connection' event. */
  track(socket: Socket): void {
    this.accepted++;
    this.sockets.set(socket, { active: 0, answeredBytes: 0, idleChecks: 0, since: performance.now() });
    socket.once('close', () => {
      this.sockets.delete(socket);
      this.checkDrained();
    });
  }

  /** Called on the server's 'request' event (the request's headers are in). */
  request(req: IncomingMessage, res: ServerResponse): void {
    const t = this.sockets.get(req.socket);
    if (!t) return;
    t.active++;
    t.idleChecks = 0;
    res.once('close', () => {
      t.active--;
      t.answeredBytes = req.socket.bytesRead;
      t.idleChecks = 0;
    });
  }

  /**
   * The first step of a shutdown: /readyz 503 and `Connection: close` at once; the listener and
   * the idle connections closed by the checks that follow (the listener within
   * `closeListenerWithinMs` at the latest). drained() says when it is over.
   */
  beginDrain(server: net.Server, opts: { closeListenerWithinMs?: number } = {}): void {
    if (this.draining) return;
    this.draining = true;
    this.drainStartedAt = performance.now();
    this.listenerCloseBy = this.drainStartedAt + (opts.closeListenerWithinMs ?? LISTENER_CLOSE_MAX_MS);
    this.server = server;
    if (!server.listening) this.listenerClosed = true;
    // Idleness: first right after this turn's poll phase (the signal is handled in it), then
    // every CHECK_EVERY_MS, always in the check phase, right after a poll phase.
    setImmediate(() => this.check());
    this.checker = setInterval(() => setImmediate(() => this.check()), CHECK_EVERY_MS);
    // The listener: every turn is watched until it closes (one immediate after the other, so the
    // loop polls without waiting meanwhile). From one check phase to the next is one turn, its
    // poll phase included; the first turn watched is the next one, whole.
    if (!this.listenerClosed) setImmediate(() => this.watchListener(performance.now(), this.accepted));
  }

  /**
   * Closes the listener after a turn that accepted no connection (so none was waiting when its
   * poll began: Node takes one per turn) and was short (few can have arrived since), or at the
   * deadline; else watches the next turn.
   */
  private watchListener(since: number, accepted: number): void {
    setImmediate(() => {
      if (this.listenerClosed) return;
      const now = performance.now();
      if ((this.accepted === accepted && now - since < SHORT_TURN_MS) || now >= this.listenerCloseBy) {
        this.listenerClosed = true;
        // net.Server's close, not http.Server's: see the top of this file.
        net.Server.prototype.close.call(this.server!);
        this.checkDrained();
      } else this.watchListener(now, this.accepted);
    });
  }

  /** Resolves once the listener is closed and every connection is closed (each request in flight answered). */
  drained(): Promise<void> {
    return this.done;
  }

  get openConnections(): number {
    return this.sockets.size;
  }

  /** Closes the connections found idle by this check and the one before. */
  private check(): void {
    const now = performance.now();
    for (const [socket, t] of this.sockets) {
      const idle = t.active === 0 && socket.bytesRead === t.answeredBytes;
      if (!idle) {
        t.idleChecks = 0;
        continue;
      }
      t.idleChecks++;
      const fresh = socket.bytesRead === 0 && now - Math.max(t.since, this.drainStartedAt) < FRESH_GRACE_MS;
      if (t.idleChecks >= 2 && !fresh) socket.destroy();
    }
    this.checkDrained();
  }

  private checkDrained(): void {
    if (!this.draining || !this.listenerClosed || this.sockets.size > 0 || !this.finished) return;
    if (this.checker) clearInterval(this.checker);
    this.checker = null;
    this.finished();
    this.finished = null;
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
