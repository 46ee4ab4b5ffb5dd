import { Migrator, type MigrationResult } from 'kysely';
import type { Database } from './connect.js';
import { migrationsFor } from './migrations/index.js';

/** Applies pending migrations; idempotent. Returns the names applied by this call. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrationsFor(database.dialect) },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r: MigrationResult) => r.status === 'Success').map((r) => r.migrationName);
}
