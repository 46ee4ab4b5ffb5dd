// The connection to Redis (node-redis) and whether it answers. Redis holds the shared rate-limit
// buckets and carries key changes (revocations, edits, rolls), and the service must never fail or
// stall because of it, so every call here is bounded and never throws:
//
//   - a call is given up on when Redis has sent nothing for `timeoutMs` (REDIS_TIMEOUT_MS) while
//     it waits, and resolves with no answer; the caller decides without Redis
//     (services/shared-rate-limit.ts: the in-memory limiter). Silence, not the call's age: a
//     burst of calls queued on the connection is answered in turn, each reply proving Redis alive;
//     the calls waiting on a frozen or unreachable Redis all give up within the timeout;
//   - the first call that fails or times out marks the link `down`; while down no request goes
//     to Redis at all (no waiting, no queue building up behind a frozen server), and a probe
//     (the rate-limit script itself, on a key of its own) runs every `probeEveryMs`; the first
//     probe answered within the timeout marks it `up` again;
//   - commands are never queued while the socket is disconnected (disableOfflineQueue): they
//     fail at once; the client reconnects by itself (at most a second between attempts).
//
// A timeout is declared only after the event loop has had the chance to read replies that have
// already arrived: when the timer fires, the check waits for setImmediate, which runs after the
// loop's poll phase. Otherwise a loop busy for longer than the timeout (a large response being
// serialized) would count replies that had arrived in time as timeouts.
//
// The rate-limit call is on every API request's path, so it is kept lean: node-redis' own
// per-command timeout is off (it would arm an AbortSignal timer per call; the watchdog above
// bounds every call already), and the script is sent with sendCommand on an argument array
// whose fixed parts the limiter built once, rather than through a command parser per call.
import { createClient, type RedisClientType } from 'redis';
import { GCRA_SHA1, GCRA_SOURCE, type GcraReply } from './gcra-script.js';

export type RedisState = 'up' | 'down';

export interface RedisLinkOptions {
  url: string;
  /** the most a call may wait for Redis (REDIS_TIMEOUT_MS) */
  timeoutMs: number;
  /** how often a down link checks whether Redis answers again */
  probeEveryMs?: number;
  /**
   * Called when the state changes: `down` with the reason (an error's message, "no answer
   * within 10 ms"), `up` when Redis answers again. The first `down` is reported even if it was
   * never up. An outage that begins within `reportQuietMs` of the last one reported is reported
   * only if it is still going on when that time is up (and then with the count of the shorter
   * ones), so a flapping Redis does not fill the log; `up` follows only a reported `down`.
   */
  onStateChange?: (state: RedisState, reason: string | null) => void;
  /** default one minute */
  reportQuietMs?: number;
}

/** A call waiting for Redis (see bounded()). */
interface Pending {
  /** when it was written to the socket (stampSoon); -1 until then */
  sentAt: number;
  ms: number;
  /** resolves the call: its reply, or null (no answer) */
  settle: (value: unknown) => void;
  done: boolean;
}

const DEFAULT_PROBE_EVERY_MS = 250;
const DEFAULT_REPORT_QUIET_MS = 60_000;
const CONNECT_TIMEOUT_MS = 1_000;
/** The probe's bucket: the same script as requests, writing like them, never refusing. */
const PROBE_KEY = 'clinic-api:probe';
const PROBE_RATE = '1000000';
/**
 * The probe keeps node-redis' own timeout (its default), so that a probe lost on a dead
 * connection fails in the end and the next one is sent; requests' calls have no such timer
 * (see the top of this file): the link is down by then and sends them no more.
 */
const PROBE_OPTIONS = { timeout: 5_000 };
const RESOLVED_NULL: Promise<null> = Promise.resolve(null);

type Client = RedisClientType<Record<string, never>, Record<string, never>, Record<string, never>>;

/** Redis' answer when it does not hold the script (e.g. restarted): send it whole (EVAL). */
function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/**
 * The arguments of an EVALSHA of the GCRA script (gcra-script.ts). `rate` and `burst` are the
 * limiter's, as strings made once; `nowMs` replaces Redis' clock (tests only); `charge`: requests
 * already let through on the instance's own view, added first.
 */
function gcraArgs(key: string, rate: string, burst: string, take: boolean, nowMs?: number, charge = 0): string[] {
  const args = ['EVALSHA', GCRA_SHA1, '1', key, rate, burst, take ? '1' : '0'];
  if (nowMs !== undefined || charge > 0) args.push(nowMs === undefined ? '' : String(nowMs));
  if (charge > 0) args.push(String(charge));
  return args;
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
  /** calls waiting for a reply, oldest first; done ones are dropped at the next check */
  private pending: Pending[] = [];
  /** calls in `pending` not yet done: at 0 the watchdog has nothing to watch and is disarmed */
  private outstanding = 0;
  private lastReplyAt = 0;
  private watchdog: NodeJS.Timeout | null = null;
  private stamping = false;
  private lastDownReportAt = -Infinity;
  private quietOutages = 0;
  private lastReason = '';
  private deferredReport: NodeJS.Timeout | null = null;
  private readonly reportQuietMs: number;
  private readonly timeoutMs: number;
  private readonly probeEveryMs: number;

  constructor(private readonly opts: RedisLinkOptions) {
    this.timeoutMs = opts.timeoutMs;
    this.probeEveryMs = opts.probeEveryMs ?? DEFAULT_PROBE_EVERY_MS;
    this.reportQuietMs = opts.reportQuietMs ?? DEFAULT_REPORT_QUIET_MS;
    this.client = createClient({
      url: opts.url,
      disableOfflineQueue: true,
      // No per-command timer of node-redis' own (5 s by default): bounded() bounds every call.
      commandOptions: { timeout: 0 },
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
    await Promise.race([
      woken,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
      }),
    ]);
    clearTimeout(timer);
    this.waiters.delete(wake);
    return this.state === 'up';
  }

  /**
   * One GCRA decision on Redis (gcra-script.ts), or null when Redis is down or did not answer
   * in time. `rate` and `burst` are decimal strings (the caller makes them once, not per call);
   * `nowMs` replaces Redis' clock (tests only); `charge`: requests to add first (see the script).
   */
  gcra(key: string, rate: string, burst: string, take: boolean, nowMs?: number, charge = 0): Promise<GcraReply | null> {
    if (this.current !== 'up') return RESOLVED_NULL;
    const args = gcraArgs(key, rate, burst, take, nowMs, charge);
    return this.bounded(this.client.sendCommand(args), this.timeoutMs, args) as Promise<GcraReply | null>;
  }

  /**
   * Says that `member` (an instance) is alive at `nowMs` in the sorted set `key`, drops the
   * members not heard of for `windowMs`, and answers how many are left (this one included); null
   * when Redis is down or did not answer in time. The scores are the instances' own clocks, so
   * instances whose clocks disagree by more than the window would drop each other (NTP keeps
   * servers within milliseconds). The four commands go in one write, in order.
   */
  fleetSize(key: string, member: string, nowMs: number, windowMs: number): Promise<number | null> {
    if (this.current !== 'up' || this.closed) return RESOLVED_NULL;
    const swallow = () => {}; // the ZCARD's answer (or its failure) reports for all three
    this.client.sendCommand(['ZADD', key, String(nowMs), member]).catch(swallow);
    this.client.sendCommand(['ZREMRANGEBYSCORE', key, '-inf', `(${nowMs - windowMs}`]).catch(swallow);
    this.client.sendCommand(['PEXPIRE', key, String(windowMs * 2)]).catch(swallow);
    return this.bounded(this.client.sendCommand(['ZCARD', key]), this.timeoutMs) as Promise<number | null>;
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
    return (await this.bounded(this.client.publish(channel, message), budget)) !== null;
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
    sub
      .connect()
      .then(() => sub.subscribe(channel, (message: string) => onMessage(message)))
      .catch(() => {}); // closed before it connected
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.probeTimer) clearInterval(this.probeTimer);
    if (this.watchdog) clearTimeout(this.watchdog);
    if (this.deferredReport) clearTimeout(this.deferredReport);
    for (const call of this.pending) {
      if (call.done) continue;
      // Done, so that its reply or failure, if one still comes, counts nothing down.
      call.done = true;
      call.settle(null);
    }
    this.pending = [];
    this.outstanding = 0;
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
    const args = gcraArgs(PROBE_KEY, PROBE_RATE, PROBE_RATE, true);
    const call = this.client.sendCommand(args, PROBE_OPTIONS).catch((err: unknown) => {
      if (!isNoScript(err)) throw err;
      args[0] = 'EVAL';
      args[1] = GCRA_SOURCE;
      return this.client.sendCommand(args, PROBE_OPTIONS);
    });
    this.probeInFlight = call
      .then(
        () => {},
        () => {},
      )
      .finally(() => {
        this.probeInFlight = null;
      });
    // A late answer does not count: a Redis slower than the timeout would only fail requests' calls.
    void this.bounded(call, this.timeoutMs).then((r) => {
      if (r !== null) this.markUp();
    });
  }

  /**
   * `p`'s value (never null), or null if it fails, or if Redis sends nothing for `ms` while it
   * waits. Never rejects. Replies come in order on the connection, so any reply says Redis is
   * alive: a call queued behind a burst of others waits its turn, and only a Redis that has gone
   * silent (frozen, unreachable) is given up on. One watchdog timer serves every call.
   * `scriptArgs`: `p` is an EVALSHA of these arguments, sent again as EVAL on NOSCRIPT.
   */
  private bounded<T>(p: Promise<T>, ms: number, scriptArgs?: string[]): Promise<T | null> {
    return new Promise((resolve) => {
      const call: Pending = { sentAt: -1, ms, settle: resolve as (v: unknown) => void, done: false };
      this.pending.push(call);
      this.outstanding++;
      this.stampSoon();
      const onReply = (v: unknown): void => {
        this.lastReplyAt = performance.now();
        if (call.done) {
          // An answer after we gave up: Redis is back (thawed, or had a CPU again). Check now.
          if (this.current === 'down') this.probe();
          return;
        }
        this.finish(call);
        resolve(v as T);
      };
      const onError = (err: unknown): void => {
        if (call.done) return;
        if (scriptArgs && isNoScript(err)) {
          // An answer all the same; the script goes whole this once, and Redis keeps it.
          this.lastReplyAt = performance.now();
          const args = scriptArgs;
          scriptArgs = undefined;
          args[0] = 'EVAL';
          args[1] = GCRA_SOURCE;
          this.client.sendCommand(args).then(onReply, onError);
          return;
        }
        this.finish(call);
        this.markDown(err);
        resolve(null);
      };
      p.then(onReply, onError);
    });
  }

  /**
   * node-redis writes the commands issued during a turn of the event loop at its end (in a
   * setImmediate), so a call's clock starts then, not when it was issued: a turn that runs long
   * (many requests arriving at once on a busy machine) must not count against Redis. One
   * setImmediate, queued after node-redis' own, stamps every call of the turn.
   */
  private stampSoon(): void {
    if (this.stamping) return;
    this.stamping = true;
    setImmediate(() => {
      this.stamping = false;
      const now = performance.now();
      let first = Infinity;
      for (const call of this.pending) {
        if (call.sentAt < 0) call.sentAt = now;
        if (!call.done) first = Math.min(first, call.ms);
      }
      if (first !== Infinity) this.armWatchdog(first);
    });
  }

  /**
   * A call is answered (or failed). When it was the last one outstanding, the watchdog is
   * disarmed: the link calls Redis several times a second (the limiters' flushes, four a second
   * per key in use and more for a busy one, and the fleet's heartbeat), each answered in well
   * under REDIS_TIMEOUT_MS, and a timer left to fire for nothing would wake the process once more
   * for each of them.
   */
  private finish(call: Pending): void {
    call.done = true;
    if (--this.outstanding > 0) return;
    this.pending = [];
    if (this.watchdog) {
      clearTimeout(this.watchdog);
      this.watchdog = null;
    }
  }

  private armWatchdog(ms: number): void {
    if (this.watchdog) return;
    // When it fires, setImmediate lets the poll phase read replies that are already there first.
    this.watchdog = setTimeout(() => setImmediate(() => this.checkPending()), ms);
  }

  /** Gives up on the calls that have heard nothing from Redis for their `ms`; re-arms for the rest. */
  private checkPending(): void {
    this.watchdog = null;
    const now = performance.now();
    let next = Infinity;
    let expired: string | null = null;
    for (const call of this.pending) {
      if (call.done || call.sentAt < 0) continue;
      const silentFor = now - Math.max(call.sentAt, this.lastReplyAt);
      if (silentFor >= call.ms) {
        this.finish(call);
        call.settle(null);
        expired = `no answer within ${call.ms} ms`;
      } else next = Math.min(next, call.ms - silentFor);
    }
    this.pending = this.pending.filter((c) => !c.done);
    if (expired) this.markDown(expired);
    if (next !== Infinity) this.armWatchdog(Math.max(1, Math.ceil(next)));
  }

  private markDown(err: unknown): void {
    if (this.closed) return;
    const wasUp = this.current === 'up';
    this.current = 'down';
    // A blip (a crowded host that left Redis without a CPU for a moment) is over as soon as
    // Redis answers again: ask at once rather than at the next probe.
    if (wasUp) setImmediate(() => this.probe());
    if (this.reported === 'down') return;
    this.lastReason = err instanceof Error ? err.message || err.name : String(err);
    const quietFor = this.lastDownReportAt + this.reportQuietMs - performance.now();
    if (quietFor <= 0) {
      this.reportDown();
      return;
    }
    // Within the quiet time after the last outage reported: reported only if it outlasts it.
    this.deferredReport ??= setTimeout(() => {
      this.deferredReport = null;
      if (this.current === 'down' && this.reported !== 'down') this.reportDown();
    }, quietFor);
    this.deferredReport.unref();
  }

  private reportDown(): void {
    this.reported = 'down';
    this.lastDownReportAt = performance.now();
    const blips = this.quietOutages;
    this.quietOutages = 0;
    this.opts.onStateChange?.(
      'down',
      blips > 0 ? `${this.lastReason} (and ${blips} shorter outage${blips === 1 ? '' : 's'} since the last one reported)` : this.lastReason,
    );
  }

  private markUp(): void {
    if (this.closed) return;
    const wasDown = this.current === 'down';
    this.current = 'up';
    for (const wake of this.waiters) wake();
    this.waiters.clear();
    if (this.reported === 'up') {
      // The end of an outage that was not reported (see markDown): counted for the next report.
      if (wasDown) this.quietOutages++;
      return;
    }
    this.reported = 'up';
    this.opts.onStateChange?.('up', null);
  }
}
