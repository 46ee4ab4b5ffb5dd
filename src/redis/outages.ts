// Which of the link's changes of state (link.ts reports each once) reach the log. A Redis that
// flaps (a crowded host leaving it without a CPU now and then, a network dropping it for a
// moment) would otherwise log two lines per blip. So an outage that begins within QUIET_MS of the
// last one logged is logged only if it is still going on when that time is up, and then with the
// count of the shorter ones since; its end is logged only when its beginning was.
import type { RedisState } from './link.js';

export const QUIET_MS = 60_000;

/** The decisions, on the caller's clock (ms). */
export class QuietOutages {
  private logged: RedisState | null = null;
  private lastDownAt = -Infinity;
  /** outages since the last one logged that were not */
  private unlogged = 0;
  /** the reason of an outage going on and not logged yet */
  private waiting: string | null = null;

  /** Redis went down at `now`: the reason to log now, or when to ask `due` again. */
  down(now: number, reason: string): { log: string } | { askAt: number } {
    const quietUntil = this.lastDownAt + QUIET_MS;
    if (now >= quietUntil) return { log: this.logDown(now, reason) };
    this.waiting = reason;
    return { askAt: quietUntil };
  }

  /** For an outage not logged yet: the reason to log at `now` if it outlasted the quiet time, or when to ask again; null: over. */
  due(now: number): { log: string } | { askAt: number } | null {
    if (this.waiting === null) return null;
    const quietUntil = this.lastDownAt + QUIET_MS;
    return now >= quietUntil ? { log: this.logDown(now, this.waiting) } : { askAt: quietUntil };
  }

  /** Redis answers again: whether to log it. */
  up(): boolean {
    if (this.waiting !== null) {
      this.waiting = null;
      this.unlogged++;
      return false;
    }
    if (this.logged === 'up') return false;
    this.logged = 'up';
    return true;
  }

  private logDown(now: number, reason: string): string {
    const n = this.unlogged;
    this.logged = 'down';
    this.lastDownAt = now;
    this.unlogged = 0;
    this.waiting = null;
    return n > 0 ? `${reason} (and ${n} shorter outage${n === 1 ? '' : 's'} since the last one reported)` : reason;
  }
}

/** `log` behind QuietOutages, for RedisLink's onStateChange; a deferred line waits on a timer of its own. */
export function quietOutages(log: (state: RedisState, reason: string | null) => void): (state: RedisState, reason: string | null) => void {
  const q = new QuietOutages();
  let timer: NodeJS.Timeout | undefined;
  const decided = (d: { log: string } | { askAt: number } | null): void => {
    clearTimeout(timer);
    if (d === null) return;
    if ('log' in d) return log('down', d.log);
    // Asked again when the time comes (a timer may fire a little early: then it asks once more).
    timer = setTimeout(() => decided(q.due(performance.now())), Math.max(1, d.askAt - performance.now())).unref();
  };
  return (state, reason) => {
    if (state === 'down') decided(q.down(performance.now(), reason ?? 'unknown'));
    else if (q.up()) log('up', null);
  };
}
