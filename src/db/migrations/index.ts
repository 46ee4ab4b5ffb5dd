// Ordered migrations. Each takes the dialect so that one history serves both databases while a
// dialect can still get its own index type (e.g. trigram indexes on PostgreSQL).
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import * as m001 from './001-initial.js';
import * as m002 from './002-dashboard.js';
import * as m003 from './003-search.js';
import * as m004 from './004-data-versions.js';
import * as m005 from './005-events.js';
import * as m006 from './006-webhooks.js';
import * as m007 from './007-session-language.js';
import * as m008 from './008-webhook-event-types.js';
import * as m009 from './009-key-scopes.js';
import * as m010 from './010-request-log.js';
import * as m011 from './011-oauth.js';
import * as m012 from './012-access-sets.js';
import * as m013 from './013-request-id-index.js';
import * as m014 from './014-sandbox.js';
import * as m015 from './015-webhook-subscriptions.js';
import * as m016 from './016-clinic-exports.js';
import * as m017 from './017-clientas-join-cover.js';

type DialectMigration = { up(db: Kysely<unknown>, dialect: Dialect): Promise<void> };

const ordered: Record<string, DialectMigration> = {
  '001-initial': m001,
  '002-dashboard': m002,
  '003-search': m003,
  '004-data-versions': m004,
  '005-events': m005,
  '006-webhooks': m006,
  '007-session-language': m007,
  '008-webhook-event-types': m008,
  '009-key-scopes': m009,
  '010-request-log': m010,
  '011-oauth': m011,
  '012-access-sets': m012,
  '013-request-id-index': m013,
  '014-sandbox': m014,
  '015-webhook-subscriptions': m015,
  '016-clinic-exports': m016,
  '017-clientas-join-cover': m017,
};

export function migrationsFor(dialect: Dialect): Record<string, Migration> {
  return Object.fromEntries(Object.entries(ordered).map(([name, m]) => [name, { up: (db: Kysely<unknown>) => m.up(db, dialect) }]));
}
