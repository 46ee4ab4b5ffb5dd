// The benchmark's data set, made with the service's own code (demo generator, its two-phase write,
// KeyService) so it is stored exactly as an import would store it: one big clinic and small
// clinics beside it, plus one API key for the big clinic and its owner's dashboard account (who
// connects the OAuth app of the token case, lib/oauth-token.ts).
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { ServiceModules } from './service.js';

/** Bumped whenever what the data set holds changes, so a kept --data-dir is rebuilt. */
const DATASET_VERSION = 3;
/**
 * Clientas of the big clinic renamed by an import after the demo: events for the feed's cases
 * (each rename also changes her citas and calls).
 */
const RENAMED = 300;
const META_FILE = 'bench-dataset.json';
/** The benchmark owner's password. Benchmark data only, in the throw-away DATA_DIR. */
export const OWNER_PASSWORD = 'bench-only-owner-password';
const OWNER_EMAIL = 'owner@bench.example';

export interface DatasetClinic {
  id: string;
  name: string;
  timezone: string;
  scale: number;
  clientas: number;
  citas: number;
  llamadas: number;
}

export interface Dataset {
  version: number;
  /** where the data lives: SQLite in dataDir/clinic.db, or a database of a PostgreSQL server */
  db: 'sqlite' | 'postgres';
  dataDir: string;
  /** The clinic under load (index 0 of `clinics`). */
  big: DatasetClinic;
  clinics: DatasetClinic[];
  /** An API key of the big clinic. Benchmark data only: it lives in the throw-away DATA_DIR. */
  apiKey: string;
  /** The big clinic's owner (password OWNER_PASSWORD): consents to the OAuth app of the token case. */
  ownerEmail: string;
  /** When the data was generated; the demo's "today" is this instant's date in the clinic zone. */
  generatedAtMs: number;
  /** events in the big clinic's change feed (0 for a build without one) */
  events: number;
  buildSeconds: number;
  madeBy: string;
}

export interface DatasetOptions {
  db: 'sqlite' | 'postgres';
  dataDir: string;
  scale: number;
  smallScale: number;
  smallClinics: number;
  /** The environment the service reads (DATA_DIR etc.); the same the server child gets. */
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** the service's own code, from the build under test */
  mods: ServiceModules;
  /** what made the data, for the record */
  madeBy: string;
}

/** Reuses a data set in `dataDir` made with the same options, else builds one there. */
export async function prepareDataset(opts: DatasetOptions): Promise<Dataset> {
  const metaPath = path.join(opts.dataDir, META_FILE);
  const existing = readMeta(metaPath);
  // PostgreSQL: the server is a throw-away one started by this run, so its data is never reused.
  if (
    opts.db === 'sqlite' &&
    existing &&
    (existing.db ?? 'sqlite') === 'sqlite' &&
    existing.version === DATASET_VERSION &&
    existing.big.scale === opts.scale &&
    existing.clinics.length === opts.smallClinics + 1 &&
    existing.clinics.slice(1).every((c) => c.scale === opts.smallScale) &&
    fs.existsSync(path.join(opts.dataDir, 'clinic.db'))
  ) {
    const ageDays = (Date.now() - existing.generatedAtMs) / 86_400_000;
    opts.log(`reusing the data set in ${opts.dataDir} (generated ${ageDays.toFixed(1)} days ago by ${existing.madeBy})`);
    return existing;
  }
  if (fs.existsSync(opts.dataDir) && fs.readdirSync(opts.dataDir).length > 0) {
    // Only ever wipe what a benchmark run left there (an interrupted build has no META_FILE yet).
    const ours = new Set([
      META_FILE,
      'clinic.db',
      'clinic.db-wal',
      'clinic.db-shm',
      'clinic.db-journal',
      'clinic.db.lock',
      'clinic.db.lock-journal',
      'api-key-pepper',
    ]);
    const foreign = fs.readdirSync(opts.dataDir).filter((f) => !ours.has(f));
    if (foreign.length > 0) {
      throw new Error(
        `${opts.dataDir} holds files the benchmark did not make (${foreign.slice(0, 3).join(', ')}); give an empty or new directory`,
      );
    }
    opts.log(
      existing
        ? `the data set in ${opts.dataDir} was made with other options: rebuilding it`
        : `rebuilding the incomplete data set in ${opts.dataDir}`,
    );
    for (const f of fs.readdirSync(opts.dataDir)) fs.rmSync(path.join(opts.dataDir, f), { recursive: true, force: true });
  }
  fs.mkdirSync(opts.dataDir, { recursive: true });

  const { loadConfig, openRuntime, createDemoClinic, demoCounts } = opts.mods;
  const started = Date.now();
  const config = loadConfig(opts.env);
  const rt = await openRuntime(config);
  try {
    const nowMs = Date.now();
    // Small clinics on both sides of the big one, so its rows are not alone in the tables.
    const plan: { index: number; scale: number; seed: number }[] = [];
    for (let i = 0; i < opts.smallClinics; i++) plan.push({ index: i + 1, scale: opts.smallScale, seed: 101 + i });
    plan.splice(Math.ceil(opts.smallClinics / 2), 0, { index: 0, scale: opts.scale, seed: 1 });

    const made: DatasetClinic[] = [];
    for (const p of plan) {
      const want = demoCounts(p.scale);
      opts.log(
        `generating clinic ${p.index} at scale ${p.scale}: ${want.clientas} clientas, ${want.citas} citas, ${want.llamadas} llamadas`,
      );
      const t0 = Date.now();
      const { clinic, counts } = await createDemoClinic(rt.database, p.index, {
        seed: p.seed,
        scale: p.scale,
        nowMs,
        plan: 'premium',
        onProgress: (n) => {
          if (n % 200_000 === 0) opts.log(`  … ${n} records`);
        },
      });
      opts.log(`  done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      made[p.index] = { id: clinic.id, name: clinic.name, timezone: clinic.timezone, scale: p.scale, ...counts };
    }
    const big = made[0]!;
    // Changes after the demo (a starting state without events): the feed's cases need events.
    const renamed = await rt.database.db
      .selectFrom('clientas')
      .selectAll()
      .where('clinic_id', '=', big.id)
      .orderBy('id')
      .limit(RENAMED)
      .execute();
    const lines = renamed.map((c) =>
      JSON.stringify({
        type: 'clienta',
        id: c.id,
        nombre: `${c.nombre} Renombrada`,
        telefono: c.telefono,
        email: c.email,
        idioma: c.idioma,
        vip: c.vip === 1,
        cliente_desde: c.cliente_desde,
        created_at: new Date(Number(c.created_at) * 1000).toISOString().replace('.000Z', 'Z'),
      }),
    );
    const changed = await opts.mods.importJsonLines(rt.database, big.id, Readable.from([lines.join('\n')]));
    if (!changed.ok) throw new Error(`the data set's changes were refused: ${JSON.stringify(changed.errors.slice(0, 3))}`);
    const events = await rt.database.db
      .selectFrom('events' as never)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('clinic_id' as never, '=', big.id as never)
      .executeTakeFirst()
      .then(
        (r) => Number((r as { n: number } | undefined)?.n ?? 0),
        () => 0,
      );
    opts.log(`renamed ${RENAMED} clientas of the big clinic: ${events} events in its feed`);
    const issued = await rt.keys.create({ clinicId: big.id, name: 'benchmark', expiresAt: null, createdBy: null });
    await opts.mods.createUser(rt.database.db, { clinicId: big.id, email: OWNER_EMAIL, role: 'owner', password: OWNER_PASSWORD });
    if (rt.database.dialect === 'postgres') {
      // Fresh statistics, as autovacuum would gather them a little later on a real server.
      const t0 = Date.now();
      await sql`analyze`.execute(rt.database.db);
      opts.log(`ANALYZE done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    const dataset: Dataset = {
      version: DATASET_VERSION,
      db: opts.db,
      dataDir: opts.dataDir,
      big,
      clinics: made,
      apiKey: issued.key,
      ownerEmail: OWNER_EMAIL,
      generatedAtMs: nowMs,
      events,
      buildSeconds: (Date.now() - started) / 1000,
      madeBy: opts.madeBy,
    };
    fs.writeFileSync(metaPath, JSON.stringify(dataset, null, 2) + '\n', { mode: 0o600 });
    return dataset;
  } finally {
    // Closing checkpoints the WAL, so the server starts on a settled file.
    await rt.close();
  }
}

function readMeta(file: string): Dataset | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Dataset;
  } catch {
    return null;
  }
}
