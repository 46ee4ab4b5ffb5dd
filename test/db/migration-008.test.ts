// Migration 008: a webhook endpoint's event types become a JSON array (jsonb on PostgreSQL), and
// endpoints made before it keep their choice; the delivery worker and the feed match the list in SQL.
import { Migrator, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrationsFor } from '../../src/db/migrations/index.js';
import { getWebhookEndpoint } from '../../src/repos/webhooks.js';
import { dialects, newPgDatabaseUrl } from '../helpers/db.js';

describe.each(dialects())('migration 008 on %s', (dialect) => {
  let database: Database;
  afterEach(async () => {
    await database.close();
  });

  it('turns ",a,b," into ["a","b"] and keeps null (every type)', async () => {
    database = await openDatabase(
      dialect === 'sqlite'
        ? { kind: 'sqlite', file: ':memory:' }
        : { kind: 'postgres', url: await newPgDatabaseUrl(), poolMax: 2, statementTimeoutMs: 10_000 },
    );
    const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrationsFor(dialect) } });
    const { error } = await migrator.migrateTo('006-webhooks');
    expect(error).toBeUndefined();
    // The clinic as the schema of 006 holds it (later migrations add columns the repository writes).
    const clinic = { id: 'c-antes' };
    await sql`insert into clinics (id, name, timezone, currency, plan, created_at)
      values (${clinic.id}, 'Antes', 'Europe/Madrid', 'EUR', 'premium', 0)`.execute(database.db);
    const endpoint = (id: string, types: string | null) =>
      sql`insert into webhook_endpoints (id, clinic_id, url, event_types, secret_enc, enabled, created_at, cursor, attempts,
        next_attempt_ms, lease_until_ms)
        values (${id}, ${clinic.id}, 'https://example.com/hook', ${types}, 'sealed', 1, 0, 0, 0, 0, 0)`.execute(database.db);
    await endpoint('e-some', ',cita.creada,cita.eliminada,');
    await endpoint('e-all', null);

    expect(await migrateToLatest(database)).toContain('008-webhook-event-types');
    expect((await getWebhookEndpoint(database.db, clinic.id, 'e-some'))!.event_types).toEqual(['cita.creada', 'cita.eliminada']);
    expect((await getWebhookEndpoint(database.db, clinic.id, 'e-all'))!.event_types).toBeNull();
  });
});
