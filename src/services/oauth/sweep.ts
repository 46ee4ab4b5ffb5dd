// Removes the authorization server's expired rows (oauth_artifacts: authorization requests not
// answered within 10 minutes, used codes, expired tokens and sessions) in the background: the
// first pass a minute after start, then every 10 minutes, in small batches, each its own short
// write transaction. Expired rows are already refused on every read (adapter.ts); this only
// keeps the table to what is alive. A batch that cannot get SQLite's write lock at once waits for
// the next pass. Several instances may run it at once: deleting twice is harmless.
import type { Database } from '../../db/connect.js';
import { WriterBusy } from '../../db/connect.js';
import { sweepExpiredArtifacts } from '../../repos/oauth.js';
import { PeriodicPasses } from '../periodic-passes.js';
import { BACKGROUND_WRITE_WAIT_MS } from '../write-lock.js';

const BATCH = 500;

export interface OAuthSweepOptions {
  intervalMs?: number;
  firstDelayMs?: number;
  now?: () => number;
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export class OAuthSweep {
  private readonly passes: PeriodicPasses;

  constructor(
    private readonly database: Database,
    private readonly opts: OAuthSweepOptions,
  ) {
    this.passes = new PeriodicPasses(
      () =>
        this.pass()
          .then((removed) => {
            if (removed > 0) this.opts.log.info({ removed }, 'OAuth: expired requests, codes and tokens removed');
          })
          .catch((err: unknown) => this.opts.log.error({ err }, 'OAuth sweep failed; retried at the next pass')),
      { firstDelayMs: opts.firstDelayMs ?? 60_000, intervalMs: opts.intervalMs ?? 600_000 },
    );
  }

  private get stopped(): boolean {
    return this.passes.stopped;
  }

  start(): void {
    this.passes.start();
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

  /** Stops the schedule and waits for a pass in progress to end (it stops between batches). */
  stop(): Promise<void> {
    return this.passes.stop();
  }
}
