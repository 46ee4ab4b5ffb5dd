// A fleet: three real `clinic-api serve` processes on one PostgreSQL and one redis-server, as a
// deployment behind a load balancer runs them (docs/deploy.md). What each instance kept to itself
// before REDIS_URL is one thing for all of them now: the first-run demo, the per-key limit, the
// failed-authentication limit per address, the dashboard's sign-in throttles, revocations, edits
// and rolls of keys (from the CLI and from the dashboard of any instance), and the usage counts
// (nothing counted twice, nothing lost when an instance exits).
//
// Limits are made so that time hardly moves them: a key's bucket refills at 1 request/s, so a
// test that takes a few seconds changes the allowance by a few requests, within the 10 % that
// the contract gives a fleet.
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { runCli } from '../cli/in-process.js';
import { newPgDatabaseUrl } from '../helpers/db.js';
import {
  DEMO_KEY_RE,
  DEMO_PASSWORD_RE,
  request,
  startInstances,
  statusCounts,
  stopAllInstances,
  type Answer,
  type Instance,
} from '../helpers/fleet.js';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis.js';

const PEPPER = 'fleet-test-pepper-0123456789abcdefghijklmnop';
/** What an instance logs when another (or the CLI) announces a changed key. */
const CHANGED_ELSEWHERE = 'API key changed elsewhere (revoked, edited or rolled): its next request reads it again';
const hasPostgres = inject('pgAdminUrl') !== null;
if (!hasPostgres)
  process.stdout.write(
    'SKIPPED the fleet tests (test/fleet/fleet.test.ts): they run on PostgreSQL, and this run has none (TEST_SQLITE_ONLY=1)\n',
  );
const runs = redisAvailable('the fleet tests (test/fleet/fleet.test.ts)') && hasPostgres;

describe.skipIf(!runs)('three instances on one PostgreSQL and one Redis', () => {
  let redis: RedisServer;
  let env: Record<string, string>;
  let rt: Runtime;
  let a!: Instance;
  let b!: Instance;
  let c!: Instance;
  let ownerEmail: string;
  let ownerPassword: string;
  let clinicId: string;

  /** A new key of the demo clinic, made directly in the database (no instance has seen it). */
  async function newKey(name: string): Promise<{ id: string; key: string }> {
    const k = await rt.keys.create({ clinicId, name, expiresAt: null, createdBy: null });
    return { id: k.id, key: k.key };
  }

  const me = (i: Instance, key: string, from?: string) => request(`${i.baseUrl}/api/v1/me`, { key, from });

  beforeAll(async () => {
    redis = await startRedis();
    env = {
      DATABASE_URL: await newPgDatabaseUrl(),
      API_KEY_PEPPER: PEPPER,
      REDIS_URL: redis.url,
      // Per key: bursts of 100, then 1 a second. Failed authentications: 10, then 1 a second.
      RATE_LIMIT_RPS: '1',
      RATE_LIMIT_BURST: '100',
      AUTH_FAIL_RPS: '1',
      AUTH_FAIL_BURST: '10',
      // This test is about sharing, on a test machine shared with other runs: three servers, a
      // database and the test itself on two cores can leave Redis without a CPU for tens of
      // milliseconds, which the default 10 ms would count as an outage and limit in memory
      // meanwhile (failing open is tested apart, in fail-open.test.ts, with the default).
      REDIS_TIMEOUT_MS: '250',
    };
    [a, b, c] = (await startInstances(['A', 'B', 'C'], env)) as [Instance, Instance, Instance];
    rt = await openRuntime(loadConfig(env), { migrate: false, logTo: false });
  });
  afterAll(async () => {
    await stopAllInstances();
    await rt?.close();
    await redis?.close();
  });

  it('started at the same instant on an empty database, they make exactly one demo; each uses Redis', async () => {
    const banners = [a, b, c].filter((i) => DEMO_KEY_RE.test(i.output()));
    expect(banners, [a, b, c].map((i) => i.output()).join('\n---\n')).toHaveLength(1);
    expect(DEMO_KEY_RE.exec(banners[0]!.output())?.[1]).toBeTruthy();
    [, ownerEmail, ownerPassword] = DEMO_PASSWORD_RE.exec(banners[0]!.output())! as unknown as [string, string, string];
    const count = async (table: 'clinics' | 'users' | 'api_keys') =>
      Number(
        (
          await rt.database.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect([await count('clinics'), await count('users'), await count('api_keys')]).toEqual([1, 1, 1]);
    clinicId = (await rt.database.db.selectFrom('clinics').select('id').executeTakeFirstOrThrow()).id;
    for (const i of [a, b, c]) {
      await i.waitForLog((l) => l.msg === 'Redis answers: rate limits are shared by every instance', 10_000, 'Redis answering');
      expect(i.logs().find((l) => l.msg === 'clinic-api listening')?.rateLimits).toBe(`shared on ${redis.url}`);
    }
  });

  it('a key gets one budget across the fleet: 150 requests spread over three instances, 100 (+ refill) pass', async () => {
    const k = await newKey('spread');
    const answers = await Promise.all(Array.from({ length: 150 }, (_, n) => me([a, b, c][n % 3]!, k.key)));
    const counts = statusCounts(answers);
    expect(Object.keys(counts).sort()).toEqual(['200', '429']);
    // The burst is 100 and 1 more a second: within the contract's 10 %. Per-instance buckets
    // would have passed all 150 (50 per instance).
    expect(counts[200]).toBeGreaterThanOrEqual(100);
    expect(counts[200]).toBeLessThanOrEqual(110);
    expect(answers.every((x) => x.headers['ratelimit-policy'] === '"key";q=100;w=100')).toBe(true);
    const refused = answers.find((x) => x.status === 429)!;
    expect(JSON.parse(refused.body).error.code).toBe('too_many_requests');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The answers given before authentication describe the fleet's bucket too, wherever they land:
    // spent (1 more a second may have come back meanwhile), where a bucket of each instance's own would show 50 left.
    for (const i of [a, b, c])
      for (const [method, path] of [
        ['DELETE', '/api/v1/me'],
        ['GET', '/api/v1/nothing-here'],
      ] as const) {
        const res = await request(`${i.baseUrl}${path}`, { key: k.key, method });
        expect(res.status).toBe(method === 'GET' ? 404 : 405);
        expect(res.headers['ratelimit-policy']).toBe('"key";q=100;w=100');
        expect(res.headers['ratelimit']).toMatch(/^"key";r=[01];t=\d+$/);
      }
  });

  it('an address gets one failed-authentication budget across the fleet', async () => {
    const from = '127.0.0.21';
    const bad = 'svc_' + 'x'.repeat(43);
    const answers: Answer[] = [];
    // One at a time, round robin: each failure is spent before the next is checked.
    for (let n = 0; n < 30; n++) answers.push(await me([a, b, c][n % 3]!, bad, from));
    const counts = statusCounts(answers);
    expect(counts[401]! + counts[429]!).toBe(30);
    expect(counts[401]).toBeGreaterThanOrEqual(10);
    expect(counts[401]).toBeLessThanOrEqual(11); // 10, and one more if a second passed
    // Another address is not affected.
    expect((await me(a, bad, '127.0.0.22')).status).toBe(401);
  });

  it('a key revoked with the CLI is refused by every instance at once (announced through Redis)', async () => {
    const k = await newKey('revoked by the CLI');
    // Cached as live on every instance (the key cache lives 4 s).
    for (const i of [a, b, c]) expect((await me(i, k.key)).status).toBe(200);
    const run = await runCli(['keys', 'revoke', k.id], { dataDir: '/nonexistent', env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`revoked key ${k.id}; running servers reject it now (announced through Redis)`);
    for (const i of [a, b, c]) {
      // The instance received the announcement (within the contract's 5 s)...
      await i.waitForLog((l) => l.msg === CHANGED_ELSEWHERE && l.key === k.id, 5_000, 'the revocation');
      // ...and refuses the key although its cache entry is still fresh.
      expect((await me(i, k.key)).status).toBe(401);
    }
  });

  it('a key revoked on the dashboard of one instance is refused there at once, and by the others as announced', async () => {
    const k = await newKey('revoked on the dashboard');
    for (const i of [a, b, c]) expect((await me(i, k.key)).status).toBe(200);
    const browser = new Browser(b.baseUrl, '127.0.0.31');
    expect((await browser.signIn(ownerEmail, ownerPassword)).status).toBe(303);
    const confirm = await browser.get(`/dashboard/settings/api/keys/${k.id}/revoke`);
    expect(confirm.status).toBe(200);
    expect((await browser.post(`/dashboard/settings/api/keys/${k.id}/revoke`, { _csrf: csrfOf(confirm.body) })).status).toBe(303);
    expect((await me(b, k.key)).status).toBe(401);
    for (const i of [a, c]) {
      await i.waitForLog((l) => l.msg === CHANGED_ELSEWHERE && l.key === k.id, 5_000, 'the revocation');
      expect((await me(i, k.key)).status).toBe(401);
    }
  });

  const get = (i: Instance, path: string, key: string) => request(`${i.baseUrl}${path}`, { key });

  it('a key edited with the CLI: every instance reads its new scopes at once (announced through Redis)', async () => {
    const k = await newKey('edited by the CLI');
    // Cached as it was on every instance, all scopes.
    for (const i of [a, b, c]) expect((await get(i, '/api/v1/clientas?limit=1', k.key)).status).toBe(200);
    const run = await runCli(['keys', 'update', k.id, '--scopes', 'citas:read'], { dataDir: '/nonexistent', env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('running servers use it now (announced through Redis)');
    for (const i of [a, b, c]) {
      await i.waitForLog((l) => l.msg === CHANGED_ELSEWHERE && l.key === k.id, 5_000, 'the change');
      const refused = await get(i, '/api/v1/clientas?limit=1', k.key);
      expect([refused.status, JSON.parse(refused.body).error.scope]).toEqual([403, 'clientas:read']);
      expect((await get(i, '/api/v1/citas?limit=1', k.key)).status).toBe(200);
    }
  });

  it('a key edited on the dashboard of one instance: refused there at once, and by the others as announced', async () => {
    const k = await newKey('edited on the dashboard');
    // An address of its own: the refusals below spend its failed-authentication budget.
    const from = '127.0.0.52';
    for (const i of [a, b, c]) expect((await me(i, k.key, from)).status).toBe(200);
    const browser = new Browser(b.baseUrl, '127.0.0.32');
    expect((await browser.signIn(ownerEmail, ownerPassword)).status).toBe(303);
    const form = await browser.get(`/dashboard/settings/api/keys/${k.id}/edit`);
    expect(form.status).toBe(200);
    const saved = await browser.post(`/dashboard/settings/api/keys/${k.id}/edit`, {
      _csrf: csrfOf(form.body),
      name: 'edited on the dashboard',
      scopes: ['citas:read'],
      // the test's requests come from 127.0.0.52: outside these
      allowed_ips: '203.0.113.0/24',
    });
    expect(saved.status).toBe(303);
    expect(JSON.parse((await me(b, k.key, from)).body).error.code).toBe('ip_not_allowed');
    for (const i of [a, c]) {
      await i.waitForLog((l) => l.msg === CHANGED_ELSEWHERE && l.key === k.id, 5_000, 'the change');
      expect(JSON.parse((await me(i, k.key, from)).body).error.code).toBe('ip_not_allowed');
    }
  });

  it('a key rolled with the CLI and no overlap: the old one refused by every instance at once, the new one answered', async () => {
    const k = await newKey('rolled by the CLI');
    // An address of its own: the old key's 401s below spend its failed-authentication budget.
    const from = '127.0.0.53';
    for (const i of [a, b, c]) expect((await me(i, k.key, from)).status).toBe(200);
    const run = await runCli(['keys', 'roll', k.id, '--overlap', '0'], { dataDir: '/nonexistent', env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('running servers know it now (announced through Redis)');
    const fresh = run.stdout.trim();
    for (const i of [a, b, c]) {
      await i.waitForLog((l) => l.msg === CHANGED_ELSEWHERE && l.key === k.id, 5_000, 'the roll');
      expect((await me(i, k.key, from)).status).toBe(401);
      expect((await me(i, fresh, from)).status).toBe(200);
    }
  });

  it('during a roll: the new key narrowed, then revoked, with the CLI: every instance applies it to the old key at once', async () => {
    const k = await newKey('rolled, then narrowed and revoked');
    // An address of its own: the old key's 401s below spend its failed-authentication budget.
    const from = '127.0.0.54';
    const roll = await runCli(['keys', 'roll', k.id, '--overlap', '7d'], { dataDir: '/nonexistent', env });
    expect(roll.code, roll.stderr).toBe(0);
    const fresh = roll.stdout.trim();
    const nextId = (await rt.keys.list(clinicId)).find((x) => x.replaced_by === null && x.name === 'rolled, then narrowed and revoked')!.id;
    // The old key cached on every instance with all its scopes.
    for (const i of [a, b, c]) expect((await get(i, '/api/v1/clientas?limit=1', k.key)).status).toBe(200);
    let seen = [a, b, c].map((i) => i.logs().length);
    const run = await runCli(['keys', 'update', nextId, '--scopes', 'citas:read'], { dataDir: '/nonexistent', env });
    expect(run.code, run.stderr).toBe(0);
    for (const [n, i] of [a, b, c].entries()) {
      await i.waitForLog((l) => l.msg === CHANGED_ELSEWHERE && l.key === k.id, 5_000, 'the change of the old key', seen[n]);
      const refused = await get(i, '/api/v1/clientas?limit=1', k.key);
      expect([refused.status, JSON.parse(refused.body).error.code]).toEqual([403, 'insufficient_scope']);
    }
    seen = [a, b, c].map((i) => i.logs().length);
    const revoke = await runCli(['keys', 'revoke', nextId], { dataDir: '/nonexistent', env });
    expect(revoke.code, revoke.stderr).toBe(0);
    for (const [n, i] of [a, b, c].entries()) {
      await i.waitForLog((l) => l.msg === CHANGED_ELSEWHERE && l.key === k.id, 5_000, 'the revocation of the old key', seen[n]);
      expect((await me(i, k.key, from)).status).toBe(401);
      expect((await me(i, fresh, from)).status).toBe(401);
    }
  });

  it('sign-in attempts are throttled across the fleet: the sixth for one e-mail from one address is refused, wherever it lands', async () => {
    const from = '127.0.0.41';
    const statuses: number[] = [];
    for (let n = 0; n < 6; n++) {
      const browser = new Browser([a, b, c][n % 3]!.baseUrl, from);
      statuses.push((await browser.signIn('nobody@fleet.example', 'wrong password')).status);
    }
    // 5 attempts per (e-mail, address), then one a minute: per-instance buckets would have
    // allowed 5 on each of the three.
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('usage counts: every request counted once, and none lost when an instance exits on SIGTERM', async () => {
    // One key used on A only, one on B only, one on both.
    const keys = { A: await newKey('usage on A'), B: await newKey('usage on B'), both: await newKey('usage on both') };
    const sent = { A: { total: 0, errors: 0 }, B: { total: 0, errors: 0 }, both: { total: 0, errors: 0 } };
    const send = async (i: Instance, which: keyof typeof keys, n: number) => {
      // One in ten is a 400 (an unknown parameter): counted among the key's errors.
      const url = n % 10 === 9 ? `${i.baseUrl}/api/v1/citas?bogus=1` : `${i.baseUrl}/api/v1/citas?limit=1`;
      const res = await request(url, { key: keys[which].key });
      expect([200, 400]).toContain(res.status);
      sent[which].total++;
      if (res.status === 400) sent[which].errors++;
    };
    for (let n = 0; n < 30; n++) {
      await send(a, 'A', n);
      await send(b, 'B', n);
      await send(n % 2 === 0 ? a : b, 'both', n);
    }
    const stored = async (which: keyof typeof keys) => {
      const rows = await rt.database.db
        .selectFrom('api_key_usage')
        .select(['status_class', 'n'])
        .where('key_id', '=', keys[which].id)
        .execute();
      return {
        total: rows.reduce((s, r) => s + Number(r.n), 0),
        errors: rows.filter((r) => r.status_class === '4xx').reduce((s, r) => s + Number(r.n), 0),
      };
    };
    // Counted in memory, written every 30 s and on close: A writes all of its counts as it exits.
    a.signal('SIGTERM');
    expect(await a.exited).toBe(0);
    expect(await stored('A')).toEqual(sent.A);
    b.signal('SIGTERM');
    expect(await b.exited).toBe(0);
    expect(await stored('B')).toEqual(sent.B);
    expect(await stored('both')).toEqual(sent.both);
    // The one left still serves, its limits still shared.
    expect((await me(c, keys.both.key)).status).toBe(200);
  });
});

/** The value of the first hidden _csrf field in a page. */
function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m?.[1]) throw new Error(`no CSRF token in the page:\n${html.slice(0, 500)}`);
  return m[1];
}

/** Just enough of a browser for the dashboard's forms: cookies, from one address. */
class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(
    private readonly base: string,
    private readonly from: string,
  ) {}

  private keep(res: Answer): Answer {
    const lines = res.headers['set-cookie'] ?? [];
    for (const line of lines) {
      const [pair] = line.split(';');
      const i = pair!.indexOf('=');
      const value = pair!.slice(i + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(pair!.slice(0, i));
      else this.cookies.set(pair!.slice(0, i), value);
    }
    return res;
  }

  private headers(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }

  async get(path: string): Promise<Answer> {
    return this.keep(await request(this.base + path, { from: this.from, headers: this.headers() }));
  }

  /** A form post; an array value is a field repeated (checkboxes). */
  async post(path: string, form: Record<string, string | string[]>): Promise<Answer> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
    return this.keep(
      await request(this.base + path, {
        method: 'POST',
        from: this.from,
        body: body.toString(),
        headers: { ...this.headers(), 'content-type': 'application/x-www-form-urlencoded' },
      }),
    );
  }

  async signIn(email: string, password: string): Promise<Answer> {
    const page = await this.get('/dashboard/sign-in');
    return this.post('/dashboard/sign-in', { _csrf: csrfOf(page.body), email, password });
  }
}
