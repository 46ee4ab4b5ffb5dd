// Sign-in throttling under parallel requests, and the bound on concurrent password checks.
// verifyPassword is wrapped so the tests can count how many passwords were actually checked
// (scrypt runs) and hold checks open to see how many run at once.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { dialects } from '../helpers/db.js';
import { buildDashboardApp, Client, csrfOf, EMAILS, PASSWORD, type DashboardApp } from './helpers.js';

const probe = vi.hoisted(() => ({ calls: 0, inFlight: 0, maxInFlight: 0, gate: null as Promise<void> | null }));

vi.mock('../../src/services/passwords.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/services/passwords.js')>();
  return {
    ...real,
    verifyPassword: async (password: string, stored: string) => {
      probe.calls++;
      probe.inFlight++;
      probe.maxInFlight = Math.max(probe.maxInFlight, probe.inFlight);
      try {
        if (probe.gate) await probe.gate;
        return await real.verifyPassword(password, stored);
      } finally {
        probe.inFlight--;
      }
    },
  };
});

function resetProbe() {
  Object.assign(probe, { calls: 0, inFlight: 0, maxInFlight: 0, gate: null });
}

/** A client that has fetched the sign-in form, ready to post it many times at once. */
async function ready(app: DashboardApp['app'], ip: string): Promise<{ c: Client; csrf: string }> {
  const c = new Client(app, ip);
  return { c, csrf: csrfOf((await c.get('/dashboard/sign-in')).body) };
}

function statuses(responses: LightMyRequestResponse[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of responses) out[r.statusCode] = (out[r.statusCode] ?? 0) + 1;
  return out;
}

// Checks are not the limit in these tests: only the buckets are.
const WIDE = { verifyConcurrency: 64, verifyQueue: 64 };

describe.each(dialects())('sign-in throttling under parallel requests on %s', (dialect) => {
  let t: DashboardApp | undefined;
  afterEach(async () => {
    probe.gate = null;
    await t?.close();
    t = undefined;
    resetProbe();
  });

  it('checks at most the burst of 40 parallel wrong passwords for one account from one address', async () => {
    t = await buildDashboardApp(dialect, { admin: { throttle: WIDE } });
    const { c, csrf } = await ready(t.app, '198.51.100.40');
    resetProbe();
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        c.post('/dashboard/sign-in', { _csrf: csrf, email: EMAILS.ownerA, password: `wrong-${i}-password` }),
      ),
    );
    expect(probe.calls).toBe(5);
    expect(statuses(responses)).toEqual({ 401: 5, 429: 35 });
    for (const r of responses.filter((x) => x.statusCode === 429)) {
      expect(r.body).toContain('Demasiados intentos fallidos');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // and the right password is refused from there too until the bucket refills
    expect((await c.post('/dashboard/sign-in', { _csrf: csrf, email: EMAILS.ownerA, password: PASSWORD })).statusCode).toBe(429);
    expect(probe.calls).toBe(5);
  });

  it('bounds a guesser spread over many addresses by the per-account bucket', async () => {
    t = await buildDashboardApp(dialect, { admin: { throttle: { ...WIDE, accountBurst: 10 } } });
    const clients = await Promise.all(Array.from({ length: 40 }, (_, i) => ready(t!.app, `198.51.100.${100 + i}`)));
    resetProbe();
    const responses = await Promise.all(
      clients.map(({ c, csrf }, i) => c.post('/dashboard/sign-in', { _csrf: csrf, email: EMAILS.ownerA, password: `wrong-${i}-password` })),
    );
    expect(probe.calls).toBe(10);
    expect(statuses(responses)).toEqual({ 401: 10, 429: 30 });
    // the documented trade-off: while the account-wide bucket is empty, nobody gets in
    expect((await new Client(t.app, '203.0.113.50').signIn(EMAILS.ownerA)).statusCode).toBe(429);
    t.clock.now += 11_000; // one more attempt after 10 s (1 per 10 s)
    expect((await new Client(t.app, '203.0.113.51').signIn(EMAILS.ownerA)).statusCode).toBe(303);
  });

  it('checks at most the per-IP burst of 40 parallel attempts on different accounts from one address', async () => {
    t = await buildDashboardApp(dialect, { admin: { throttle: { ...WIDE, ipBurst: 8 } } });
    const { c, csrf } = await ready(t.app, '198.51.100.41');
    resetProbe();
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        c.post('/dashboard/sign-in', { _csrf: csrf, email: `guess${i}@example.com`, password: 'guess-password' }),
      ),
    );
    expect(probe.calls).toBe(8);
    expect(statuses(responses)).toEqual({ 401: 8, 429: 32 });
  });

  it('lets the owner in from their own address while another address is throttled on their e-mail', async () => {
    t = await buildDashboardApp(dialect);
    const { c, csrf } = await ready(t.app, '198.51.100.42');
    const attack = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        c.post('/dashboard/sign-in', { _csrf: csrf, email: EMAILS.ownerB, password: `wrong-${i}-password` }),
      ),
    );
    expect(statuses(attack)).toEqual({ 401: 5, 429: 15 });
    expect((await c.post('/dashboard/sign-in', { _csrf: csrf, email: EMAILS.ownerB, password: PASSWORD })).statusCode).toBe(429);
    const owner = new Client(t.app, '203.0.113.60');
    expect((await owner.signIn(EMAILS.ownerB)).statusCode).toBe(303);
    expect((await owner.get('/dashboard/settings/api')).statusCode).toBe(200);
  });

  it('runs at most verifyConcurrency password checks at once and turns away what cannot wait, without hashing', async () => {
    t = await buildDashboardApp(dialect, { admin: { throttle: { verifyConcurrency: 2, verifyQueue: 3 } } });
    // different addresses and accounts, so no bucket is involved
    const clients = await Promise.all(Array.from({ length: 10 }, (_, i) => ready(t!.app, `198.51.100.${200 + i}`)));
    resetProbe();
    let open!: () => void;
    probe.gate = new Promise<void>((r) => (open = r));
    const done: LightMyRequestResponse[] = [];
    const all = Promise.all(
      clients.map(({ c, csrf }, i) =>
        c.post('/dashboard/sign-in', { _csrf: csrf, email: `someone${i}@example.com`, password: 'some-password' }).then((r) => {
          done.push(r);
          return r;
        }),
      ),
    );
    // 2 checks running, 3 waiting: the other 5 are answered while the checks are still held
    await vi.waitFor(() => expect(done.length >= 5 || probe.inFlight > 2).toBe(true), { timeout: 10_000, interval: 5 });
    const early = done.length;
    open();
    const responses = await all;
    expect(probe.maxInFlight).toBe(2);
    expect(early).toBe(5);
    expect(probe.calls).toBe(5);
    expect(statuses(responses)).toEqual({ 401: 5, 503: 5 });
    const busy = responses.find((r) => r.statusCode === 503)!;
    expect(busy.headers['retry-after']).toBe('1');
    expect(busy.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(busy.body).toContain('Hay demasiados intentos de inicio de sesión en este momento');
    // once the checks are done, signing in works again
    expect((await new Client(t.app, '203.0.113.70').signIn(EMAILS.ownerA)).statusCode).toBe(303);
  });
});
