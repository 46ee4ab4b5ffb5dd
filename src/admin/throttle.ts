// Sign-in throttling and the bound on concurrent password checks.
//
// Every sign-in attempt takes a token from three buckets BEFORE its password is checked, so
// parallel requests cannot all slip past a limit that is only recorded afterwards:
//   - per (e-mail, client IP): strict. This is what stops guessing from one place.
//   - per e-mail, from anywhere: looser. It bounds a guesser spread over many addresses, and is
//     loose enough that failures from one address never lock the owner out everywhere else.
//   - per client IP, across e-mails: stops one address trying many accounts.
// Successful attempts cost a token as well (the limiter has no refund); the limits leave ample
// room for people signing in normally.
//
// scrypt runs on libuv's thread pool (4 threads by default, shared with fs, dns and zlib) and
// takes 32 MiB per check, so at most `verifyConcurrency` checks run at once, a few more wait
// their turn, and beyond that the attempt is answered at once, without hashing.
import type { RateLimiter } from '../services/rate-limit.js';

export type ThrottleScope = 'ip' | 'account_ip' | 'account';

export type ThrottleVerdict = { allowed: true } | { allowed: false; scope: ThrottleScope; retryAfterSeconds: number };

export interface SignInLimiters {
  /** per (e-mail, IP) */
  accountIp: RateLimiter;
  /** per e-mail, whatever the IP */
  account: RateLimiter;
  /** per IP, whatever the e-mail */
  ip: RateLimiter;
}

/**
 * Takes one attempt from each bucket, stopping at the first that is empty. The order (IP, then
 * e-mail+IP, then e-mail) makes a refused attempt spend only the caller's own allowances, never
 * the account-wide one; and an account-wide bucket that is already empty is checked first, so
 * the owner's own buckets are not drained by retries while someone else has emptied it.
 */
export async function takeSignInAttempt(l: SignInLimiters, email: string, ip: string, nowMs: number): Promise<ThrottleVerdict> {
  const accountKey = `acct:${email}`;
  const early = await l.account.peek(accountKey, nowMs);
  if (!early.allowed) return { allowed: false, scope: 'account', retryAfterSeconds: early.retryAfterSeconds };
  const steps: [ThrottleScope, RateLimiter, string][] = [
    ['ip', l.ip, `ip:${ip}`],
    // the IP first: it has no spaces, so the key cannot be confused with another pair
    ['account_ip', l.accountIp, `acct-ip:${ip} ${email}`],
    ['account', l.account, accountKey],
  ];
  for (const [scope, limiter, key] of steps) {
    const d = await limiter.consume(key, nowMs);
    if (!d.allowed) return { allowed: false, scope, retryAfterSeconds: d.retryAfterSeconds };
  }
  return { allowed: true };
}

/** A counting semaphore with a bounded wait list: `tryAcquire` never queues without limit. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly max: number,
    readonly maxWaiting: number,
  ) {
    if (!(max >= 1)) throw new Error('Semaphore needs max >= 1');
  }

  /** Resolves with a release function, or with null at once when the slots and the wait list are full. */
  async tryAcquire(): Promise<(() => void) | null> {
    if (this.active < this.max) {
      this.active++;
      return this.releaser();
    }
    if (this.waiting.length >= this.maxWaiting) return null;
    // A slot handed over by release() stays counted in `active`.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    return this.releaser();
  }

  /** Runs `fn` in a slot, or returns `busy` without running it when none is to be had. */
  async run<T, B>(fn: () => Promise<T>, busy: B): Promise<T | B> {
    const release = await this.tryAcquire();
    if (!release) return busy;
    try {
      return await fn();
    } finally {
      release();
    }
  }

  get inUse(): number {
    return this.active;
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }
}
