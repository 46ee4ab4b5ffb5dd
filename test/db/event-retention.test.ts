// The retention job of the change feed (docs/architecture.md, "Following changes"): removes events
// older than EVENT_RETENTION_DAYS in batches, records the highest seq removed (an older cursor is
// then 410 cursor_expired), skips a clinic being written instead of waiting for it, logs its
// failures and never throws them, may run on several instances at once, and stops on close.
import { ALL_SCOPE_BITS } from '../../src/domain/scopes.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { dataVersions, type Clinic } from '../../src/repos/clinics.js';
import { eventsAfter } from '../../src/repos/events.js';
import { lockClinicData } from '../../src/repos/writes.js';
import { createClinic } from '../../src/services/accounts.js';
import { EventRetention } from '../../src/services/event-retention.js';
import { feedBounds, feedEtag, planFeed } from '../../src/services/feed.js';
import { importJsonLines } from '../../src/services/import.js';
import { dialects, freshDatabase } from '../helpers/db.js';
import { pause } from '../helpers/wait.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);
const id = (kind: number, n: number) => `0f10000${kind}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const clientaLine = (n: number, nombre = `Clienta ${n}`) =>
  JSON.stringify({
    type: 'clienta',
    id: id(1, n),
    nombre,
    telefono: `+346${String(n).padStart(8, '0')}`,
    vip: false,
    cliente_desde: '2024-01-01',
    created_at: '2024-01-01T10:00:00+01:00',
  });

class Log {
  infos: object[] = [];
  errors: { obj: object; msg: string }[] = [];
  info(obj: object) {
    this.infos.push(obj);
  }
  error(obj: object, msg: string) {
    this.errors.push({ obj, msg });
  }
}

const opened: Database[] = [];
afterEach(async () => {
  for (const d of opened.splice(0)) await d.close().catch(() => {});
});

async function setUp(dialect: 'sqlite' | 'postgres', database?: Database) {
  const db = database ?? (await freshDatabase(dialect));
  opened.push(db);
  const clinic = await createClinic(db.db, { name: 'Retención', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' }, T0);
  const other = await createClinic(db.db, { name: 'Otra', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' }, T0);
  const run = async (c: Clinic, at: number, lines: string[]) => {
    const res = await importJsonLines(db, c.id, Readable.from([lines.join('\n')]), { now: () => at });
    expect(res.ok, JSON.stringify(res.errors)).toBe(true);
  };
  return { db, clinic, other, run };
}

describe.each(dialects())('event retention on %s', (dialect) => {
  it('removes the events older than the period, in batches, and records the highest seq removed', async () => {
    const { db, clinic, other, run } = await setUp(dialect);
    // 2,500 events 40 days ago, 3 events 10 days ago; the other clinic: 2 old ones.
    await run(
      clinic,
      T0,
      Array.from({ length: 2_500 }, (_, i) => clientaLine(i)),
    );
    await run(
      clinic,
      T0 + 30 * DAY,
      [0, 1, 2].map((n) => clientaLine(n, `Renombrada ${n}`)),
    );
    await run(other, T0, [clientaLine(9_000), clientaLine(9_001)]);
    const log = new Log();
    const retention = new EventRetention(db, { days: 30, now: () => T0 + 40 * DAY, log });
    const tagBefore = feedEtag(
      { clinicId: clinic.id, timezone: 'Europe/Madrid', currency: 'EUR' },
      planFeed({}, clinic.id, ALL_SCOPE_BITS),
      await feedBounds(db.db, clinic.id),
    );

    expect(await retention.pass()).toEqual({ removed: 2_502, busy: 0, failed: 0 });
    const left = await eventsAfter(db.db, clinic.id, 0, 1e9, null, 10_000);
    expect(left.map((e) => e.seq)).toEqual([2_501, 2_502, 2_503]);
    expect((await dataVersions(db.db, clinic.id)).eventsExpired).toBe(2_500);
    expect((await dataVersions(db.db, other.id)).eventsExpired).toBe(2);
    expect(log.infos).toEqual([{ removed: 2_502, busy: 0, failed: 0, days: 30 }]);
    // The feed's tag moved with the mark: no 304 can hide the change.
    expect(
      feedEtag(
        { clinicId: clinic.id, timezone: 'Europe/Madrid', currency: 'EUR' },
        planFeed({}, clinic.id, ALL_SCOPE_BITS),
        await feedBounds(db.db, clinic.id),
      ),
    ).not.toBe(tagBefore);

    // A second pass finds nothing more; nor does one at a later day before the rest is 30 days old.
    expect(await retention.pass()).toEqual({ removed: 0, busy: 0, failed: 0 });
    // Several instances at once: each removes what is there, none fails, the mark only rises.
    const later = () => T0 + 61 * DAY;
    const [a, b] = await Promise.all([
      new EventRetention(db, { days: 30, now: later, log }).pass(),
      new EventRetention(db, { days: 30, now: later, log }).pass(),
    ]);
    expect(a.failed + b.failed).toBe(0);
    expect(await eventsAfter(db.db, clinic.id, 0, 1e9, null, 10)).toEqual([]);
    expect((await dataVersions(db.db, clinic.id)).eventsExpired).toBe(2_503);
  });

  it('skips a clinic being written (and comes back next pass) rather than wait for its writer', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-retention-'));
    try {
      const database =
        dialect === 'sqlite' ? await openDatabase({ kind: 'sqlite', file: path.join(dir, 'clinic.db') }) : await freshDatabase('postgres');
      if (dialect === 'sqlite') await migrateToLatest(database);
      const { db, clinic, run } = await setUp(dialect, database);
      await run(clinic, T0, [clientaLine(1), clientaLine(2)]);
      const retention = new EventRetention(db, { days: 30, now: () => T0 + 31 * DAY, log: new Log() });
      // Another process (SQLite) or connection (PostgreSQL) holds the clinic's writer lock.
      let release: () => Promise<void>;
      if (dialect === 'sqlite') {
        const writer = new BetterSqlite3(path.join(dir, 'clinic.db'));
        writer.exec('begin immediate');
        release = async () => {
          writer.exec('rollback');
          writer.close();
        };
      } else {
        let done!: () => void;
        const held = new Promise<void>((r) => {
          done = r;
        });
        let locked!: () => void;
        const isLocked = new Promise<void>((r) => {
          locked = r;
        });
        const trx = db.db.transaction().execute(async (t) => {
          await lockClinicData(t, clinic.id);
          locked();
          await held;
        });
        await isLocked;
        release = async () => {
          done();
          await trx;
        };
      }
      try {
        expect(await retention.pass()).toEqual({ removed: 0, busy: 1, failed: 0 });
      } finally {
        await release();
      }
      expect(await retention.pass()).toEqual({ removed: 2, busy: 0, failed: 0 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs on a timer once started, logs its failures without throwing, and stops on stop()', async () => {
    const { db, clinic, run } = await setUp(dialect);
    await run(clinic, T0, [clientaLine(1)]);
    const log = new Log();
    const retention = new EventRetention(db, { days: 30, now: () => T0 + 31 * DAY, log, firstDelayMs: 0, intervalMs: 20 });
    retention.start();
    await expect.poll(() => log.infos.length).toBeGreaterThan(0);
    expect((await dataVersions(db.db, clinic.id)).eventsExpired).toBe(1);
    // The database goes away under it: failures are logged, the timer goes on, nothing is thrown.
    await db.close();
    await expect.poll(() => log.errors.length, { timeout: 5_000 }).toBeGreaterThan(1);
    expect(log.errors[0]!.msg).toMatch(/event retention/);
    await retention.stop();
    const after = log.errors.length;
    // Nothing happening has no moment to wait for: five of its 20 ms intervals go by unused.
    await pause(100);
    expect(log.errors.length).toBe(after);
  });

  it('refuses a period under 30 days', () => {
    expect(() => new EventRetention({} as Database, { days: 29, log: new Log() })).toThrow(/at least 30 days/);
  });
});
