// The connection to Redis (node-redis) and whether it answers. Redis holds the shared rate-limit
// buckets and carries revocations, and the service must never fail or stall because of it, so
// every call here is bounded and never throws:
//
//   - a call waits at most `timeoutMs` (REDIS_TIMEOUT_MS) and then resolves with no answer; the
//     caller decides without Redis (services/shared-rate-limit.ts: the in-memory limiter);
//   - the first call that fails or times out marks the link `down`; while down no request goes
//     to Redis at all (no waiting, no queue building up behind a frozen server), and a probe
//     (the rate-limit script itself, on a key of its own) runs every `probeEveryMs`; the first
//     probe answered within the timeout marks it `up` again;
//   - commands are never queued while the socket is disconnected (disableOfflineQueue): they
//     fail at once; the client reconnects by itself (at most a second between attempts).
//
// A timeout is declared only after the event loop has had the chance to read a reply that has
// already arrived: when the timer fires, the check waits for setImmediate, which runs after the
// loop's poll phase. Otherwise a loop busy for longer than the timeout (a large response being
// serialized) would count replies that had arrived in time as timeouts.
import { createClient, type RedisClientType } from 'redis';
import { GCRA_SCRIPT, type GcraReply } from './gcra-script.js';

export type RedisState = 'up' | 'down';

export interface RedisLinkOptions {
  url: string;
  /** the most a call may wait for Redis (REDIS_TIMEOUT_MS) */
  timeoutMs: number;
  /** how often a down link checks whether Redis answers again */
  probeEveryMs?: number;
  /**
   * Called when the state changes: `down` with the reason (an error's message, "timeout"), `up`
   * when Redis answers again. The first `down` is reported even if it was never up.
   */
  onStateChange?: (state: RedisState, reason: string | null) => void;
}

const NO_ANSWER = Symbol('no answer');
type Bounded<T> = T | typeof NO_ANSWER;

const DEFAULT_PROBE_EVERY_MS = 250;
const CONNECT_TIMEOUT_MS = 1_000;
/** The probe's bucket: the same script as requests, writing like them, never refusing. */
const PROBE_KEY = 'clinic-api:probe';

type Client = RedisClientType<Record<string, never>, Record<string, never>, { gcra: typeof GCRA_SCRIPT }>;

/** `url` without its password, for logs and messages. */
export function describeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'REDIS_URL';
  }
}

export class RedisLink {
  private readonly client: Client;
  private subscriber: Client | null = null;
  private current: RedisState = 'down';
  /** the state last reported to onStateChange (null: nothing yet) */
  private reported: RedisState | null = null;
  private started = false;
  private closed = false;
  private probeTimer: NodeJS.Timeout | null = null;
  private probeInFlight: Promise<unknown> | null = null;
  private readonly waiters = new Set<() => void>();
  private readonly timeoutMs: number;
  private readonly probeEveryMs: number;

  constructor(private readonly opts: RedisLinkOptions) {
    this.timeoutMs = opts.timeoutMs;
    this.probeEveryMs = opts.probeEveryMs ?? DEFAULT_PROBE_EVERY_MS;
    this.client = createClient({
      url: opts.url,
      disableOfflineQueue: true,
      scripts: { gcra: GCRA_SCRIPT },
      socket: { connectTimeout: CONNECT_TIMEOUT_MS, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1_000) },
    }) as unknown as Client;
    // Connection errors arrive here on every reconnection attempt: they are the state's business
    // (reported once), never an uncaught 'error' event.
    this.client.on('error', (err: unknown) => this.markDown(err));
    // Reconnected: check at once rather than at the next probe.
    this.client.on('ready', () => this.probe());
  }

  get state(): RedisState {
    return this.current;
  }

  /** Connects in the background and starts probing. Idempotent; never throws. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    this.client.connect().catch((err: unknown) => this.markDown(err));
    this.probeTimer = setInterval(() => {
      if (this.current === 'down') this.probe();
    }, this.probeEveryMs);
    this.probeTimer.unref();
  }

  /** Starts the link and waits up to `ms` for Redis to answer; whether it did. */
  async waitUp(ms: number): Promise<boolean> {
    this.start();
    if (this.current === 'up') return true;
    let wake: () => void = () => {};
    const woken = new Promise<void>((resolve) => {
      wake = resolve;
      this.waiters.add(resolve);
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([woken, new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); })]);
    clearTimeout(timer);
    this.waiters.delete(wake);
    return this.state === 'up';
  }

  /**
   * One GCRA decision on Redis (gcra-script.ts), or null when Redis is down or did not answer
   * in time. `nowMs` replaces Redis' clock (tests only).
   */
  async gcra(key: string, rate: number, burst: number, take: boolean, nowMs?: number): Promise<GcraReply | null> {
    if (this.current !== 'up') return null;
    const reply = await this.bounded(this.client.gcra(key, rate, burst, take, nowMs), this.timeoutMs);
    return reply === NO_ANSWER ? null : (reply as GcraReply);
  }

  /**
   * Publishes `message` on `channel`; whether Redis took it. A running server's link answers at
   * once when Redis is down and waits at most the call timeout; a link that was never started
   * (the CLI connects only for this) first waits up to `connectMs` for Redis.
   */
  async publish(channel: string, message: string, connectMs: number): Promise<boolean> {
    let budget = this.timeoutMs;
    if (!this.started) {
      const t0 = performance.now();
      if (!(await this.waitUp(connectMs))) return false;
      budget = Math.max(budget, connectMs - (performance.now() - t0));
    }
    if (this.state !== 'up') return false;
    return (await this.bounded(this.client.publish(channel, message), budget)) !== NO_ANSWER;
  }

  /**
   * Calls `onMessage` for every message on `channel`, on a connection of its own (a subscribed
   * connection takes no other commands). node-redis subscribes again after every reconnection;
   * what is published while this instance is disconnected is lost, which the callers allow for.
   */
  subscribe(channel: string, onMessage: (message: string) => void): void {
    if (this.subscriber || this.closed) return;
    this.start();
    const sub = this.client.duplicate({ disableOfflineQueue: false }) as unknown as Client;
    this.subscriber = sub;
    sub.on('error', () => {}); // the command connection reports the state
    sub.connect()
      .then(() => sub.subscribe(channel, (message: string) => onMessage(message)))
      .catch(() => {}); // closed before it connected
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.probeTimer) clearInterval(this.probeTimer);
    for (const wake of this.waiters) wake();
    for (const c of [this.client, this.subscriber]) {
      if (!c) continue;
      // destroy(): at once, without waiting for replies a frozen server would never send.
      try {
        c.destroy();
      } catch {
        // never connected
      }
    }
  }

  private probe(): void {
    if (this.probeInFlight || this.closed || !this.started) return;
    const call = this.client.gcra(PROBE_KEY, 1_000_000, 1_000_000, true);
    this.probeInFlight = call.then(() => {}, () => {}).finally(() => {
      this.probeInFlight = null;
    });
    // A late answer does not count: a Redis slower than the timeout would only fail requests' calls.
    void this.bounded(call, this.timeoutMs).then((r) => {
      if (r !== NO_ANSWER) this.markUp();
    });
  }

  /** `p`'s value, or NO_ANSWER if it fails or takes longer than `ms`. Never rejects. */
  private bounded<T>(p: Promise<T>, ms: number): Promise<Bounded<T>> {
    return new Promise((resolve) => {
      let done = false;
      const timer = setTimeout(() => {
        // Let the poll phase read a reply that is already there before calling it a timeout.
        setImmediate(() => {
          if (done) return;
          done = true;
          this.markDown(`no answer within ${ms} ms`);
          resolve(NO_ANSWER);
        });
      }, ms);
      p.then(
        (v) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          resolve(v);
        },
        (err: unknown) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          this.markDown(err);
          resolve(NO_ANSWER);
        },
      );
    });
  }

  private markDown(err: unknown): void {
    if (this.closed) return;
    this.current = 'down';
    if (this.reported !== 'down') {
      this.reported = 'down';
      this.opts.onStateChange?.('down', err instanceof Error ? err.message || err.name : String(err));
    }
  }

  private markUp(): void {
    if (this.closed) return;
    this.current = 'up';
    for (const wake of this.waiters) wake();
    this.waiters.clear();
    if (this.reported !== 'up') {
      this.reported = 'up';
      this.opts.onStateChange?.('up', null);
    }
  }
}
