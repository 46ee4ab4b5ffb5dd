// Revocation across a fleet (REDIS_URL): whoever revokes a key (the dashboard on any instance,
// the CLI) publishes its id on one Redis channel, and every running instance, subscribed, evicts
// it from its key cache at once. Pub/sub keeps nothing: an instance disconnected from Redis at
// that moment misses the message, and then the key cache's TTL (4 s, api-keys.ts) is the bound,
// as it is without Redis. Either way a revoked key is refused everywhere within 5 s.
import type { RedisLink } from '../redis/link.js';
import type { KeyService } from './api-keys.js';
import { GRANT_MESSAGE_PREFIX } from './oauth/grants.js';
import type { AppTokens } from './oauth/tokens.js';

export const REVOCATION_CHANNEL = 'clinic-api:api-key-revoked';

/** How long the CLI waits for Redis (connecting included) before it gives up announcing. */
const ANNOUNCE_CONNECT_MS = 2_000;

/** Key ids are UUIDs; anything else on the channel is not ours and is ignored. */
const KEY_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** For KeyService's `announceRevocation`: publishes the key id; whether Redis took it. */
export function revocationAnnouncer(link: RedisLink): (keyId: string) => Promise<boolean> {
  return (keyId) => link.publish(REVOCATION_CHANNEL, keyId, ANNOUNCE_CONNECT_MS);
}

/**
 * Evicts every key announced as revoked from `keys`' cache, and every OAuth grant announced as
 * ended (`oauth-grant:<id>`, services/oauth/grants.ts) from `tokens`' cache; `onEvicted` is told
 * which (for the log).
 */
export function listenForRevocations(
  link: RedisLink,
  keys: KeyService,
  onEvicted?: (id: string, kind: 'key' | 'grant') => void,
  tokens?: AppTokens,
): void {
  link.subscribe(REVOCATION_CHANNEL, (message) => {
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
