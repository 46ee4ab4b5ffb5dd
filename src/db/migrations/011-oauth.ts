// OAuth (issue 25): the authorization server's storage and the grants an owner gave to apps.
//  - oauth_artifacts: what oidc-provider stores (clients, interactions, authorization codes,
//    access and refresh tokens, grants, sessions), one row per (model, id). For the opaque
//    artifacts the id IS the secret (an access token's value is its id), so the row is keyed by
//    id_hash = HMAC-SHA256(pepper, id) and the payload never holds the id: a copy of the table
//    gives no usable token. grant_id (not a credential) lets a grant's tokens be removed at once;
//    uid_hash finds an interaction's session. Times are epoch seconds.
//  - oauth_grants: one row per consent (the Connected apps page, the CLI): the clinic, the app,
//    the scopes and resource granted, who granted it and when, when it was last used, and when
//    it was revoked (disconnected, or by the flow itself: a refresh token or code used twice).
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const textC = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;
  const run = async (trx: Kysely<unknown>) => {
    await trx.schema
      .createTable('oauth_artifacts')
      .addColumn('model', textC, (c) => c.notNull())
      .addColumn('id_hash', textC, (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('grant_id', textC)
      .addColumn('uid_hash', textC)
      .addColumn('expires_at', 'bigint')
      .addColumn('consumed_at', 'bigint')
      .addPrimaryKeyConstraint('oauth_artifacts_pk', ['model', 'id_hash'])
      .execute();
    await trx.schema.createIndex('oauth_artifacts_grant').on('oauth_artifacts').columns(['grant_id']).execute();
    await trx.schema.createIndex('oauth_artifacts_uid').on('oauth_artifacts').columns(['model', 'uid_hash']).execute();
    await trx.schema.createIndex('oauth_artifacts_expiry').on('oauth_artifacts').columns(['expires_at']).execute();

    await trx.schema
      .createTable('oauth_grants')
      .addColumn('id', textC, (c) => c.primaryKey())
      .addColumn('clinic_id', 'text', (c) => c.notNull().references('clinics.id'))
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('client_name', 'text', (c) => c.notNull())
      // the host of the app's redirect address, as the owner saw it on the consent page
      .addColumn('redirect_host', 'text', (c) => c.notNull())
      // space-separated, in the scopes' one order (domain/scopes.ts), as OAuth writes them
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('resource', 'text', (c) => c.notNull())
      .addColumn('granted_by', 'text', (c) => c.references('users.id'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      // 'disconnected' (dashboard or CLI), 'revoked' (the app, RFC 7009), 'reuse' (a refresh token or code used twice)
      .addColumn('revoked_reason', 'text')
      .execute();
    await trx.schema.createIndex('oauth_grants_clinic').on('oauth_grants').columns(['clinic_id', 'created_at']).execute();
  };
  // SQLite runs migrations outside a transaction (see 003-search): this one makes its own.
  if (dialect === 'sqlite') await db.transaction().execute(run);
  else await run(db);
}
