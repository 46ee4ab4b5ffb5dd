// Key changes across a fleet (REDIS_URL): whoever changes a key (revokes, edits or rolls it; the
// dashboard on any instance, the CLI) publishes its id on one Redis channel, and every running
// instance, subscribed, evicts it from its key cache at once, so its next request reads the key's
// new state (refused, other scopes or addresses, a new expiry). Pub/sub keeps nothing: an
// instance disconnected from Redis at that moment misses the message, and then the key cache's
// TTL (4 s, api-keys.ts) is the bound, as it is without Redis. Either way a change reaches every
// instance within 5 s.
//
// The channel kept its name from when only revocations were announced, so that during a rolling
// upgrade instances of either version hear each other's announcements.
import type { RedisLink } from '../redis/link.js';
import type { KeyService } from './api-keys.js';
import { GRANT_MESSAGE_PREFIX } from './oauth/grants.js';
import type { AppTokens } from './oauth/tokens.js';

export const KEY_CHANGE_CHANNEL = 'clinic-api:api-key-revoked';

/** How long the CLI waits for Redis (connecting included) before it gives up announcing. */
const ANNOUNCE_CONNECT_MS = 2_000;

/** Key ids are UUIDs; anything else on the channel is not ours and is ignored. */
const KEY_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** For KeyService's `announceChange`: publishes the key id; whether Redis took it. */
export function keyChangeAnnouncer(link: RedisLink): (keyId: string) => Promise<boolean> {
  return (keyId) => link.publish(KEY_CHANGE_CHANNEL, keyId, ANNOUNCE_CONNECT_MS);
}

/**
 * Evicts every key announced as changed from `keys`' cache, and every OAuth grant announced as
 * ended (`oauth-grant:<id>`, services/oauth/grants.ts) from `tokens`' cache; `onEvicted` is told
 * which (for the log).
 */
export function listenForKeyChanges(
  link: RedisLink,
  keys: KeyService,
  onEvicted?: (id: string, kind: 'key' | 'grant') => void,
  tokens?: AppTokens,
): void {
  link.subscribe(KEY_CHANGE_CHANNEL, (message) => {
    if (KEY_ID_RE.test(message)) {
      keys.evict(message);
      onEvicted?.(message, 'key');
    } else if (tokens && message.startsWith(GRANT_MESSAGE_PREFIX) && message.length < 200) {
      const grantId = message.slice(GRANT_MESSAGE_PREFIX.length);
      tokens.evictGrant(grantId);
      onEvicted?.(grantId, 'grant');
    }
  });
}
