// Builds the real app (same factory as the server) on a fresh database with two clinics, so
// every endpoint test also exercises tenant isolation. Nothing is mocked: real database, real
// key service, real limiters; only the clock is fixed.
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import type { Dialect } from '../../src/db/dialect.js';
import type { ImportRecord } from '../../src/domain/records.js';
import { buildApp, type AppDeps } from '../../src/app.js';
import type { Clinic } from '../../src/repos/clinics.js';
import { createClinic } from '../../src/services/accounts.js';
import { KeyService } from '../../src/services/api-keys.js';
import { MemoryGcraLimiter } from '../../src/services/rate-limit.js';
import { writeClinicData } from '../../src/services/write/session.js';
import { freshDatabase } from './db.js';
import { clinicARecords, clinicBRecords, FIXTURE_NOW_MS } from './fixtures.js';

export const TEST_PEPPER = 'test-pepper-0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * The environment of every in-process test app. Overload shedding is off: on a machine busy
 * with parallel test files the event loop can stall for a second (a large synchronous seed), and
 * a 503 would then fail an unrelated test; the overload tests turn it on with their own values.
 */
export const TEST_ENV: Record<string, string> = {
  DATA_DIR: '/nonexistent-test-data-dir',
  API_KEY_PEPPER: TEST_PEPPER,
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
  OVERLOAD_MAX_HEAP_USED_MB: '0',
};

export interface TestApp {
  app: FastifyInstance;
  database: Database;
  keys: KeyService;
  config: Config;
  clinicA: Clinic;
  clinicB: Clinic;
  keyA: string;
  keyB: string;
  /** Mutable clock (ms) read by the app and the key service. */
  clock: { now: number };
  close(): Promise<void>;
}

/** Writes records as an import does (upserts, with events), at `nowMs` (default: the fixtures' now). */
export async function seedRecords(
  database: Database,
  clinic: Clinic,
  records: Iterable<ImportRecord>,
  nowMs = FIXTURE_NOW_MS,
): Promise<void> {
  const lines = [...records].map((record, i) => ({ line: i + 1, record }));
  const out = await writeClinicData(database, { clinicId: clinic.id, timezone: clinic.timezone, currency: clinic.currency }, lines, {
    mode: 'upsert',
    now: () => nowMs,
  });
  if (!out.ok) throw new Error(`seedRecords: refused (${JSON.stringify({ dangling: out.dangling, missing: out.missing })})`);
}

/** What a test may add to the app: its real log output, its metrics, a faster overload sampler. */
export type AppExtras = Pick<AppDeps, 'logStream' | 'metrics' | 'overloadSampleIntervalMs'>;

/** The real app on `database`, with real limiters from `config`, silent logs (unless a logStream is given), ready for inject. */
export async function appFor(
  config: Config,
  database: Database,
  keys: KeyService,
  now: () => number,
  extras: AppExtras = {},
): Promise<FastifyInstance> {
  const app = await buildApp({
    config,
    database,
    keys,
    now,
    ...(extras.logStream ? {} : { logger: false }),
    ...extras,
    limiter: new MemoryGcraLimiter(config.rateLimitRps, config.rateLimitBurst),
    authFailLimiter: new MemoryGcraLimiter(config.authFailRps, config.authFailBurst),
  });
  await app.ready();
  return app;
}

export interface TestAppOptions extends AppExtras {
  env?: Record<string, string>;
  nowMs?: number;
  /** seed the fixture data (default true) */
  seed?: boolean;
}

export async function buildTestApp(dialect: Dialect, opts: TestAppOptions = {}): Promise<TestApp> {
  const config = loadConfig({ ...TEST_ENV, ...opts.env });
  const database = await freshDatabase(dialect);
  const clock = { now: opts.nowMs ?? FIXTURE_NOW_MS };
  const now = () => clock.now;
  const keys = new KeyService(database.db, { pepper: TEST_PEPPER, prefix: config.apiKeyPrefix, apiPlans: config.apiPlans, now });

  const clinicA = await createClinic(
    database.db,
    { name: 'Clínica Uno', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'premium' },
    clock.now,
  );
  const clinicB = await createClinic(
    database.db,
    { name: 'Clínica Dos', timezone: 'America/Mexico_City', currency: 'MXN', plan: 'enterprise' },
    clock.now,
  );
  if (opts.seed !== false) {
    await seedRecords(database, clinicA, clinicARecords());
    await seedRecords(database, clinicB, clinicBRecords());
  }
  const keyA = (await keys.create({ clinicId: clinicA.id, name: 'A', expiresAt: null, createdBy: null })).key;
  const keyB = (await keys.create({ clinicId: clinicB.id, name: 'B', expiresAt: null, createdBy: null })).key;

  const app = await appFor(config, database, keys, now, {
    logStream: opts.logStream,
    metrics: opts.metrics,
    overloadSampleIntervalMs: opts.overloadSampleIntervalMs,
  });
  return {
    app,
    database,
    keys,
    config,
    clinicA,
    clinicB,
    keyA,
    keyB,
    clock,
    close: async () => {
      await app.close();
      await database.close();
    },
  };
}

export function bearer(key: string) {
  return { authorization: `Bearer ${key}` };
}
