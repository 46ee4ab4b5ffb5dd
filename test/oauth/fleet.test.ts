// A grant ended on one instance is refused by another at once through Redis (the channel
// key changes are announced on, services/key-changes.ts): two instances of the service on one
// database and one real redis-server; the second has the token in its cache when the first
// disconnects the app. Both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyChangeAnnouncer, listenForKeyChanges } from '../../src/services/key-changes.js';
import { appFor } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis.js';
import { anotherInstance, type TestRuntime } from '../helpers/runtime.js';
import { App, Browser, EMAILS, startOAuthServer, type OAuthServer } from './helpers.js';

describe.runIf(redisAvailable('OAuth fleet revocation'))('OAuth grants across a fleet', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });

  describe.each(dialects())('on %s', (dialect) => {
    let s: OAuthServer;
    let other: TestRuntime;
    beforeAll(async () => {
      // A generous Redis timeout: this test is about the announcement, not the fail-open deadline
      // (10 ms by default), which a loaded machine can miss.
      s = await startOAuthServer(dialect, { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '250' });
    });
    afterAll(async () => {
      await other?.close();
      await s?.close();
    });

    it('a disconnect on one instance is refused by the other as soon as the announcement arrives', async () => {
      other = anotherInstance(s.rt);
      const app2 = await appFor(other);
      const heard: string[] = [];
      const link = (await other.redis())!;
      listenForKeyChanges(link, other.keys, (id, kind) => kind === 'grant' && heard.push(id), other.appTokens);
      // The subscription is made in the background: announce a probe until the other instance hears one.
      const announce = keyChangeAnnouncer((await s.rt.redis())!);
      await expect
        .poll(async () => {
          await announce('oauth-grant:probe');
          return heard.includes('probe');
        })
        .toBe(true);

      const owner = new Browser(s.origin);
      await owner.signIn(EMAILS.ownerA);
      const app = await App.register(s.origin, `${s.origin}/api/v1`);
      const t = await app.exchange(await app.consent(owner, { allow: ['citas:read'] }));
      const onOther = () => app2.inject({ url: '/api/v1/me', headers: { authorization: `Bearer ${t.access_token}` } });
      expect((await onOther()).statusCode).toBe(200);

      const grantId = (await s.appGrantsOf()).find((g) => g.revoked_reason === null)!.id;
      const out = await s.rt.appGrants.disconnect(s.clinicA.id, grantId);
      expect(out).toEqual({ revoked: true, announced: true });
      await expect.poll(() => heard.includes(grantId)).toBe(true);
      // Heard: refused from the next request, though the token was in the other instance's cache.
      expect((await onOther()).statusCode).toBe(401);
      await app2.close();
    });
  });
});
