// The language a dashboard session was started in (issue 23): the sign-in page's language, when
// someone asked for it (the address, the person's choice, the browser's Accept-Language), so the
// dashboard does not switch to the clinic's language after signing in. Null: nobody asked (the
// browser names neither language), or a session from before this column; the clinic's language applies.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('dashboard_sessions').addColumn('lang', 'text').execute();
}
