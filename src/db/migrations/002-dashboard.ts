// The dashboard's tables: sign-in sessions and per-key API usage. Same portable conventions as
// 001-initial: text ids, bigint epoch seconds, 0/1 integers, '' instead of NULL in key columns.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const textC = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;

  // id is SHA-256 (hex) of the random cookie token: a leaked table cannot be replayed as cookies.
  // flash holds a one-time message (e.g. a just-created key) encrypted under a key derived from
  // that token, so only the browser holding the cookie can ever make it readable.
  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('flash', 'text')
    .execute();
  await db.schema.createIndex('dashboard_sessions_user').on('dashboard_sessions').columns(['user_id']).execute();
  await db.schema.createIndex('dashboard_sessions_expiry').on('dashboard_sessions').columns(['expires_at']).execute();

  // Requests per key, local day (clinic time zone), status class and error code ('' for none).
  // Written in batches by UsageCounter.flush(), never per request.
  await db.schema
    .createTable('api_key_usage')
    .addColumn('clinic_id', 'text', (c) => c.notNull().references('clinics.id'))
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
    .addColumn('day', textC, (c) => c.notNull())
    .addColumn('status_class', 'text', (c) => c.notNull())
    .addColumn('error_code', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('api_key_usage_pk', ['key_id', 'day', 'status_class', 'error_code'])
    .execute();
  await db.schema.createIndex('api_key_usage_clinic_day').on('api_key_usage').columns(['clinic_id', 'day']).execute();

  // The latest time each key received each error code, so an owner sees what is failing.
  await db.schema
    .createTable('api_key_errors')
    .addColumn('clinic_id', 'text', (c) => c.notNull().references('clinics.id'))
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
    .addColumn('error_code', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('last_at', 'bigint', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('api_key_errors_pk', ['key_id', 'error_code'])
    .execute();
  await db.schema.createIndex('api_key_errors_clinic').on('api_key_errors').columns(['clinic_id', 'last_at']).execute();
}
