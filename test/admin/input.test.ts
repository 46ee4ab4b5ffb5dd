// Text no database can hold, in the dashboard's forms and parameters: a 400 page that says what
// to do, never a 500 (`email=a%00b` on the sign-in form was a 500 page on PostgreSQL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { buildDashboardApp, Client, csrfOf, EMAILS, FORM, type DashboardApp } from './helpers.js';

const UNUSABLE = 'Un campo no se puede guardar así';

describe.each(dialects())('dashboard input the database cannot hold, on %s', (dialect) => {
  let t: DashboardApp;
  beforeAll(async () => {
    t = await buildDashboardApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A raw form body (percent-encoded by hand) with a valid CSRF token. */
  async function postRaw(c: Client, from: string, url: string, body: string) {
    const token = csrfOf((await c.get(from)).body);
    return t.app.inject({
      method: 'POST',
      url,
      remoteAddress: c.ip,
      headers: { ...FORM, cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      payload: `_csrf=${encodeURIComponent(token)}&${body}`,
    });
  }

  it.each([
    ['a NUL in the e-mail', `email=a%00b&password=x`],
    ['a NUL in the password', `email=${encodeURIComponent(EMAILS.ownerA)}&password=pa%00ss`],
    ['an escape character', `email=a%1Bb&password=x`],
    ['a NUL in a field name', `em%00ail=a&password=x`],
    ['a field far too long', `email=${'a'.repeat(5000)}&password=x`],
  ])('sign-in with %s is a 400 page that says what to do', async (_label, body) => {
    const c = new Client(t.app);
    const res = await postRaw(c, '/dashboard/sign-in', '/dashboard/sign-in', body);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain(UNUSABLE);
    expect(c.cookies.has('clinic_session')).toBe(false);
  });

  it('a key name with a NUL is a 400 page, and no key is made', async () => {
    const c = new Client(t.app);
    await c.signIn(EMAILS.ownerA);
    const before = await t.keys.list(t.clinicA.id);
    const res = await postRaw(c, '/dashboard/settings/api', '/dashboard/settings/api/keys', 'name=crm%00x&expires=never');
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain(UNUSABLE);
    expect(await t.keys.list(t.clinicA.id)).toEqual(before);
  });

  it.each(['/dashboard/settings/api?clinic=a%00b', '/dashboard/settings/api/keys/a%00b/revoke', '/dashboard/sign-in?lang=e%00s'])(
    'GET %s is a 400 page',
    async (url) => {
      const c = new Client(t.app);
      await c.signIn(EMAILS.superadmin);
      const res = await c.get(url);
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain(UNUSABLE);
    },
  );

  it('tab and line breaks are not refused by this check (the route decides)', async () => {
    const c = new Client(t.app);
    await c.get('/dashboard/sign-in');
    const res = await postRaw(c, '/dashboard/sign-in', '/dashboard/sign-in', `email=a%09b&password=x%0Ay`);
    expect(res.statusCode).toBe(401);
  });
});
