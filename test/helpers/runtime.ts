// The runtime every in-process test uses: the server's own composition root (src/runtime.ts),
// on a fresh test database (SQLite in memory, or a new PostgreSQL database), with a clock the
// test moves, silent logs and no process metrics unless asked. Nothing is assembled by hand.
import { loadConfig } from '../../src/config.js';
import type { DatabaseTarget } from '../../src/db/connect.js';
import type { Dialect } from '../../src/db/dialect.js';
import type { LogDestination } from '../../src/logger.js';
import { composeRuntime, openRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime.js';
import { freshTarget } from './db.js';
import { FIXTURE_NOW_MS } from './fixtures.js';
import { until } from './wait.js';

export const TEST_PEPPER = 'test-pepper-0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * The environment of every in-process test runtime. Overload shedding is off: on a machine busy
 * with parallel test files the event loop can stall for a second (a large synchronous seed), and
 * a 503 would then fail an unrelated test; the overload tests turn it on with their own values.
 */
export const TEST_ENV: Record<string, string> = {
  DATA_DIR: '/nonexistent-test-data-dir',
  API_KEY_PEPPER: TEST_PEPPER,
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
  OVERLOAD_MAX_HEAP_USED_MB: '0',
};

export interface TestRuntimeOptions {
  /** Variables over TEST_ENV. */
  env?: Record<string, string>;
  /** Where the clock starts (ms; default the fixtures' now). */
  nowMs?: number;
  /** Where log lines go (default nowhere); a test that reads them passes a stream. */
  logTo?: LogDestination;
  /** prom-client's process series in /metrics (default off: each set runs its own sampler). */
  processMetrics?: boolean;
  /** Another database than a fresh one (a failure test's own); `migrate: false` leaves it as it is. */
  target?: DatabaseTarget;
  migrate?: boolean;
  /** The dashboard's session lengths (default DEFAULT_SESSION). */
  session?: RuntimeOptions['session'];
}

/** A runtime and the clock its services read: `rt.clock.now += 61_000` moves time for all of them. */
export type TestRuntime = Runtime & { readonly clock: { now: number } };

export async function testRuntime(dialect: Dialect, opts: TestRuntimeOptions = {}): Promise<TestRuntime> {
  const config = loadConfig({ ...TEST_ENV, ...opts.env });
  const clock = { now: opts.nowMs ?? FIXTURE_NOW_MS };
  const rt = await openRuntime(config, {
    target: opts.target ?? (await freshTarget(dialect)),
    migrate: opts.migrate,
    now: () => clock.now,
    logTo: opts.logTo ?? false,
    processMetrics: opts.processMetrics ?? false,
    session: opts.session,
  });
  return Object.assign(rt, { clock });
}

/**
 * Another instance of the service on `rt`'s database and clock (its own key cache, limiters,
 * page cache...), as a second server process would be; `database` replaces the one it uses (a
 * wrapper that records the queries). Closing it leaves the database open.
 */
export function anotherInstance(rt: TestRuntime, database = rt.database): TestRuntime {
  const other = composeRuntime(rt.config, database, { now: () => rt.clock.now, logTo: false, processMetrics: false });
  return Object.assign(other, { clock: rt.clock });
}

/**
 * Waits until `cap` has seen the background write of a key's last use: an instance's first
 * request with a key makes it, off the request's path, and on PostgreSQL it can end during a
 * later request, where a test counting that request's statements would count it too.
 */
export function keyUseWritten(cap: { queries: { sql: string }[] }): Promise<void> {
  return until(() => cap.queries.some((q) => /^update "api_keys"/.test(q.sql)), "the key's last use written");
}
