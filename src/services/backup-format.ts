// What a backup file is (docs/operations.md, "Backups and restore"): a SQLite database, the copy
// of DATA_DIR/clinic.db, with one table more, BACKUP_INFO_TABLE, holding these names. Shared by
// services/backup.ts (writes them) and services/restore.ts (reads them).
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { migrationsFor } from '../db/migrations/index.js';
import { PEPPER_FILE } from './pepper.js';

/** The layout of BACKUP_INFO_TABLE's rows; a restore refuses a format it does not know. */
export const BACKUP_FORMAT = '1';

/**
 * Where the pepper of the backed-up service came from: `file` (DATA_DIR/api-key-pepper: the
 * backup carries it), `environment` (API_KEY_PEPPER: it does not; the operator keeps the
 * variable), `missing` (neither: the keys it holds cannot be verified by anyone).
 */
export type PepperSource = 'file' | 'environment' | 'missing';

export interface BackupInfo {
  format: string;
  /** RFC 3339, UTC */
  made_at: string;
  /** "clinic-api 1.2.3" */
  made_by: string;
  pepper_source: PepperSource;
  /** the pepper itself: only when pepper_source is `file` */
  pepper?: string;
  /** pepperCheck() of the pepper, when there was one: tells a restore whether API_KEY_PEPPER is the same */
  pepper_check?: string;
}

/**
 * A value that tells whether two peppers are the same without revealing either: an HMAC under
 * the pepper (at least 32 characters of secret) of a fixed label.
 */
export function pepperCheck(pepper: string): string {
  return createHmac('sha256', pepper).update('clinic-api backup: pepper check v1').digest('base64url');
}

/** DATA_DIR's generated pepper, or null when there is none (never generates one: see services/pepper.ts). */
export function pepperFileOf(dataDir: string): string | null {
  try {
    const pepper = fs.readFileSync(path.join(dataDir, PEPPER_FILE), 'utf8').trim();
    return pepper === '' ? null : pepper;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The migrations this build knows, in order. */
export function knownMigrations(): string[] {
  return Object.keys(migrationsFor('sqlite'));
}
