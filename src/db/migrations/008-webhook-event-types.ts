// The event types a webhook endpoint receives, as a list: a JSON array of type names (jsonb on
// PostgreSQL, JSON text on SQLite), null for every type; until now the text ",a,b,", matched by
// substring. Existing endpoints keep their choice: each row is converted.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') {
    await sql`alter table webhook_endpoints alter column event_types type jsonb using
      case when event_types is null then null else to_jsonb(array_remove(string_to_array(event_types, ','), '')) end`.execute(db);
    return;
  }
  // SQLite runs migrations outside a transaction (see 003-search): this one makes its own.
  await db.transaction().execute(async (trx) => {
    const rows = await sql<{ id: string; event_types: string }>`select id, event_types from webhook_endpoints
      where event_types is not null`.execute(trx);
    for (const r of rows.rows) {
      const list = JSON.stringify(r.event_types.split(',').filter(Boolean));
      await sql`update webhook_endpoints set event_types = ${list} where id = ${r.id}`.execute(trx);
    }
  });
}
