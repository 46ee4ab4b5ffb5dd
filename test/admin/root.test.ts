// `/` sends an owner who types the host to the dashboard (GET and HEAD); any other method on `/`
// is answered as on every non-API path that has no route for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboardApp, Client, EMAILS, type DashboardApp } from './helpers.js';

describe('GET / redirects to the dashboard', () => {
  let d: DashboardApp;
  beforeAll(async () => {
    d = await buildDashboardApp('sqlite');
  });
  afterAll(() => d.close());

  it('GET and HEAD / answer 302 to /dashboard, with or without a query string', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      for (const url of ['/', '/?utm_source=x']) {
        const res = await d.app.inject({ method, url });
        expect(res.statusCode, `${method} ${url}`).toBe(302);
        expect(res.headers.location).toBe('/dashboard');
        expect(res.headers['x-request-id']).toBeDefined();
      }
    }
  });

  it('followed in a browser-like client, it ends on the sign-in page, or on Settings > API when signed in', async () => {
    const c = new Client(d.app);
    const first = await c.get('/');
    const second = await c.get(first.headers.location as string);
    expect(second.headers.location).toMatch(/^\/dashboard\/sign-in/);
    expect((await c.get(second.headers.location as string)).statusCode).toBe(200);
    await c.signIn(EMAILS.ownerA);
    const again = await c.get((await c.get('/')).headers.location as string);
    expect(again.headers.location).toBe('/dashboard/settings/api');
  });

  it('other methods on / get what they get on any other non-API path without that method', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const) {
      const root = await d.app.inject({ method, url: '/' });
      const elsewhere = await d.app.inject({ method, url: '/no-such-page' });
      expect(root.statusCode, method).toBe(elsewhere.statusCode);
      expect(root.statusCode, method).toBe(404);
      expect(root.headers.location).toBeUndefined();
      expect(root.json().error.code).toBe('not_found');
    }
  });
});
