// Least privilege for API keys (issue 23):
//  - scopes: what the key may read, space-separated in the one order of domain/scopes.ts. Every
//    key that existed before gets all five (the column's default), so no integration changes; new
//    keys always write theirs.
//  - allowed_ips: the addresses and CIDR ranges the key may be used from, canonical, comma-
//    separated (domain/allowed-ips.ts); null: any address.
//  - replaced_by: on a key that was rolled (`keys roll`), the key made to replace it; the old key
//    expires after the overlap. Set by the same guarded UPDATE that shortens its expiry, so a key
//    is rolled at most once even when two rolls race.
import type { Kysely } from 'kysely';

export const SCOPES_BEFORE_009 = 'citas:read clientas:read llamadas:read eventos:read contacto:read';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('scopes', 'text', (c) => c.notNull().defaultTo(SCOPES_BEFORE_009))
    .execute();
  await db.schema.alterTable('api_keys').addColumn('allowed_ips', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('replaced_by', 'text').execute();
}
