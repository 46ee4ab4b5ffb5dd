// Webhooks on a starved host: two real server processes on one PostgreSQL, one of them stalled
// on purpose with SIGSTOP (its event loop stands still, as on a host whose cores are taken) and
// resumed with SIGCONT. The receiver sees each event once:
//  - stalled between two attempts for longer than its lease: the other process takes the
//    endpoint over and delivers; the stalled one, resumed, finds its lease gone right before
//    sending and sends nothing (it used to send the event the other had just delivered);
//  - stalled in the middle of an attempt for less than WEBHOOK_LEASE_MS - WEBHOOK_TIMEOUT_MS,
//    and longer than WEBHOOK_TIMEOUT_MS: the answer that arrived meanwhile counts (it used to be
//    a timeout, and the event was sent again), and the endpoint stays its.
// Which process sends is made certain by stopping the other one at the right moments.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { createClinic } from '../../src/services/accounts.js';
import { seedRecords } from '../helpers/app.js';
import { dialects, newPgDatabaseUrl } from '../helpers/db.js';
import { clientaRecord } from '../helpers/fixtures.js';
import { gate, startReceiver, type Receiver } from '../helpers/receiver.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { pause, until } from '../helpers/wait.js';

/** Long enough that the test's own steps while a request is held open (an import, a lock) fit in it on a loaded machine. */
const TIMEOUT_MS = 3_000;
const LEASE_MS = 8_000;
/** A stall in the middle of an attempt that the lease covers: longer than the attempt's limit, shorter than LEASE_MS - TIMEOUT_MS. */
const STALL_IN_ATTEMPT_MS = 4_000;

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

describe.runIf(dialects().includes('postgres'))('webhooks with an instance stalled on purpose (PostgreSQL, two processes)', () => {
  it('each event reaches the receiver once: a stall past the lease between attempts, and one within the window during an attempt', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-stalled-'));
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      DATABASE_URL: await newPgDatabaseUrl(),
      API_KEY_PEPPER: 'webhook-stall-pepper-0123456789abcdefghijklmn',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_LEASE_MS: String(LEASE_MS),
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_RETRY_MAX_MS: '200',
      // A statement of the stalled process outlives the stall: its answer is there when it resumes.
      DB_STATEMENT_TIMEOUT_MS: '30000',
      SOCKET_TIMEOUT_MS: '60000',
    };
    const rt: Runtime = await openRuntime(loadConfig(env));
    cleanups.push(() => rt.close());
    const clinic = await createClinic(rt.database.db, { name: 'Stalls', plan: 'premium', timezone: 'Europe/Madrid' }, Date.now());
    /** The next request is answered once this opens; the others at once. */
    let holdNext: Promise<void> | null = null;
    const r: Receiver = await startReceiver('/hook', () => {
      const after = holdNext;
      holdNext = null;
      return after ? { status: 200, after } : { status: 200 };
    });
    cleanups.push(() => r.close());
    const { endpoint } = await rt.webhooks.create({ clinicId: clinic.id, url: r.url, eventTypes: null, createdBy: null });

    let n = 0;
    /** One new event (a clienta); its id. */
    const event = async (): Promise<string> => {
      n++;
      await seedRecords(
        rt.database,
        clinic,
        [clientaRecord(`0e000003-0000-4000-8000-${String(n).padStart(12, '0')}`, `Estancada ${n}`, `+3462${String(n).padStart(7, '0')}`)],
        Date.now(),
      );
      const last = await rt.database.db
        .selectFrom('events')
        .select('id')
        .where('clinic_id', '=', clinic.id)
        .orderBy('seq', 'desc')
        .executeTakeFirstOrThrow();
      return last.id;
    };
    const cursor = async () => Number((await rt.webhooks.get(clinic.id, endpoint.id))!.cursor);
    const times = (id: string) => r.received.filter((x) => x.id === id).length;

    // No event yet: neither process claims anything. B is stopped, so A sends what comes next.
    const start = (): Promise<ServerProcess> => startServerProcess({ key: 'none', env });
    const [a, b] = await Promise.all([start(), start()]);
    cleanups.push(
      () => a.kill(),
      () => b.kill(),
    );
    b.signal('SIGSTOP');

    // 1. A stalled between attempts, past its lease. A sends e1 (held open); e2 is written
    //    meanwhile, and a lock on the events keeps A, once e1 is answered and its cursor moved,
    //    just before reading e2: that is when it is stopped.
    const locker = new pg.Client({ connectionString: env.DATABASE_URL });
    await locker.connect();
    cleanups.push(() => locker.end());
    const g1 = gate();
    holdNext = g1.opened;
    const e1 = await event();
    await until(() => times(e1) === 1, 'A sending e1');
    const e2 = await event();
    await locker.query('begin');
    await locker.query('lock table events in access exclusive mode');
    g1.open();
    // A's read of the events waits for the lock (the only one that can: B is stopped).
    await until(
      async () =>
        Number(
          (await locker.query<{ n: string }>(`select count(*) as n from pg_locks where relation = 'events'::regclass and not granted`))
            .rows[0]!.n,
        ) > 0,
      'A waiting to read e2',
    );
    a.signal('SIGSTOP');
    b.signal('SIGCONT');
    await locker.query('rollback');
    // B takes the endpoint over once A's lease has run out, and delivers e2.
    await until(async () => times(e2) === 1 && (await cursor()) >= 2, 'B delivering e2', 30_000);
    a.signal('SIGCONT');
    await until(() => a.logs().some((l) => String(l.msg).includes('lost its endpoint')) || times(e2) > 1, 'A finding its lease gone');
    expect(times(e2), 'e2 was sent again by the process stalled past its lease').toBe(1);

    // 2. A stalled in the middle of an attempt, for longer than its time limit and less than the
    //    lease's margin: the answer that came meanwhile counts. B is stopped so that A sends e3.
    await until(() => r.open === 0, 'no request open');
    b.signal('SIGSTOP');
    const g3 = gate();
    holdNext = g3.opened;
    const e3 = await event();
    await until(() => times(e3) === 1 && r.open === 1, 'A sending e3');
    a.signal('SIGSTOP');
    g3.open();
    await until(() => r.answered.some((x) => x.id === e3), 'the answer to e3 written');
    await pause(STALL_IN_ATTEMPT_MS); // the stall's length is the point: past the time limit, within the lease
    a.signal('SIGCONT');
    b.signal('SIGCONT');
    await until(async () => (await cursor()) >= 3, 'A moving the cursor past e3');
    expect(times(e3), 'e3 was sent again: its answer, read after the stall, counted as a timeout').toBe(1);

    // Both run again: the rest arrives once each, in order.
    const rest = [await event(), await event(), await event()];
    await until(() => rest.every((id) => times(id) === 1), 'the rest');
    const all = [e1, e2, e3, ...rest];
    expect(r.received.map((x) => x.id)).toEqual(all);
  }, 90_000);
});
