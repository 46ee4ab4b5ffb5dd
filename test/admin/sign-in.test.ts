// Signing in and out, cookies, throttling, session expiry, and the wall between dashboard
// sessions and API keys.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { ALL_SCOPES, buildDashboardApp, Client, cookieLine, csrfOf, EMAILS, FORM, PASSWORD, type DashboardApp } from './helpers.js';

describe.each(dialects())('dashboard sign-in on %s', (dialect) => {
  let t: DashboardApp;
  beforeAll(async () => {
    t = await buildDashboardApp(dialect, { admin: { throttle: { ipBurst: 8 } } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('sends a signed-out visitor from /dashboard to the sign-in page', async () => {
    const c = new Client(t.app);
    const res = await c.get('/dashboard');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/dashboard/sign-in');
    const page = await c.get('/dashboard/settings/api');
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe('/dashboard/sign-in');
  });

  it('serves an accessible sign-in form with a CSRF token and security headers', async () => {
    const c = new Client(t.app);
    const res = await c.get('/dashboard/sign-in', { 'accept-language': 'en-GB,en;q=0.9,es;q=0.5' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('<html lang="en">');
    expect(res.body).toContain('<label for="email">E-mail</label>');
    expect(res.body).toContain('autocomplete="current-password"');
    expect(csrfOf(res.body)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const pre = cookieLine(res, 'clinic_presession')!;
    expect(pre).toMatch(/HttpOnly/);
    expect(pre).toMatch(/SameSite=Lax/);
    expect(pre).toMatch(/Path=\/dashboard/);
    // Spanish by default
    expect((await new Client(t.app).get('/dashboard/sign-in')).body).toContain('<html lang="es">');
  });

  it('signs in with e-mail and password: HttpOnly, SameSite, Path-scoped cookie; only its hash is stored', async () => {
    const c = new Client(t.app);
    const res = await c.signIn(EMAILS.ownerA.toUpperCase());
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/dashboard/settings/api');
    const line = cookieLine(res, 'clinic_session')!;
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Lax/);
    expect(line).toMatch(/Path=\/dashboard/);
    expect(line).not.toMatch(/Secure/); // plain HTTP here
    const token = c.cookies.get('clinic_session')!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 bits
    const ids = (await t.database.db.selectFrom('dashboard_sessions').select('id').execute()).map((r) => r.id);
    expect(ids).toContain(createHash('sha256').update(token).digest('hex'));
    expect(ids).not.toContain(token);
    const page = await c.get('/dashboard/settings/api');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(EMAILS.ownerA);
  });

  it('marks the cookie Secure when the request came over HTTPS (behind a trusted proxy)', async () => {
    const tls = await buildDashboardApp(dialect, { env: { TRUST_PROXY: 'true' } });
    try {
      const c = new Client(tls.app);
      const res = await c.submit(
        '/dashboard/sign-in',
        '/dashboard/sign-in',
        { email: EMAILS.ownerA, password: PASSWORD },
        { 'x-forwarded-proto': 'https' },
      );
      expect(res.statusCode).toBe(303);
      expect(cookieLine(res, 'clinic_session')).toMatch(/; Secure/);
    } finally {
      await tls.close();
    }
  });

  it("cookieSecure 'always' marks every cookie Secure, even when Fastify sees plain HTTP", async () => {
    const tls = await buildDashboardApp(dialect, { admin: { cookieSecure: 'always' } });
    try {
      const c = new Client(tls.app);
      const form = await c.get('/dashboard/sign-in');
      expect(cookieLine(form, 'clinic_presession')).toMatch(/; Secure/);
      const res = await c.post('/dashboard/sign-in', { _csrf: csrfOf(form.body), email: EMAILS.ownerA, password: PASSWORD });
      expect(res.statusCode).toBe(303);
      expect(cookieLine(res, 'clinic_session')).toMatch(/; Secure/);
      expect(cookieLine(res, 'clinic_presession')).toMatch(/Max-Age=0.*; Secure|; Secure.*Max-Age=0/);
      const out = await c.submit('/dashboard/settings/api', '/dashboard/sign-out', {});
      expect(cookieLine(out, 'clinic_session')).toMatch(/; Secure/);
    } finally {
      await tls.close();
    }
  });

  it("cookieSecure 'never' leaves Secure off even over HTTPS, and 'auto' follows the request", async () => {
    const plain = await buildDashboardApp(dialect, { env: { TRUST_PROXY: 'true' }, admin: { cookieSecure: 'never' } });
    const auto = await buildDashboardApp(dialect, { env: { TRUST_PROXY: 'true' }, admin: { cookieSecure: 'auto' } });
    try {
      const https = { 'x-forwarded-proto': 'https' };
      const never = await new Client(plain.app).submit(
        '/dashboard/sign-in',
        '/dashboard/sign-in',
        { email: EMAILS.ownerA, password: PASSWORD },
        https,
      );
      expect(never.statusCode).toBe(303);
      expect(cookieLine(never, 'clinic_session')).not.toMatch(/Secure/);
      const overTls = await new Client(auto.app, '203.0.113.8').submit(
        '/dashboard/sign-in',
        '/dashboard/sign-in',
        { email: EMAILS.ownerA, password: PASSWORD },
        https,
      );
      expect(cookieLine(overTls, 'clinic_session')).toMatch(/; Secure/);
      const overHttp = await new Client(auto.app, '203.0.113.9').signIn(EMAILS.ownerA);
      expect(cookieLine(overHttp, 'clinic_session')).not.toMatch(/Secure/);
    } finally {
      await plain.close();
      await auto.close();
    }
  });

  it('refuses a wrong password with one message for every reason, and sets no session', async () => {
    const c = new Client(t.app, '198.51.100.1');
    const wrong = await c.signIn(EMAILS.ownerB, 'not the password');
    const unknown = await c.signIn('nobody@example.com', 'whatever-password');
    for (const res of [wrong, unknown]) {
      expect(res.statusCode).toBe(401);
      expect(res.body).toContain('El correo o la contraseña no son correctos.');
      expect(cookieLine(res, 'clinic_session')).toBeUndefined();
    }
    expect(wrong.body).toContain(`value="${EMAILS.ownerB}"`); // the e-mail is kept, never the password
    expect(wrong.body).not.toContain('not the password');
  });

  it('refuses a sign-in without a valid CSRF token', async () => {
    const c = new Client(t.app);
    await c.get('/dashboard/sign-in');
    const none = await c.post('/dashboard/sign-in', { email: EMAILS.ownerA, password: PASSWORD });
    expect(none.statusCode).toBe(403);
    expect(none.headers['content-type']).toBe('text/html; charset=utf-8');
    const forged = await c.post('/dashboard/sign-in', { _csrf: 'A'.repeat(43), email: EMAILS.ownerA, password: PASSWORD });
    expect(forged.statusCode).toBe(403);
    // a token from another browser's pre-session does not fit this one's cookie
    const other = new Client(t.app);
    const otherToken = csrfOf((await other.get('/dashboard/sign-in')).body);
    const stolen = await c.post('/dashboard/sign-in', { _csrf: otherToken, email: EMAILS.ownerA, password: PASSWORD });
    expect(stolen.statusCode).toBe(403);
    expect(c.cookies.has('clinic_session')).toBe(false);
  });

  it('throttles sign-ins per e-mail and IP: the sixth try from there is refused even with the right password', async () => {
    const c = new Client(t.app, '198.51.100.20');
    for (let i = 0; i < 5; i++) expect((await c.signIn(EMAILS.staffA, `wrong-${i}-password`)).statusCode).toBe(401);
    const res = await c.signIn(EMAILS.staffA, PASSWORD);
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(res.body).toContain('Demasiados intentos fallidos');
    expect(c.cookies.has('clinic_session')).toBe(false);
    // a minute later one more try is allowed, and the right password works
    t.clock.now += 61_000;
    expect((await c.signIn(EMAILS.staffA, PASSWORD)).statusCode).toBe(303);
  });

  it('does not let failures from one address lock the account out everywhere', async () => {
    const attacker = new Client(t.app, '198.51.100.22');
    for (let i = 0; i < 5; i++) expect((await attacker.signIn(EMAILS.ownerB, `wrong-${i}-password`)).statusCode).toBe(401);
    expect((await attacker.signIn(EMAILS.ownerB, 'one-more-guess')).statusCode).toBe(429);
    expect((await attacker.signIn(EMAILS.ownerB, PASSWORD)).statusCode).toBe(429);
    // the owner, from their own address, signs in at once
    const owner = new Client(t.app, '198.51.100.23');
    const res = await owner.signIn(EMAILS.ownerB, PASSWORD);
    expect(res.statusCode).toBe(303);
    expect(owner.cookies.has('clinic_session')).toBe(true);
  });

  it('throttles failed sign-ins per IP address, across accounts', async () => {
    const c = new Client(t.app, '198.51.100.30');
    for (let i = 0; i < 8; i++) expect((await c.signIn(`guess${i}@example.com`, 'guess-password')).statusCode).toBe(401);
    const res = await c.signIn(EMAILS.ownerB, PASSWORD);
    expect(res.statusCode).toBe(429);
    // another address is not affected
    expect((await new Client(t.app, '198.51.100.31').signIn(EMAILS.ownerB)).statusCode).toBe(303);
  });

  it('signs out: the session ends on the server and the cookie is cleared', async () => {
    const c = new Client(t.app);
    await c.signIn(EMAILS.ownerA);
    const token = c.cookies.get('clinic_session')!;
    const res = await c.submit('/dashboard/settings/api', '/dashboard/sign-out', {});
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toContain('/dashboard/sign-in?signed_out=1');
    expect(cookieLine(res, 'clinic_session')).toMatch(/Max-Age=0/);
    const replay = await t.app.inject({ url: '/dashboard/settings/api', headers: { cookie: `clinic_session=${token}` } });
    expect(replay.statusCode).toBe(303);
    expect(replay.headers.location).toBe('/dashboard/sign-in');
    expect((await c.get('/dashboard/sign-in?signed_out=1')).body).toContain('Has cerrado la sesión.');
  });

  it('refuses a sign-out without the CSRF token (no forced sign-out)', async () => {
    const c = new Client(t.app);
    await c.signIn(EMAILS.ownerA);
    const res = await c.post('/dashboard/sign-out', {});
    expect(res.statusCode).toBe(403);
    expect((await c.get('/dashboard/settings/api')).statusCode).toBe(200);
  });

  it('does not accept an API key: a Bearer request gets a 401 page, never data', async () => {
    const issued = await t.keys.create({ clinicId: t.clinicA.id, name: 'Secret integration', expiresAt: null, createdBy: null });
    for (const url of ['/dashboard', '/dashboard/settings/api', `/dashboard/settings/api?clinic=${t.clinicA.id}`]) {
      const res = await t.app.inject({ url, headers: { authorization: `Bearer ${issued.key}` } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).not.toContain('Secret integration');
    }
    // not even together with a valid session
    const c = new Client(t.app);
    await c.signIn(EMAILS.ownerA);
    const both = await c.get('/dashboard/settings/api', { authorization: `Bearer ${issued.key}` });
    expect(both.statusCode).toBe(401);
    expect(both.body).not.toContain('Secret integration');
  });

  it('does not accept a dashboard session on the API', async () => {
    const c = new Client(t.app);
    await c.signIn(EMAILS.ownerA);
    const token = c.cookies.get('clinic_session')!;
    const res = await t.app.inject({ url: '/api/v1/citas', headers: { cookie: `clinic_session=${token}` } });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('missing_api_key');
  });
});

describe.each(dialects())('dashboard session expiry on %s', (dialect) => {
  let t: DashboardApp;
  beforeAll(async () => {
    t = await buildDashboardApp(dialect, { session: { idleSeconds: 600, absoluteSeconds: 3600, touchEverySeconds: 60 } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('ends a session left idle longer than the idle timeout', async () => {
    const c = new Client(t.app);
    await c.signIn(EMAILS.ownerA);
    t.clock.now += 540_000; // 9 minutes: still fine, and this request counts as activity
    expect((await c.get('/dashboard/settings/api')).statusCode).toBe(200);
    t.clock.now += 540_000; // 9 more minutes since the last request
    expect((await c.get('/dashboard/settings/api')).statusCode).toBe(200);
    t.clock.now += 601_000; // idle for more than 10 minutes
    const res = await c.get('/dashboard/settings/api');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toMatch(/^\/dashboard\/sign-in\?expired=1/);
    expect(cookieLine(res, 'clinic_session')).toMatch(/Max-Age=0/);
    expect((await c.get(res.headers.location as string)).body).toContain('Tu sesión ha caducado');
  });

  it('ends an active session at its absolute lifetime', async () => {
    const c = new Client(t.app);
    await c.signIn(EMAILS.ownerA);
    for (let i = 0; i < 6; i++) {
      t.clock.now += 500_000;
      expect((await c.get('/dashboard/settings/api')).statusCode).toBe(200);
    }
    t.clock.now += 700_000; // 3700 s after sign-in, although never idle for 10 minutes
    expect((await c.get('/dashboard/settings/api')).statusCode).toBe(303);
    const left = await t.database.db.selectFrom('dashboard_sessions').select('id').execute();
    expect(left).toHaveLength(0);
  });

  it('refuses a form posted with an expired session without acting on it', async () => {
    const c = new Client(t.app);
    await c.signIn(EMAILS.ownerA);
    const token = csrfOf((await c.get('/dashboard/settings/api')).body);
    t.clock.now += 3_601_000;
    const res = await c.post('/dashboard/settings/api/keys', { _csrf: token, name: 'Late', expires: 'never', ...ALL_SCOPES });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toMatch(/sign-in/);
    expect((await t.keys.list(t.clinicA.id)).map((k) => k.name)).not.toContain('Late');
  });
});

describe('form bodies only', () => {
  it('answers a JSON body with an HTML 415 page', async () => {
    const t = await buildDashboardApp('sqlite');
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(res.statusCode).toBe(415);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const form = await t.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: FORM, payload: 'email=a' });
      expect(form.statusCode).toBe(403); // read, then refused for want of a CSRF token
    } finally {
      await t.close();
    }
  });
});
