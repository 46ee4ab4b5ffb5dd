// A sandbox moving for hours, on both databases: every move is written (none refused), each one
// a handful of events, and past its bounds the sandbox stays the same size; only sandboxes that
// exist move. Driven by the test's clock, a minute per move.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_BOUNDS } from '../../src/demo/sandbox-moves.js';
import type { Database } from '../../src/db/connect.js';
import { dataVersions } from '../../src/repos/clinics.js';
import { createClinic } from '../../src/services/accounts.js';
import { Sandboxes } from '../../src/services/sandbox.js';
import { freshDatabase, dialects } from '../helpers/db.js';

const START = Date.UTC(2026, 2, 28, 9, 0, 0);
/** Enough to pass the calls' bound (75 at the start, one more a move) and stay there. */
const MOVES = 90;

describe.each(dialects())('sandbox moves on %s', (dialect) => {
  let database: Database;
  const clock = { now: START };
  beforeAll(async () => {
    database = await freshDatabase(dialect);
  });
  afterAll(async () => {
    await database?.close();
  });

  const count = async (table: 'clientas' | 'citas' | 'llamadas', clinicId: string) =>
    Number(
      (
        await database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('clinic_id', '=', clinicId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('moves for an hour and a half within its bounds, every move an event or more', async () => {
    const sandboxes = new Sandboxes(database, () => clock.now);
    const live = await createClinic(database.db, { name: 'Clínica Viva', plan: 'premium' }, clock.now);
    await createClinic(database.db, { name: 'Clínica Sin Pruebas', plan: 'premium' }, clock.now);
    expect(await sandboxes.moveAll()).toEqual({ moved: 0, busy: 0 });
    const id = await sandboxes.ensure(live.id);
    expect(await sandboxes.ensure(live.id)).toBe(id);
    let seq = (await dataVersions(database.db, id)).eventsSeq;
    for (let i = 0; i < MOVES; i++) {
      clock.now += 60_000;
      expect(await sandboxes.moveAll()).toEqual({ moved: 1, busy: 0 });
      const now = (await dataVersions(database.db, id)).eventsSeq;
      expect(now).toBeGreaterThan(seq);
      seq = now;
    }
    expect(await count('llamadas', id)).toBe(SANDBOX_BOUNDS.llamadas);
    expect(await count('citas', id)).toBeLessThanOrEqual(SANDBOX_BOUNDS.citas);
    expect(await count('clientas', id)).toBeLessThanOrEqual(SANDBOX_BOUNDS.clientas);
    // The live clinic was never written.
    expect(await count('citas', live.id)).toBe(0);
    expect((await dataVersions(database.db, live.id)).eventsSeq).toBe(0);
  });
});
