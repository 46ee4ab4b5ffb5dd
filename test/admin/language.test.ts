// The language switch: the choice is stored in a validated, long-lived, Path-scoped cookie and
// honoured on every dashboard page before the clinic's language and Accept-Language; `?lang=`
// still sets one page's language; the language the sign-in page was in (when someone asked for it)
// is kept by the session. (No database logic of its own: SQLite only keeps it quick.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboardApp, Client, cookieLine, csrfOf, EMAILS, PASSWORD, type DashboardApp } from './helpers.js';

const ES = { 'accept-language': 'es-ES,es;q=0.9' };
const EN = { 'accept-language': 'en-GB,en;q=0.9' };

/** The sign-in form's hidden `lang` (the address's ?lang=, carried into the session), or null. */
const hiddenLang = (page: string) => /<input type="hidden" name="lang" value="([^"]*)">/.exec(page)?.[1] ?? null;

/** The hidden `next` of the language switch on a page. */
const nextOf = (page: string) =>
  /action="\/dashboard\/language">[\s\S]*?name="next" value="([^"]*)"/.exec(page)?.[1]?.replaceAll('&amp;', '&');

describe('dashboard language switch', () => {
  let t: DashboardApp;
  beforeAll(async () => {
    t = await buildDashboardApp('sqlite');
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Chooses `lang` with the switch on the page at `from`, as the browser would submit it. */
  async function choose(c: Client, from: string, lang: string, headers: Record<string, string> = ES) {
    const page = await c.get(from, headers);
    const next = nextOf(page.body);
    expect(next, 'the page has a language switch').toBeDefined();
    return c.post('/dashboard/language', { _csrf: csrfOf(page.body), next: next!, lang }, headers);
  }

  it('shows the switch on the sign-in page: every language by its own name, the current one marked', async () => {
    const page = (await new Client(t.app).get('/dashboard/sign-in', ES)).body;
    expect(page).toContain('<nav class="lang-switch" aria-label="Idioma">');
    expect(page).toContain('<span class="lang-current" lang="es" aria-current="true">Español</span>');
    expect(page).toContain('<button type="submit" class="btn-link" name="lang" value="en" lang="en">English</button>');
    expect(page).not.toMatch(/<script(?![^>]*src=)/); // no inline script (the CSP forbids it)
  });

  it('stores the choice in a long-lived, HttpOnly, SameSite=Lax cookie for /dashboard, and comes back to the page', async () => {
    const c = new Client(t.app);
    const res = await choose(c, '/dashboard/sign-in', 'en');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/dashboard/sign-in');
    const line = cookieLine(res, 'clinic_lang')!;
    expect(line).toMatch(/^clinic_lang=en;/);
    expect(line).toMatch(/Max-Age=31536000/);
    expect(line).toMatch(/Path=\/dashboard(;|$)/);
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Lax/);
    // honoured over the browser's Spanish, on every visit
    const again = await c.get('/dashboard/sign-in', ES);
    expect(again.body).toContain('<html lang="en">');
    expect(again.body).toContain('<span class="lang-current" lang="en" aria-current="true">English</span>');
    expect((await c.get('/dashboard/no-such-page', ES)).body).toContain('Page not found');
  });

  it('keeps the choice after sign-in, before the clinic’s language, on every page, and after sign-out', async () => {
    const c = new Client(t.app);
    await choose(c, '/dashboard/sign-in', 'en');
    const signIn = await c.signIn(EMAILS.ownerA); // Clínica Uno speaks Spanish
    expect(signIn.headers.location).toBe('/dashboard/settings/api');
    const list = await c.get('/dashboard/settings/api', ES);
    expect(list.body).toContain('<html lang="en">');
    expect(list.body).toContain('<h1>API keys</h1>');
    expect(list.body).toContain('<span class="lang-current" lang="en" aria-current="true">English</span>');
    expect(nextOf(list.body)).toBe('/dashboard/settings/api');
    // dates follow the person's language; the time zone stays the clinic's
    expect(list.body).toContain('Times are shown in the clinic’s time zone, Europe/Madrid.');
    expect((await c.get('/dashboard/no-such-page', ES)).body).toContain('<h1 class="h-alert">Page not found</h1>');

    // a signed-in page's switch works too (the session is its CSRF secret), and the list comes back in Spanish
    const back = await choose(c, '/dashboard/settings/api', 'es');
    expect(back.headers.location).toBe('/dashboard/settings/api');
    expect((await c.get('/dashboard/settings/api', EN)).body).toContain('<h1>Claves de API</h1>');

    const out = await c.post('/dashboard/sign-out', { _csrf: csrfOf(c.page) }, EN);
    expect(out.headers.location).toBe('/dashboard/sign-in?signed_out=1&lang=es');
    expect((await c.get('/dashboard/sign-in', EN)).body).toContain('<html lang="es">');
  });

  // From here each client signs in from its own address: sign-ins are throttled per e-mail and IP.
  it('without a choice, keeps the language the browser’s sign-in page was in after signing in, not the clinic’s', async () => {
    const c = new Client(t.app, '203.0.113.21');
    const form = await c.get('/dashboard/sign-in', EN); // an English browser
    expect(form.body).toContain('<html lang="en">');
    expect(hiddenLang(form.body)).toBeNull(); // nothing to carry but the browser's own preference
    const res = await c.post('/dashboard/sign-in', { _csrf: csrfOf(form.body), email: EMAILS.ownerA, password: PASSWORD }, EN);
    expect(res.headers.location).toBe('/dashboard/settings/api');
    // Clínica Uno speaks Spanish; the person saw English and keeps it, on every page of the session
    const list = await c.get('/dashboard/settings/api', EN);
    expect(list.body).toContain('<html lang="en">');
    expect(list.body).toContain('<h1>API keys</h1>');
    expect(list.body).toContain('<span class="lang-current" lang="en" aria-current="true">English</span>');
    expect((await c.get('/dashboard/settings/api/webhooks')).body).toContain('<html lang="en">'); // the session's, not the browser's
    expect((await c.get('/dashboard/no-such-page', ES)).body).toContain('<h1 class="h-alert">Page not found</h1>');
    expect(c.cookies.has('clinic_lang')).toBe(false); // a session's language, not a stored choice

    // switching after signing in wins over it
    await choose(c, '/dashboard/settings/api', 'es', EN);
    expect((await c.get('/dashboard/settings/api', EN)).body).toContain('<h1>Claves de API</h1>');
  });

  it('keeps the sign-in page’s ?lang= after signing in, and signs out in the session’s language', async () => {
    const c = new Client(t.app, '203.0.113.22');
    const form = await c.get('/dashboard/sign-in?lang=en', ES); // a Spanish browser, following an English link
    expect(form.body).toContain('<html lang="en">');
    expect(hiddenLang(form.body)).toBe('en');
    await c.post('/dashboard/sign-in', { _csrf: csrfOf(form.body), lang: 'en', email: EMAILS.ownerA, password: PASSWORD }, ES);
    const list = await c.get('/dashboard/settings/api', ES);
    expect(list.body).toContain('<html lang="en">');
    const out = await c.post('/dashboard/sign-out', { _csrf: csrfOf(list.body) }, ES);
    expect(out.headers.location).toBe('/dashboard/sign-in?signed_out=1&lang=en');
    // the next session starts from the (Spanish) browser again: the link's language was not stored
    const again = await c.get('/dashboard/sign-in', ES);
    expect(again.body).toContain('<html lang="es">');
    await c.post('/dashboard/sign-in', { _csrf: csrfOf(again.body), email: EMAILS.ownerA, password: PASSWORD }, ES);
    expect((await c.get('/dashboard/settings/api', EN)).body).toContain('<html lang="es">');
    expect(c.cookies.has('clinic_lang')).toBe(false);
  });

  it('without a language anyone asked for (the browser names neither), signed-in pages follow the clinic’s', async () => {
    const browsers: Record<string, string>[] = [{ 'accept-language': 'fr-FR,fr;q=0.9' }, {}];
    for (const headers of browsers) {
      const c = new Client(t.app, '203.0.113.23');
      const form = await c.get('/dashboard/sign-in', headers);
      expect(form.body).toContain('<html lang="es">'); // the default
      await c.post('/dashboard/sign-in', { _csrf: csrfOf(form.body), email: EMAILS.ownerB, password: PASSWORD }, headers);
      expect((await c.get('/dashboard/settings/api', headers)).body).toContain('<html lang="en">'); // Clinic Two speaks English
    }
  });

  it('keeps a superadmin’s sign-in language in every clinic, and follows the clinic in view when there is none', async () => {
    const english = new Client(t.app, '203.0.113.24');
    const form = await english.get('/dashboard/sign-in', EN);
    await english.post('/dashboard/sign-in', { _csrf: csrfOf(form.body), email: EMAILS.superadmin, password: PASSWORD }, EN);
    expect((await english.get(`/dashboard/settings/api?clinic=${t.clinicA.id}`, EN)).body).toContain('<html lang="en">');
    const none = new Client(t.app, '203.0.113.25');
    await none.signIn(EMAILS.superadmin);
    expect((await none.get(`/dashboard/settings/api?clinic=${t.clinicA.id}`)).body).toContain('<html lang="es">');
    expect((await none.get(`/dashboard/settings/api?clinic=${t.clinicB.id}`)).body).toContain('<html lang="en">');
  });

  it('lets a superadmin choose, and comes back to the clinic in view', async () => {
    const c = new Client(t.app);
    await c.signIn(EMAILS.superadmin);
    const url = `/dashboard/settings/api?clinic=${t.clinicB.id}`; // an English clinic
    const res = await choose(c, url, 'es');
    expect(res.headers.location).toBe(url);
    const page = (await c.get(url, EN)).body;
    expect(page).toContain('<html lang="es">');
    expect(page).toContain('Clinic Two');
  });

  it('still honours ?lang= for that page only, and the switch drops it on the way back', async () => {
    const c = new Client(t.app);
    await choose(c, '/dashboard/sign-in', 'en');
    const page = await c.get('/dashboard/sign-in?lang=es', EN);
    expect(page.body).toContain('<html lang="es">');
    expect(nextOf(page.body)).toBe('/dashboard/sign-in?lang=es');
    expect((await c.get('/dashboard/sign-in', ES)).body).toContain('<html lang="en">'); // the choice is unchanged
    const res = await choose(c, '/dashboard/sign-in?signed_out=1&lang=en', 'es');
    expect(res.headers.location).toBe('/dashboard/sign-in?signed_out=1');
    expect((await c.get(res.headers.location as string, EN)).body).toContain('<html lang="es">');
  });

  it('refuses a language it does not speak, and sets nothing', async () => {
    for (const lang of ['fr', 'EN', '', 'en; Path=/']) {
      const c = new Client(t.app);
      const res = await choose(c, '/dashboard/sign-in', lang);
      expect(res.statusCode, lang).toBe(400);
      expect(cookieLine(res, 'clinic_lang'), lang).toBeUndefined();
      expect(res.body).toContain('No se ha podido leer la petición');
    }
  });

  it('refuses a choice without the form’s CSRF token, or sent from another site', async () => {
    const c = new Client(t.app);
    const page = await c.get('/dashboard/sign-in', ES);
    const missing = await c.post('/dashboard/language', { lang: 'en', next: '/dashboard/sign-in' });
    expect(missing.statusCode).toBe(403);
    const crossSite = await c.post(
      '/dashboard/language',
      { _csrf: csrfOf(page.body), lang: 'en', next: '/dashboard/sign-in' },
      { 'sec-fetch-site': 'cross-site' },
    );
    expect(crossSite.statusCode).toBe(403);
    expect(c.cookies.has('clinic_lang')).toBe(false);
  });

  it('never sends the browser off the dashboard', async () => {
    const c = new Client(t.app);
    const page = await c.get('/dashboard/sign-in', ES);
    for (const next of ['https://evil.example/', '//evil.example/dashboard', '/api/v1/citas', '/dashboard/../api/v1/citas']) {
      const res = await c.post('/dashboard/language', { _csrf: csrfOf(page.body), lang: 'en', next });
      expect(res.statusCode, next).toBe(303);
      expect(res.headers.location, next).toBe('/dashboard');
    }
  });

  it('ignores and removes a stored value it does not know', async () => {
    for (const bad of ['fr', 'EN', 'en-GB', '%00']) {
      const c = new Client(t.app);
      c.cookies.set('clinic_lang', bad);
      const res = await c.get('/dashboard/sign-in', EN);
      expect(res.body, bad).toContain('<html lang="en">'); // the browser's language, not the cookie's
      const cleared = cookieLine(res, 'clinic_lang')!;
      expect(cleared, bad).toMatch(/^clinic_lang=;/);
      expect(cleared, bad).toMatch(/Path=\/dashboard/);
      expect(c.cookies.has('clinic_lang')).toBe(false);
      c.cookies.set('clinic_lang', bad);
      await c.signIn(EMAILS.ownerB); // an English clinic: its language, whatever the browser says
      expect((await c.get('/dashboard/settings/api', ES)).body, bad).toContain('<html lang="en">');
    }
  });

  it('counts in the page’s language: singular and plural, with the locale’s grouping', async () => {
    const k = await t.keys.create({ clinicId: t.clinicB.id, name: 'One call', expiresAt: null, createdBy: null });
    expect((await t.app.inject({ url: '/api/v1/citas', headers: { authorization: `Bearer ${k.key}` } })).statusCode).toBe(200);
    const c = new Client(t.app);
    await c.signIn(EMAILS.ownerB);
    const en = (await c.get('/dashboard/settings/api', EN)).body;
    expect(en).toContain('<strong>1 request</strong>');
    expect(en).toContain(': 1 successful request, 0 with errors</span>');
    expect(en).toContain(': 0 successful requests, 0 with errors</span>');
    expect(en).toContain('Usage in the last 7 days');
    await choose(c, '/dashboard/settings/api', 'es');
    const es = (await c.get('/dashboard/settings/api', EN)).body;
    expect(es).toContain('<strong>1 petición</strong>');
    expect(es).toContain(': 1 correcta, 0 con error</span>');
    expect(es).not.toMatch(/\b1 peticiones|\b1 correctas/);
  });
});
