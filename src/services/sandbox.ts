// Test mode's sandboxes. A clinic's sandbox is a clinic row of its own (clinics.sandbox_of names
// the live clinic), so every record, the feed, the page cache, the search, the request log and
// webhook endpoints, all scoped by clinic id, keep it apart from the live data with no check of
// their own. It holds synthetic data only: the demo generator's, with phones in ranges reserved
// for fiction and e-mails at example.com (demo/fictional.ts), and an import into it is refused.
//
// Made on first use (a test key created, or the first request of a test key or of an app connected
// in test mode), in one transaction that inserts the row and its data, so a sandbox is never seen
// half made; two first uses at once make one (the unique sandbox_of, ON CONFLICT DO NOTHING). A
// reset empties it and seeds it again in one transaction, moving its feed past every cursor given
// out (repos/sandbox.ts emptySandbox). Moves (SandboxMoves): new bookings, calls and clientas
// through the import's write path, so each is an event of the sandbox's feed and webhooks.
import { randomInt, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/connect.js';
import type { DB } from '../db/schema.js';
import { fictional } from '../demo/fictional.js';
import { generateDemo } from '../demo/generate.js';
import { sandboxMove } from '../demo/sandbox-moves.js';
import { DomainError } from '../errors.js';
import { getClinic, insertSandboxClinic, listSandboxes, sandboxOf, type Clinic } from '../repos/clinics.js';
import { emptySandbox, sandboxRows } from '../repos/sandbox.js';
import { todayIn } from '../time.js';
import { PeriodicPasses } from './periodic-passes.js';
import { emptyCounts, recordTotals } from './write/counts.js';
import { clinicWrite, type Line } from './write/session.js';
import { BACKGROUND_WRITE_WAIT_MS, INTERACTIVE_WRITE_WAIT_MS } from './write-lock.js';

export { sandboxOf };

/**
 * A fresh sandbox's size: 30 clientas, 150 citas over the past ten months and the next two, 75
 * calls; written in one transaction of a few tens of milliseconds (the write lock's bound).
 */
const SANDBOX_SCALE = 0.15;

/** The sandbox's name: the live clinic's, marked (shown to operators only; the API names the live clinic). */
export function sandboxName(liveName: string): string {
  return `${liveName} (sandbox)`.slice(0, 200);
}

/** The refusal of an import (or a key, or a deletion) aimed at a sandbox by its own id. */
export function sandboxRefusal(sandbox: Clinic, what: string): DomainError {
  return new DomainError(
    'invalid_input',
    `clinic ${sandbox.id} is the test-mode sandbox of clinic ${sandbox.sandbox_of}: it holds synthetic data only, so ${what}; ` +
      `use clinic ${sandbox.sandbox_of}, or give it fresh data with clinic-api sandbox reset --clinic ${sandbox.sandbox_of}`,
    { field: 'clinic' },
  );
}

export interface ResetOutcome {
  sandboxId: string;
  counts: ReturnType<typeof recordTotals>;
}

export class Sandboxes {
  /** First uses in progress in this process, by live clinic: one creation, every caller waits for it. */
  private readonly making = new Map<string, Promise<string>>();

  constructor(
    private readonly database: Database,
    private readonly now: () => number,
  ) {}

  /** The sandbox id of live clinic `clinicId`, or null when it has none yet. */
  find(clinicId: string): Promise<string | null> {
    return sandboxOf(this.database.db, clinicId);
  }

  /** The sandbox id of live clinic `clinicId`, made (with its data) if it has none yet. */
  async ensure(clinicId: string): Promise<string> {
    const found = await this.find(clinicId);
    if (found !== null) return found;
    let making = this.making.get(clinicId);
    if (!making) {
      making = this.make(clinicId).finally(() => this.making.delete(clinicId));
      this.making.set(clinicId, making);
    }
    return making;
  }

  private async make(clinicId: string): Promise<string> {
    const live = await getClinic(this.database.db, clinicId);
    if (!live) throw new DomainError('not_found', `no clinic with id ${clinicId}`, { field: 'clinic' });
    if (live.sandbox_of !== null) throw sandboxRefusal(live, 'it has no sandbox of its own');
    const nowMs = this.now();
    const sandbox: Clinic = {
      ...live,
      id: randomUUID(),
      name: sandboxName(live.name),
      created_at: Math.floor(nowMs / 1000),
      sandbox_of: live.id,
    };
    let inserted = false;
    await this.seed(sandbox, nowMs, INTERACTIVE_WRITE_WAIT_MS, async (trx) => {
      inserted = await insertSandboxClinic(trx, sandbox);
      return inserted;
    });
    if (inserted) return sandbox.id;
    // Another instance made it meanwhile.
    const other = await this.find(clinicId);
    if (other === null) throw new Error(`sandbox of clinic ${clinicId}: neither made nor found`);
    return other;
  }

  /**
   * Writes a fresh data set into `sandbox` in one transaction, after `before` (which says whether
   * to go on: false writes nothing).
   */
  private async seed(sandbox: Clinic, nowMs: number, waitMs: number, before: (trx: Kysely<DB>) => Promise<boolean>) {
    const records = generateDemo({
      seed: randomInt(2 ** 31),
      scale: SANDBOX_SCALE,
      timeZone: sandbox.timezone,
      today: todayIn(sandbox.timezone, nowMs),
      nowSeconds: Math.floor(nowMs / 1000),
    });
    const lines = function* (): Generator<Line> {
      let line = 0;
      for (const record of fictional(records)) yield { line: ++line, record };
    };
    const out = await clinicWrite(
      this.database,
      { clinicId: sandbox.id, timezone: sandbox.timezone, currency: sandbox.currency },
      'insert',
      // `before` runs under the clinic's lock, in the same transaction: false writes nothing.
      async (w) => ((await before(w.trx)) ? w.write(lines(), { now: () => nowMs }) : null),
      (written) => written !== null && written.ok,
      { waitMs },
    );
    return recordTotals(out?.counts ?? emptyCounts());
  }

  /**
   * A fresh sandbox for live clinic `clinicId` (made if it had none): the same id, new data, its
   * feed's earlier cursors expired, its webhook endpoints kept.
   */
  async reset(clinicId: string): Promise<ResetOutcome> {
    const live = await getClinic(this.database.db, clinicId);
    if (!live)
      throw new DomainError('not_found', `no clinic with id ${clinicId} (clinic-api clinics list shows the ids)`, { field: 'clinic' });
    if (live.sandbox_of !== null) throw sandboxRefusal(live, 'name its live clinic to reset it');
    const existing = await this.find(clinicId);
    const sandboxId = existing ?? (await this.ensure(clinicId));
    const sandbox = (await getClinic(this.database.db, sandboxId))!;
    const counts = await this.seed(sandbox, this.now(), INTERACTIVE_WRITE_WAIT_MS, async (trx) => {
      await emptySandbox(trx, sandboxId);
      return true;
    });
    return { sandboxId, counts };
  }

  /**
   * One move of every sandbox that exists (none is made here), each its own small transaction;
   * a sandbox being written (an import cannot be, a reset can) is skipped until the next pass.
   * `stopped`: asked between sandboxes, so a pass ends soon on shutdown.
   */
  async moveAll(stopped: () => boolean = () => false): Promise<{ moved: number; busy: number }> {
    let moved = 0;
    let busy = 0;
    for (const sandbox of await listSandboxes(this.database.db)) {
      if (stopped()) break;
      try {
        await this.move(sandbox, BACKGROUND_WRITE_WAIT_MS);
        moved++;
      } catch (err) {
        if (err instanceof DomainError && err.reason === 'busy') busy++;
        else throw err;
      }
    }
    return { moved, busy };
  }

  /** One move of `sandbox`: a handful of lines through the import's write path (each change an event). */
  async move(sandbox: Clinic, waitMs: number): Promise<void> {
    const nowMs = this.now();
    const nowS = Math.floor(nowMs / 1000);
    const out = await clinicWrite(
      this.database,
      { clinicId: sandbox.id, timezone: sandbox.timezone, currency: sandbox.currency },
      'upsert',
      // The move is planned from the rows read under the clinic's lock, then written in the same transaction.
      async (w) => {
        const rows = await sandboxRows(w.trx, sandbox.id, nowS);
        const planned = sandboxMove(sandbox.id, { ...rows, nowS, today: todayIn(sandbox.timezone, nowMs), timeZone: sandbox.timezone });
        const lines: Line[] = planned.map((l, i) => ('deleted' in l ? { line: i + 1, deletion: l } : { line: i + 1, record: l }));
        return w.write(lines, { now: () => nowMs });
      },
      (written) => written.ok,
      { waitMs },
    );
    // The lines are planned from the rows read under the lock: a refusal is a fault of the plan.
    if (!out.ok)
      throw new Error(
        `sandbox ${sandbox.id}: a move was refused (${out.dangling.count} unknown clientas, ` +
          `${out.missing.count} deletions of nothing)`,
      );
  }
}

export interface SandboxMovesOptions {
  /** SANDBOX_TICK_S in ms; 0: no moves */
  intervalMs: number;
  log: { error(obj: object, msg: string): void };
}

/** The sandboxes' periodic moves (SANDBOX_TICK_S), on the runtime's lifecycle. */
export class SandboxMoves {
  private readonly passes: PeriodicPasses | null;

  constructor(sandboxes: Sandboxes, opts: SandboxMovesOptions) {
    this.passes =
      opts.intervalMs > 0
        ? new PeriodicPasses(
            () =>
              sandboxes
                .moveAll(() => this.passes?.stopped ?? true)
                .catch((err: unknown) => opts.log.error({ err }, 'sandbox moves failed')),
            { firstDelayMs: opts.intervalMs, intervalMs: opts.intervalMs },
          )
        : null;
  }

  start(): void {
    this.passes?.start();
  }

  stop(): Promise<void> {
    return this.passes?.stop() ?? Promise.resolve();
  }
}
