// The benchmark's data set, made with the service's own code (the demo generator and its write,
// KeyService) so it is stored exactly as the service stores it: one big clinic and small clinics
// beside it, in SQLite, plus one API key for the big clinic.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { ServiceModules } from './service.js';

/** Bumped whenever what the data set holds changes, so a kept --data-dir is rebuilt. */
const DATASET_VERSION = 4;
const META_FILE = 'bench-dataset.json';
/** What a run may find in its data directory: anything else is not ours, and is never wiped. */
const OURS = new Set([
  META_FILE,
  'clinic.db',
  'clinic.db-wal',
  'clinic.db-shm',
  'clinic.db-journal',
  'clinic.db.lock',
  'clinic.db.lock-journal',
  'api-key-pepper',
]);

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
  dataDir: string;
  /** the clinic under load */
  big: DatasetClinic;
  clinics: DatasetClinic[];
  /** An API key of the big clinic. Benchmark data only: it lives in the throw-away DATA_DIR. */
  apiKey: string;
  generatedAtMs: number;
  madeBy: string;
}

export interface DatasetOptions {
  dataDir: string;
  scale: number;
  smallScale: number;
  smallClinics: number;
  /** the service's environment for building it (DATA_DIR, ...) */
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
  if (
    existing?.version === DATASET_VERSION &&
    existing.big.scale === opts.scale &&
    existing.clinics.length === opts.smallClinics + 1 &&
    existing.clinics.every((c) => c.id === existing.big.id || c.scale === opts.smallScale) &&
    fs.existsSync(path.join(opts.dataDir, 'clinic.db'))
  ) {
    opts.log(`reusing the data set in ${opts.dataDir} (made by ${existing.madeBy})`);
    const cleared = clearEarlierLogs(path.join(opts.dataDir, 'clinic.db'));
    if (cleared > 0) opts.log(`  removed ${cleared.toLocaleString('en-US')} request log rows that earlier runs' servers wrote`);
    // Where it is now: a data set copied to another directory is run there, not where it was made.
    return { ...existing, dataDir: opts.dataDir };
  }
  if (fs.existsSync(opts.dataDir)) {
    const foreign = fs.readdirSync(opts.dataDir).filter((f) => !OURS.has(f));
    if (foreign.length > 0)
      throw new Error(
        `${opts.dataDir} holds files the benchmark did not make (${foreign.slice(0, 3).join(', ')}); give an empty or new directory`,
      );
    for (const f of fs.readdirSync(opts.dataDir)) fs.rmSync(path.join(opts.dataDir, f), { force: true });
  }
  fs.mkdirSync(opts.dataDir, { recursive: true });

  const { loadConfig, openRuntime, createDemoClinic, demoCounts } = opts.mods;
  const rt = await openRuntime(loadConfig(opts.env));
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
      const { clinic, counts } = await createDemoClinic(rt.database, p.index, { seed: p.seed, scale: p.scale, nowMs, plan: 'premium' });
      made[p.index] = { id: clinic.id, name: clinic.name, timezone: clinic.timezone, scale: p.scale, ...counts };
    }
    const issued = await rt.keys.create({ clinicId: made[0]!.id, name: 'benchmark', expiresAt: null, createdBy: null });
    const dataset: Dataset = {
      version: DATASET_VERSION,
      dataDir: opts.dataDir,
      big: made[0]!,
      clinics: made,
      apiKey: issued.key,
      generatedAtMs: nowMs,
      madeBy: opts.madeBy,
    };
    fs.writeFileSync(metaPath, JSON.stringify(dataset, null, 2) + '\n', { mode: 0o600 });
    return dataset;
  } finally {
    // Closing checkpoints the WAL, so the servers start on a settled file.
    await rt.close();
  }
}

/**
 * Empties the request log (and its access sets) of a kept data set: a run starts on the data set
 * as it was made. Otherwise every run's servers added to it (two million rows after a few dozen
 * runs, ten times the data set), and the log's writes went into ever larger indexes: a figure
 * then depended on how many runs came before it.
 */
function clearEarlierLogs(file: string): number {
  const db = new BetterSqlite3(file);
  try {
    const rows = (db.prepare('select count(*) as n from request_log').get() as { n: number }).n;
    if (rows > 0) {
      db.exec('delete from request_access_sets; delete from request_log');
      db.pragma('wal_checkpoint(TRUNCATE)');
    }
    return rows;
  } finally {
    db.close();
  }
}

function readMeta(file: string): Dataset | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Dataset;
  } catch {
    return null;
  }
}
