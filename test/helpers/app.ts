// Builds the real app (same factory as the server) on the test runtime (helpers/runtime.ts: the
// server's composition root on a fresh database) with two clinics, so every endpoint test also
// exercises tenant isolation. Nothing is mocked: real database, real key service, real limiters;
// only the clock is the test's.
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppOptions } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import type { Dialect } from '../../src/db/dialect.js';
import type { ImportRecord } from '../../src/domain/records.js';
import type { Clinic } from '../../src/repos/clinics.js';
import { createClinic } from '../../src/services/accounts.js';
import type { KeyService } from '../../src/services/api-keys.js';
import { writeClinicData } from '../../src/services/write/session.js';
import { clinicARecords, clinicBRecords, FIXTURE_NOW_MS } from './fixtures.js';
import { testRuntime, type TestRuntime, type TestRuntimeOptions } from './runtime.js';

export { TEST_ENV, TEST_PEPPER } from './runtime.js';

export interface TestApp {
  app: FastifyInstance;
  /** The runtime the app runs on: every service, made once. */
  rt: TestRuntime;
  database: Database;
  keys: KeyService;
  config: Config;
  clinicA: Clinic;
  clinicB: Clinic;
  keyA: string;
  keyB: string;
  /** Mutable clock (ms) read by the app and every service. */
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

/** The real app on `rt`, ready for inject; closed with the runtime by `close()`. */
export async function appFor(rt: TestRuntime, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = await buildApp(rt, opts);
  await app.ready();
  return app;
}

export interface TestAppOptions extends Omit<TestRuntimeOptions, 'target' | 'migrate'>, AppOptions {
  /** seed the fixture data (default true) */
  seed?: boolean;
}

export async function buildTestApp(dialect: Dialect, opts: TestAppOptions = {}): Promise<TestApp> {
  const rt = await testRuntime(dialect, opts);
  const { database, keys, clock } = rt;
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

  const app = await appFor(rt, { overloadSampleIntervalMs: opts.overloadSampleIntervalMs, admin: opts.admin });
  return {
    app,
    rt,
    database,
    keys,
    config: rt.config,
    clinicA,
    clinicB,
    keyA,
    keyB,
    clock,
    close: async () => {
      await app.close();
      await rt.close();
    },
  };
}

export function bearer(key: string) {
  return { authorization: `Bearer ${key}` };
}
