// The connection to Redis (node-redis, created with the scripts of scripts.ts) and whether it
// answers. Redis holds the shared rate-limit buckets and carries key changes (revocations,
// edits, rolls), and the service must never fail or stall because of it, so every call here is bounded and never throws:
//
//   - call() resolves with Redis' answer, or with null when the link is down or Redis has sent
//     nothing for `timeoutMs` (REDIS_TIMEOUT_MS) while the call waits; the caller then decides
//     without Redis. Silence, not the call's age: a burst of calls queued on the connection is
//     answered in turn, each reply proving Redis alive, while calls waiting on a frozen or
//     unreachable Redis all give up within the timeout. A call's clock starts when node-redis
//     writes it (at the end of the event loop's turn, in a setImmediate), and a timeout is
//     declared only after the loop has read the replies already there, so a turn that runs long
//     (many requests at once on a busy machine) is not counted against Redis;
//   - the first call that fails or times out marks the link `down`: from then on nothing is sent
//     (no waiting, no queue building up behind a frozen server) and a PING runs every
//     PROBE_EVERY_MS; the first one answered within the timeout marks it `up` again;
//   - each change of state is reported once (`onStateChange`); outages.ts decides which to log;
//   - commands are never queued while the socket is disconnected (disableOfflineQueue): they fail
//     at once; node-redis reconnects by itself (at most a second between attempts).
//
// One watchdog timer serves every call in flight (node-redis' own per-command timeout is off: it
// would arm a timer per call, counted from when the call was made rather than written).
import { createClient } from 'redis';
import { SCRIPTS } from './scripts.js';

export type RedisState = 'up' | 'down';

export interface RedisLinkOptions {
  url: string;
  /** the most a call waits for Redis to say anything (REDIS_TIMEOUT_MS) */
  timeoutMs: number;
  /** Called once per change of state: `down` with the reason (an error's message, "no answer within 10 ms"), then `up`. */
  onStateChange?: (state: RedisState, reason: string | null) => void;
}

function makeClient(url: string) {
  return createClient({
    url,
    scripts: SCRIPTS,
    disableOfflineQueue: true,
    commandOptions: { timeout: 0 },
    socket: { connectTimeout: 1_000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1_000) },
  });
}

/** The client, with the scripts: `c.gcra(...)`, `c.fleetBeat(...)`. */
export type RedisClient = ReturnType<typeof makeClient>;

/** A call waiting for Redis. */
interface Pending {
  /** performance.now() when it was written to the socket; -1 until then */
  since: number;
  ms: number;
  giveUp: () => void;
}

const PROBE_EVERY_MS = 250;
const RESOLVED_NULL: Promise<null> = Promise.resolve(null);
const messageOf = (err: unknown) => (err instanceof Error ? err.message || err.name : String(err));

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
  private readonly pending = new Set<Pending>();
  /** performance.now() of Redis' last reply */
  private lastHeard = 0;
  private watchdog: NodeJS.Timeout | null = null;
  private stamping = false;

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

  /** `run` on the client, bounded as the top of this file says: its answer, or null (no answer). */
  call<T>(run: (client: RedisClient) => Promise<T>): Promise<T | null> {
    return this.current === 'up' ? this.bounded(run, this.opts.timeoutMs) : RESOLVED_NULL;
  }

  /**
   * Publishes `message` on `channel`; whether Redis took it. A running server's link answers at
   * once when Redis is down; a link never started (the CLI connects only for this) first waits
   * up to `connectMs` for Redis, and then gives the message what is left of that.
   */
  async publish(channel: string, message: string, connectMs: number): Promise<boolean> {
    let ms = this.opts.timeoutMs;
    if (!this.started) {
      const t0 = performance.now();
      if (!(await this.waitUp(connectMs))) return false;
      ms = Math.max(ms, connectMs - (performance.now() - t0));
    }
    if (this.current !== 'up') return false;
    return (await this.bounded((c) => c.publish(channel, message), ms)) !== null;
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
    if (this.watchdog) clearTimeout(this.watchdog);
    for (const call of this.pending) call.giveUp();
    this.pending.clear();
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
    void this.bounded((c) => c.ping(), this.opts.timeoutMs).then((r) => {
      this.probing = false;
      if (r !== null) this.markUp();
    });
  }

  private bounded<T>(run: (client: RedisClient) => Promise<T>, ms: number): Promise<T | null> {
    return new Promise((resolve) => {
      const call: Pending = { since: -1, ms, giveUp: () => resolve(null) };
      this.pending.add(call);
      this.stampSoon();
      run(this.client).then(
        (value) => {
          this.lastHeard = performance.now();
          if (!this.settle(call)) {
            // An answer after we gave up: Redis is back (thawed, or had a CPU again). Check now.
            if (this.current === 'down') this.probe();
            return;
          }
          resolve(value);
        },
        (err: unknown) => {
          if (!this.settle(call)) return;
          this.markDown(err);
          resolve(null);
        },
      );
    });
  }

  /** Removes an answered call (false if it was given up on already); with none left, the watchdog rests. */
  private settle(call: Pending): boolean {
    if (!this.pending.delete(call)) return false;
    if (this.pending.size === 0 && this.watchdog) {
      clearTimeout(this.watchdog);
      this.watchdog = null;
    }
    return true;
  }

  /** After node-redis' own setImmediate (which writes the turn's commands): their clocks start, the watchdog is armed. */
  private stampSoon(): void {
    if (this.stamping) return;
    this.stamping = true;
    setImmediate(() => {
      this.stamping = false;
      const now = performance.now();
      let first = Infinity;
      for (const call of this.pending) {
        if (call.since < 0) call.since = now;
        first = Math.min(first, call.ms);
      }
      if (first !== Infinity) this.arm(first);
    });
  }

  private arm(ms: number): void {
    // When it fires, setImmediate lets the poll phase read replies that are already there first.
    this.watchdog ??= setTimeout(() => setImmediate(() => this.check()), ms);
  }

  /** Gives up on the calls that have heard nothing from Redis for their `ms`; re-arms for the rest. */
  private check(): void {
    this.watchdog = null;
    const now = performance.now();
    let next = Infinity;
    let expired = 0;
    for (const call of this.pending) {
      if (call.since < 0) continue;
      const left = call.ms - (now - Math.max(call.since, this.lastHeard));
      if (left > 0) next = Math.min(next, left);
      else {
        this.pending.delete(call);
        call.giveUp();
        expired = call.ms;
      }
    }
    if (expired) this.markDown(`no answer within ${expired} ms`);
    if (next !== Infinity) this.arm(Math.max(1, Math.ceil(next)));
  }

  private markDown(err: unknown): void {
    if (this.closed) return;
    const wasUp = this.current === 'up';
    this.current = 'down';
    // A blip (a crowded host that left Redis without a CPU for a moment) is over as soon as
    // Redis answers again: ask at once rather than at the next probe.
    if (wasUp) setImmediate(() => this.probe());
    this.report('down', messageOf(err));
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
