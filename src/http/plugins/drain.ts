// A graceful shutdown's drain (docs/operations.md, "Shutdown"). server.ts calls
// app.lifecycle.beginDrain() on SIGTERM/SIGINT and waits for app.lifecycle.drained() before it
// closes the app and the database, so the database closes after the last response. From the signal:
//
// - /readyz answers 503 (health.ts), so load balancers stop sending traffic;
// - every response carries `Connection: close`, so each connection ends after the request it is
//   serving, also one whose request began before the shutdown;
// - accepting comes first: the connections the kernel accepted before the listener closes wait in
//   its queue, Node (libuv) takes one of them per turn of the event loop, and closing the
//   listener resets every one still there, with its request. So until the listener is closed, a
//   request that arrives is held (onRequest) rather than served: on SQLite each served request is
//   a synchronous query that makes its turn long, and the queue would empty at the pace of the
//   work (seconds under load) instead of the loop's (a connection per fraction of a millisecond).
//   A request already past onRequest at the signal is not held (on PostgreSQL its rows may still
//   make a turn long);
// - the listener closes (new connections are refused) at the first turn of the event loop that
//   accepted no connection and was short: one that accepted none found the queue empty, and a
//   short one (typically 0.1 ms) leaves only what arrived during it to be reset (the
//   kernel's queue cannot be read from Node, so that window cannot be closed). Every turn is
//   watched until then. At the latest it closes after `closeListenerWithinMs`, so that a client
//   that keeps connecting cannot hold the shutdown; then the held requests are served;
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
const SHORT_TURN_MS = 2;
/** The listener closes this long after the signal at the latest, unless beginDrain says otherwise. */
const LISTENER_CLOSE_MAX_MS = 2_000;

/** What the listener's close reports (server.ts logs it). */
export interface ListenerClosed {
  /** from the drain's start (the signal) to the close */
  afterMs: number;
  /** connections accepted meanwhile (each is answered) */
  accepted: number;
  /**
   * the last turn of the event loop before the close: a connection whose handshake the kernel
   * completed during it was in the queue, and reset by the close (a race no test saw)
   */
  lastTurnMs: number;
  /** closed by `closeListenerWithinMs`, not on an empty queue: what the kernel still held was reset */
  atDeadline: boolean;
}

export interface DrainOptions {
  /** The listener closes this long after the drain's start at the latest (default LISTENER_CLOSE_MAX_MS). */
  closeListenerWithinMs?: number;
  onListenerClosed?: (closed: ListenerClosed) => void;
}

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
  private acceptedAtDrain = 0;
  private onListenerClosed: DrainOptions['onListenerClosed'];
  private finished: (() => void) | null = null;
  private readonly done: Promise<void>;
  private listenerGone: (() => void) | null = null;
  private readonly listenerClosing: Promise<void>;

  constructor() {
    this.done = new Promise((resolve) => {
      this.finished = resolve;
    });
    this.listenerClosing = new Promise((resolve) => {
      this.listenerGone = resolve;
    });
  }

  /**
   * While the drain waits for the listener's queue to empty: a promise of the listener's close,
   * which a request that arrives meanwhile waits for before it is served. Else null.
   */
  holdUntilListenerClosed(): Promise<void> | null {
    return this.draining && !this.listenerClosed ? this.listenerClosing : null;
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
  beginDrain(server: net.Server, opts: DrainOptions = {}): void {
    if (this.draining) return;
    this.draining = true;
    this.drainStartedAt = performance.now();
    this.listenerCloseBy = this.drainStartedAt + (opts.closeListenerWithinMs ?? LISTENER_CLOSE_MAX_MS);
    this.acceptedAtDrain = this.accepted;
    this.onListenerClosed = opts.onListenerClosed;
    this.server = server;
    if (!server.listening) this.closedListener();
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
      const emptied = this.accepted === accepted && now - since < SHORT_TURN_MS;
      if (emptied || now >= this.listenerCloseBy) {
        // net.Server's close, not http.Server's: see the top of this file.
        net.Server.prototype.close.call(this.server!);
        this.closedListener();
        this.onListenerClosed?.({
          afterMs: Math.round(now - this.drainStartedAt),
          accepted: this.accepted - this.acceptedAtDrain,
          lastTurnMs: Math.round((now - since) * 1000) / 1000,
          atDeadline: !emptied,
        });
        this.checkDrained();
      } else this.watchListener(now, this.accepted);
    });
  }

  private closedListener(): void {
    this.listenerClosed = true;
    this.listenerGone?.();
    this.listenerGone = null;
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
    // Accepting first: a request that arrives while the listener's queue empties waits before it
    // is served, so that every turn is short (see the top of this file).
    app.addHook('onRequest', (_req, _reply, done) => {
      const held = lifecycle.holdUntilListenerClosed();
      if (held === null) done();
      else void held.then(() => done());
    });
    app.addHook('onSend', (_req, reply, payload, done) => {
      if (lifecycle.draining) reply.header('connection', 'close');
      done(null, payload);
    });
  },
  { name: 'drain' },
);
