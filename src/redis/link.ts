// The connection to Redis (node-redis, created with the scripts of scripts.ts) and whether it
// answers. Redis holds the shared rate-limit buckets and carries key changes (revocations,
// edits, rolls), and the service must never fail or stall because of it, so every call here is
// bounded and never throws (fail open):
//
//   - call() resolves with Redis' answer, or with null when the link is down, the command failed,
//     or REDIS_TIMEOUT_MS passed without an answer (a plain timer per call, and a catch): the
//     caller then decides without Redis. node-redis' own command timeout (`commandOptions.timeout`)
//     is not enough: it only runs until the command is written to the socket (node-redis 6,
//     commands-queue.js drops it then), so a call written to a frozen Redis would wait forever;
//   - the first call that fails or times out marks the link `down`: from then on nothing is sent
//     (no waiting, no queue building up behind a frozen server) and a PING runs every
//     PROBE_EVERY_MS; the first one answered within the timeout marks it `up` again;
//   - each change of state is reported once (`onStateChange`); outages.ts decides which to log;
//   - commands are never queued while the socket is disconnected (disableOfflineQueue): they fail
//     at once; node-redis reconnects by itself (at most a second between attempts).
import { createClient } from 'redis';
import { SCRIPTS } from './scripts.js';

export type RedisState = 'up' | 'down';

export interface RedisLinkOptions {
  url: string;
  /** the most a command waits for Redis (REDIS_TIMEOUT_MS) */
  timeoutMs: number;
  /** Called once per change of state: `down` with the reason (an error's message, "no answer within 10 ms"), then `up`. */
  onStateChange?: (state: RedisState, reason: string | null) => void;
}

function makeClient(url: string) {
  return createClient({
    url,
    scripts: SCRIPTS,
    disableOfflineQueue: true,
    socket: { connectTimeout: 1_000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1_000) },
  });
}

/** The client, with the scripts: `c.gcra(...)`. */
export type RedisClient = ReturnType<typeof makeClient>;

const PROBE_EVERY_MS = 250;
const RESOLVED_NULL: Promise<null> = Promise.resolve(null);

export class RedisLink {
  private readonly client: RedisClient;
  private subscriber: RedisClient | null = null;
  private current: RedisState = 'down';
  /** the state last reported to onStateChange (null: none yet) */
  private reported: RedisState | null = null;
  private started = false;
  private closed = false;
  private probing = false;
  private probeTimer: NodeJS.Timeout | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly opts: RedisLinkOptions) {
    this.client = makeClient(opts.url);
    // Connection errors arrive here on every reconnection attempt: reported once, by the state.
    this.client.on('error', (err: unknown) => this.markDown(err));
    // Reconnected: check at once rather than at the next probe.
    this.client.on('ready', () => this.probe());
  }

  get state(): RedisState {
    return this.current;
  }

  /** Connects in the background and probes while down. Idempotent; never throws. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    this.client.connect().catch((err: unknown) => this.markDown(err));
    this.probeTimer = setInterval(() => {
      if (this.current === 'down') this.probe();
    }, PROBE_EVERY_MS).unref();
  }

  /** Starts the link and waits up to `ms` for Redis to answer; whether it did. */
  async waitUp(ms: number): Promise<boolean> {
    this.start();
    if (this.current === 'up' || this.closed) return this.current === 'up';
    let wake = () => {};
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      wake = resolve;
      this.waiters.add(wake);
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    this.waiters.delete(wake);
    // (read again: markUp may have run meanwhile)
    return (this.current as RedisState) === 'up';
  }

  /** `run` on the client: its answer, or null (down, failed or timed out; the link is then down). */
  call<T>(run: (client: RedisClient) => Promise<T>, ms = this.opts.timeoutMs): Promise<T | null> {
    if (this.current !== 'up') return RESOLVED_NULL;
    return new Promise((resolve) => {
      let settled = false;
      const settle = (value: T | null, err?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err !== undefined) this.markDown(err);
        resolve(value);
      };
      // When it fires, setImmediate lets the poll phase read replies that are already there
      // first: a long turn of the event loop on a busy machine is not counted against Redis.
      const timer = setTimeout(() => setImmediate(() => settle(null, `no answer within ${ms} ms`)), ms);
      run(this.client).then(
        (value) => settle(value),
        (err: unknown) => settle(null, err ?? 'failed'),
      );
    });
  }

  /**
   * Publishes `message` on `channel`; whether Redis took it. A running server's link answers at
   * once when Redis is down; a link never started (the CLI connects only for this) first waits
   * up to `connectMs` for Redis, and then gives the message what is left of that.
   */
  async publish(channel: string, message: string, connectMs: number): Promise<boolean> {
    if (this.started) return (await this.call((c) => c.publish(channel, message))) !== null;
    const t0 = performance.now();
    if (!(await this.waitUp(connectMs))) return false;
    const ms = Math.max(this.opts.timeoutMs, Math.ceil(connectMs - (performance.now() - t0)));
    return (await this.call((c) => c.publish(channel, message), ms)) !== null;
  }

  /**
   * Calls `onMessage` for every message on `channel`, on a connection of its own (a subscribed
   * connection takes no other commands). node-redis subscribes again after every reconnection;
   * what is published while this instance is disconnected is lost, which the callers allow for.
   */
  subscribe(channel: string, onMessage: (message: string) => void): void {
    if (this.subscriber || this.closed) return;
    this.start();
    const sub = (this.subscriber = this.client.duplicate({ disableOfflineQueue: false }));
    sub.on('error', () => {}); // the command connection reports the state
    sub
      .connect()
      .then(() => sub.subscribe(channel, (message: string) => onMessage(message)))
      .catch(() => {}); // closed before it connected
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.probeTimer);
    for (const wake of this.waiters) wake();
    for (const c of [this.client, this.subscriber]) {
      // destroy(): at once, without waiting for replies a frozen server would never send.
      try {
        c?.destroy();
      } catch {
        // never connected
      }
    }
  }

  private probe(): void {
    if (this.probing || this.closed || !this.started) return;
    this.probing = true;
    // A late answer does not count: a Redis slower than the timeout would only fail requests' calls.
    const t0 = performance.now();
    this.client.ping().then(
      () => {
        this.probing = false;
        if (performance.now() - t0 <= this.opts.timeoutMs) this.markUp();
      },
      () => {
        this.probing = false;
      },
    );
  }

  private markDown(err: unknown): void {
    if (this.closed) return;
    const wasUp = this.current === 'up';
    this.current = 'down';
    // A blip (a crowded host that left Redis without a CPU for a moment) is over as soon as
    // Redis answers again: ask at once rather than at the next probe.
    if (wasUp) setImmediate(() => this.probe());
    this.report('down', this.reason(err));
  }

  private reason(err: unknown): string {
    return err instanceof Error ? err.message || err.name : String(err);
  }

  private markUp(): void {
    if (this.closed) return;
    this.current = 'up';
    for (const wake of this.waiters) wake();
    this.waiters.clear();
    this.report('up', null);
  }

  /** Once per change (a link never up reports its first failure too). */
  private report(state: RedisState, reason: string | null): void {
    if (this.reported === state) return;
    this.reported = state;
    this.opts.onStateChange?.(state, reason);
  }
}
