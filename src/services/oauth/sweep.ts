// Removes the authorization server's expired rows (oauth_artifacts: authorization requests not
// answered within 10 minutes, used codes, expired tokens and sessions) in the background: the
// first pass a minute after start, then every 10 minutes, in small batches, each its own short
// write transaction. Expired rows are already refused on every read (adapter.ts); this only
// keeps the table to what is alive. A batch that cannot get SQLite's write lock at once waits for
// the next pass. Several instances may run it at once: deleting twice is harmless.
import type { Database } from '../../db/connect.js';
import { WriterBusy } from '../../db/connect.js';
import { sweepExpiredArtifacts } from '../../repos/oauth.js';
import { BACKGROUND_WRITE_WAIT_MS } from '../write-lock.js';

const BATCH = 500;

export interface OAuthSweepOptions {
  intervalMs?: number;
  firstDelayMs?: number;
  now?: () => number;
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export class OAuthSweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;

  constructor(
    private readonly database: Database,
    private readonly opts: OAuthSweepOptions,
  ) {}

  start(): void {
    if (this.stopped || this.timer !== null) return;
    this.schedule(this.opts.firstDelayMs ?? 60_000);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.pass()
        .then((removed) => {
          if (removed > 0) this.opts.log.info({ removed }, 'OAuth: expired requests, codes and tokens removed');
        })
        .catch((err: unknown) => this.opts.log.error({ err }, 'OAuth sweep failed; retried at the next pass'))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.schedule(this.opts.intervalMs ?? 600_000);
        });
    }, ms);
    this.timer.unref();
  }

  /** One pass: batches until no expired row is left (or stop(), or the write lock is taken); how many rows went. */
  async pass(): Promise<number> {
    const nowS = Math.floor((this.opts.now ?? Date.now)() / 1000);
    let removed = 0;
    while (!this.stopped) {
      let n: number;
      try {
        n = await this.database.writeTransaction((trx) => sweepExpiredArtifacts(trx, nowS, BATCH), { waitMs: BACKGROUND_WRITE_WAIT_MS });
      } catch (err) {
        if (err instanceof WriterBusy) break;
        throw err;
      }
      removed += n;
      if (n < BATCH) break;
      await new Promise<void>((r) => setImmediate(r));
    }
    return removed;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
