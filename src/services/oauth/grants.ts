// The grants owners gave to apps (Settings > API > Connected apps, the CLI's `apps`): recorded at
// consent (a later consent of the same person to the same app changes its scopes: incremental
// consent), listed per clinic, and ended by a disconnect (the dashboard, the CLI) or by the flow
// itself (the app revoked a token, RFC 7009; a refresh token or code used twice). Ending a grant
// removes its tokens and codes, evicts it from this instance's token cache at once and, with
// REDIS_URL, announces it so every instance refuses it at once (services/key-changes.ts); without
// Redis the cache's TTL bounds it (<= 5 s). The webhook endpoints the grant subscribed are
// disabled in the same transaction.
import type { Kysely } from 'kysely';
import { whenWritable } from '../../db/connect.js';
import type { DB } from '../../db/schema.js';
import { readStoredScopes, storedScopes, type Scope } from '../../domain/scopes.js';
import {
  destroyArtifact,
  destroyArtifactsOfGrant,
  findLiveGrantOf,
  getGrant,
  insertGrant,
  listGrants,
  locateGrant,
  revokeGrant,
  revokeGrantFromFlow,
  setGrantScopes,
  type OAuthGrantListing,
  type OAuthGrantRow,
} from '../../repos/oauth.js';
import { disableEndpointsOfCredentials } from '../../repos/webhooks.js';
import { INTERACTIVE_WRITE_WAIT_MS } from '../write-lock.js';
import type { KeyMode } from '../api-keys.js';
import { artifactHash } from './adapter.js';
import type { AppTokens } from './tokens.js';

export type { OAuthGrantListing, OAuthGrantRow };

/** How a grant ended: disconnected by the clinic, revoked by the app, or ended on a reused refresh token or code. */
export type GrantEnd = 'disconnected' | 'revoked' | 'reuse';

/** The message on the revocation channel that names a grant (key ids are UUIDs: the two never mix). */
export const GRANT_MESSAGE_PREFIX = 'oauth-grant:';

export interface Consent {
  grantId: string;
  clinicId: string;
  clientId: string;
  clientName: string;
  redirectHost: string;
  scopes: readonly Scope[];
  resource: string;
  grantedBy: string;
  /** 'test': the app reads the clinic's sandbox (the owner chose test mode at consent); default live */
  mode?: KeyMode;
}

export interface DisconnectOutcome {
  /** false: it had ended already */
  revoked: boolean;
  /** whether every instance was told at once (false: no REDIS_URL, or Redis did not answer) */
  announced: boolean;
}

export class AppGrants {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly tokens: AppTokens,
    private readonly opts: {
      pepper: string;
      /** the clock of the grants' dates (the runtime's) */
      now: () => number;
      /** publishes a message on the revocation channel; whether Redis took it */
      announce?: (message: string) => Promise<boolean>;
    },
  ) {}

  async recordConsent(c: Consent): Promise<void> {
    await whenWritable(
      () =>
        insertGrant(this.db, {
          id: c.grantId,
          clinic_id: c.clinicId,
          client_id: c.clientId,
          client_name: c.clientName,
          redirect_host: c.redirectHost,
          scopes: storedScopes(c.scopes),
          resource: c.resource,
          granted_by: c.grantedBy,
          created_at: Math.floor(this.opts.now() / 1000),
          last_used_at: null,
          revoked_at: null,
          revoked_reason: null,
          mode: c.mode ?? 'live',
        }),
      INTERACTIVE_WRITE_WAIT_MS,
    );
  }

  /**
   * The connection a new consent of `grantedBy` to this app would add to (incremental consent):
   * the live grant of the same person, app and resource in the clinic; its id and scopes.
   */
  async connectionOf(key: { clinicId: string; clientId: string; resource: string; grantedBy: string; mode: KeyMode }) {
    const row = await findLiveGrantOf(this.db, key);
    return row ? { id: row.id, scopes: readStoredScopes(row.scopes) } : undefined;
  }

  /** A new consent changed a connection's scopes (its tokens read them from the grant: the cache's TTL bounds the change). */
  async changeScopes(clinicId: string, grantId: string, scopes: readonly Scope[]): Promise<boolean> {
    return whenWritable(() => setGrantScopes(this.db, clinicId, grantId, storedScopes(scopes)), INTERACTIVE_WRITE_WAIT_MS);
  }

  list(clinicId: string): Promise<OAuthGrantListing[]> {
    return listGrants(this.db, clinicId);
  }

  get(clinicId: string, grantId: string): Promise<OAuthGrantRow | undefined> {
    return getGrant(this.db, clinicId, grantId);
  }

  /** Operator-scoped: the clinic of a grant id (the CLI's `apps revoke GRANT_ID`). */
  locate(grantId: string): Promise<string | undefined> {
    return locateGrant(this.db, grantId);
  }

  /** Ends the clinic's grant; undefined when it is unknown or another clinic's. */
  async disconnect(clinicId: string, grantId: string): Promise<DisconnectOutcome | undefined> {
    const at = Math.floor(this.opts.now() / 1000);
    const done = await whenWritable(
      () =>
        this.db.transaction().execute(async (trx) => {
          const done = await revokeGrant(trx, clinicId, grantId, at, 'disconnected');
          await disableEndpointsOfCredentials(trx, clinicId, 'created_by_grant', [grantId], 'grant_revoked', at);
          return done;
        }),
      INTERACTIVE_WRITE_WAIT_MS,
    );
    if (!done && !(await getGrant(this.db, clinicId, grantId))) return undefined;
    await whenWritable(async () => {
      await destroyArtifactsOfGrant(this.db, grantId);
      await destroyArtifact(this.db, 'Grant', artifactHash(this.opts.pepper, grantId));
    }, INTERACTIVE_WRITE_WAIT_MS);
    return { revoked: done, announced: await this.ended(grantId) };
  }

  /** The authorization server ended a grant (adapter.ts's hook); its tokens are gone already. */
  async endedByFlow(grantId: string, how: GrantEnd): Promise<void> {
    const at = Math.floor(this.opts.now() / 1000);
    await whenWritable(
      () =>
        this.db.transaction().execute(async (trx) => {
          const clinicId = await revokeGrantFromFlow(trx, grantId, at, how);
          if (clinicId) await disableEndpointsOfCredentials(trx, clinicId, 'created_by_grant', [grantId], 'grant_revoked', at);
        }),
      INTERACTIVE_WRITE_WAIT_MS,
    );
    await this.ended(grantId);
  }

  /** Refused here at once, and announced to the other instances. */
  private async ended(grantId: string): Promise<boolean> {
    this.tokens.evictGrant(grantId);
    return this.opts.announce ? this.opts.announce(`${GRANT_MESSAGE_PREFIX}${grantId}`) : false;
  }
}
