// The dashboard's small pure parts: escaping, language negotiation and precedence, plurals, the
// language switch's way back, CSRF tokens, sealed flashes. (The catalogues: catalogues.test.ts.)
import { describe, expect, it } from 'vitest';
import { csrfToken, csrfValid } from '../../src/admin/csrf.js';
import { html, trusted } from '../../src/admin/html.js';
import { count, countIn, Formatter } from '../../src/admin/format.js';
import { messages } from '../../src/admin/i18n.js';
import type { Plural } from '../../src/admin/locales/messages.js';
import { negotiateLang, preferredLang, resolveLang } from '../../src/admin/negotiate.js';
import { returnPath } from '../../src/admin/language.js';
import { cookieOptions } from '../../src/admin/session.js';
import { newToken, openFlash, sealFlash } from '../../src/services/sessions.js';
import { Semaphore } from '../../src/admin/throttle.js';

describe('html templates', () => {
  it('escapes every interpolated string, in text and in attributes', () => {
    const name = `<img src=x onerror="alert('x')">&\``;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;&#96;">&lt;img src=x ' +
        'onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;&#96;</p>',
    );
  });

  it('nests templates and lists without double escaping, and drops null, undefined and false', () => {
    const items = ['a<b', 'c'].map((s) => html`<li>${s}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value).toBe('<ul><li>a&lt;b</li><li>c</li></ul>0');
    expect(html`${trusted('<b>ok</b>')}`.value).toBe('<b>ok</b>');
  });
});

describe('language', () => {
  it('takes the browser’s preferred language among Spanish and English, or none', () => {
    expect(negotiateLang(undefined)).toBeNull();
    expect(negotiateLang('fr-FR,fr;q=0.9')).toBeNull();
    expect(negotiateLang('en-US,en;q=0.9')).toBe('en');
    expect(negotiateLang('es;q=0.4,en;q=0.8')).toBe('en');
    expect(negotiateLang('de, es-MX;q=0.7, en;q=0.5')).toBe('es');
    expect(negotiateLang('en;q=0')).toBeNull();
    expect(resolveLang({ acceptLanguage: 'fr-FR,fr;q=0.9' })).toBe('es');
  });

  it('takes the page’s ?lang=, then the person’s choice, then the clinic’s, then the browser’s, then Spanish', () => {
    const en = 'en-GB,en;q=0.9';
    expect(resolveLang({ page: 'es', chosen: 'en', clinic: 'en', acceptLanguage: en })).toBe('es');
    expect(resolveLang({ page: null, chosen: 'en', clinic: 'es', acceptLanguage: 'es' })).toBe('en');
    expect(resolveLang({ chosen: 'es', clinic: 'en', acceptLanguage: en })).toBe('es');
    expect(resolveLang({ chosen: null, clinic: 'en', acceptLanguage: 'es' })).toBe('en');
    expect(resolveLang({ chosen: null, clinic: null, acceptLanguage: en })).toBe('en');
    expect(resolveLang({})).toBe('es');
  });

  it('puts the session’s language after the person’s choice and before the clinic’s', () => {
    expect(resolveLang({ chosen: null, session: 'en', clinic: 'es', acceptLanguage: 'es' })).toBe('en');
    expect(resolveLang({ chosen: 'es', session: 'en', clinic: 'en' })).toBe('es');
    expect(resolveLang({ page: 'es', session: 'en' })).toBe('es');
    expect(resolveLang({ session: null, clinic: 'en', acceptLanguage: 'es' })).toBe('en');
  });

  it('tells a language someone asked for from the default, which a session does not keep', () => {
    expect(preferredLang({ acceptLanguage: 'en-GB,en;q=0.9' })).toBe('en');
    expect(preferredLang({ acceptLanguage: 'es-ES' })).toBe('es');
    expect(preferredLang({ page: 'es', acceptLanguage: 'en' })).toBe('es');
    expect(preferredLang({ chosen: 'en', acceptLanguage: 'es' })).toBe('en');
    expect(preferredLang({ acceptLanguage: 'fr-FR,fr;q=0.9' })).toBeNull();
    expect(preferredLang({})).toBeNull();
  });

  it('formats in the clinic’s zone and language', () => {
    const now = Date.UTC(2026, 2, 28, 23, 30);
    const es = new Formatter(messages('es'), 'Europe/Madrid', now);
    expect(es.dateOf(now / 1000)).toBe('29 mar 2026');
    expect(es.shortDay('2026-03-29')).toBe('dom 29');
    expect(es.ago(now / 1000 - 300)).toBe('hace 5 minutos');
    const en = new Formatter(messages('en'), 'America/Mexico_City', now);
    expect(en.dateOf(now / 1000)).toBe('28 Mar 2026');
    expect(en.ago(now / 1000 - 86_400)).toBe('yesterday');
  });
});

describe('plurals', () => {
  const es = messages('es');
  const en = messages('en');
  // Intl's own grouping: Spanish leaves 4-digit numbers ungrouped, English does not.
  const cases: [number, string, string][] = [
    [0, '0', '0'],
    [1, '1', '1'],
    [2, '2', '2'],
    [1234, '1234', '1,234'],
    [1_234_567, '1.234.567', '1,234,567'],
  ];

  it('count requests, successful requests, errors and repeats in Spanish', () => {
    const got = cases.map(([n]) => [
      count(es, es.requests, n),
      count(es, es.okRequests, n),
      count(es, es.errorsCount, n),
      count(es, es.errorTimes, n),
    ]);
    expect(got).toEqual([
      ['0 peticiones', '0 correctas', '0 con error', '0 veces'],
      ['1 petición', '1 correcta', '1 con error', '1 vez'],
      ['2 peticiones', '2 correctas', '2 con error', '2 veces'],
      ['1234 peticiones', '1234 correctas', '1234 con error', '1234 veces'],
      ['1.234.567 peticiones', '1.234.567 correctas', '1.234.567 con error', '1.234.567 veces'],
    ]);
  });

  it('count requests, successful requests, errors and repeats in English', () => {
    const got = cases.map(([n]) => [
      count(en, en.requests, n),
      count(en, en.okRequests, n),
      count(en, en.errorsCount, n),
      count(en, en.errorTimes, n),
    ]);
    expect(got).toEqual([
      ['0 requests', '0 successful requests', '0 with errors', '0 times'],
      ['1 request', '1 successful request', '1 with an error', '1 time'],
      ['2 requests', '2 successful requests', '2 with errors', '2 times'],
      ['1,234 requests', '1,234 successful requests', '1,234 with errors', '1,234 times'],
      ['1,234,567 requests', '1,234,567 successful requests', '1,234,567 with errors', '1,234,567 times'],
    ]);
  });

  it('count minutes to wait and days of usage in both languages', () => {
    expect([0, 1, 2, 1500].map((n) => count(es, es.throttled, n).match(/espera (.*?) y/)![1])).toEqual([
      '0 minutos',
      '1 minuto',
      '2 minutos',
      '1500 minutos',
    ]);
    expect([0, 1, 2, 1500].map((n) => count(en, en.throttled, n).match(/wait (.*?) and/)![1])).toEqual([
      '0 minutes',
      '1 minute',
      '2 minutes',
      '1,500 minutes',
    ]);
    expect([1, 7, 30].map((n) => count(es, es.usageTitle, n))).toEqual([
      'Uso en el último día',
      'Uso en los últimos 7 días',
      'Uso en los últimos 30 días',
    ]);
    expect([1, 7, 30].map((n) => count(en, en.usageTitle, n))).toEqual([
      'Usage in the last day',
      'Usage in the last 7 days',
      'Usage in the last 30 days',
    ]);
    expect(count(es, es.idleKeys, 1)).toBe('Sin peticiones en el último día:');
    expect(count(en, en.noUsageAtAll, 7)).toBe('No key has made requests in the last 7 days.');
  });

  it('build the screen-reader text of a day from counted parts', () => {
    const fes = new Formatter(es, 'Europe/Madrid', 0);
    const fen = new Formatter(en, 'Europe/Madrid', 0);
    expect(es.dayBar(fes.longDayOf('2026-03-29'), fes.count(es.okRequests, 1), fes.count(es.errorsCount, 0))).toBe(
      'domingo, 29 de marzo: 1 correcta, 0 con error',
    );
    expect(en.dayBar(fen.longDayOf('2026-03-29'), fen.count(en.okRequests, 1), fen.count(en.errorsCount, 1))).toBe(
      'Sunday 29 March: 1 successful request, 1 with an error',
    );
  });

  it('choose the form with Intl.PluralRules, so other rules need only their forms', () => {
    // Polish has "few" and "many"; a language that lists them gets them, and a category it does
    // not list (Spanish "many", for a million) falls back to "other".
    const pl: Plural = { one: '{n} plik', few: '{n} pliki', many: '{n} plików', other: '{n} pliku' };
    expect([1, 2, 5, 22, 25].map((n) => countIn('pl-PL', pl, n))).toEqual(['1 plik', '2 pliki', '5 plików', '22 pliki', '25 plików']);
    expect(new Intl.PluralRules('es-ES').select(1_000_000)).toBe('many');
    expect(count(es, es.requests, 1_000_000)).toBe('1.000.000 peticiones');
  });

  it('join names with the language’s "or"', () => {
    expect(new Formatter(es, 'UTC', 0).or(['ana@uno.example', 'olga@uno.example'])).toBe('ana@uno.example u olga@uno.example');
    expect(new Formatter(es, 'UTC', 0).or(['Pro Total', 'Enterprise', 'Premium'])).toBe('Pro Total, Enterprise o Premium');
    expect(new Formatter(en, 'UTC', 0).or(['Pro Total', 'Enterprise', 'Premium'])).toBe('Pro Total, Enterprise or Premium');
  });
});

describe('the language switch’s way back', () => {
  it('returns to the dashboard page it came from, without its ?lang=', () => {
    expect(returnPath('/dashboard/settings/api?clinic=abc')).toBe('/dashboard/settings/api?clinic=abc');
    expect(returnPath('/dashboard/sign-in?signed_out=1&lang=en')).toBe('/dashboard/sign-in?signed_out=1');
    expect(returnPath('/dashboard/sign-in?lang=es')).toBe('/dashboard/sign-in');
    expect(returnPath('/dashboard')).toBe('/dashboard');
  });

  it('never leaves the dashboard (no open redirect)', () => {
    for (const next of [
      '',
      'https://evil.example/dashboard',
      '//evil.example/dashboard',
      '/api/v1/citas',
      '/dashboardx',
      '/dashboard/../api/v1/citas',
      '/dashboard/%2e%2e/api',
      'javascript:alert(1)',
      '/dashboard/language',
      `/dashboard/${'x'.repeat(3000)}`,
    ]) {
      const back = returnPath(next);
      expect(back === '/dashboard' || back.startsWith('/dashboard/'), next).toBe(true);
      expect(back, next).not.toMatch(/^\/\/|evil|\/api/);
    }
    expect(returnPath('/dashboard\\evil.example')).toBe('/dashboard/evil.example');
  });
});

describe('CSRF tokens', () => {
  it('fit only the secret they were made from', () => {
    const a = newToken();
    const b = newToken();
    expect(csrfValid(a, csrfToken(a))).toBe(true);
    expect(csrfValid(b, csrfToken(a))).toBe(false);
    expect(csrfValid(a, '')).toBe(false);
    expect(csrfValid(a, undefined)).toBe(false);
    expect(csrfValid(null, csrfToken(a))).toBe(false);
    expect(csrfValid(a, [csrfToken(a)])).toBe(false);
    expect(csrfToken(a)).not.toContain(a);
  });
});

describe('sealed flash messages', () => {
  it('open only with the session token they were sealed for', () => {
    const token = newToken();
    const flash = { kind: 'created' as const, clinicId: 'c', keyId: 'k', name: 'Web', key: 'svc_secretsecretsecret', expiresAt: null };
    const sealed = sealFlash(token, flash);
    expect(sealed).not.toContain('secret');
    expect(openFlash(token, sealed)).toEqual(flash);
    expect(openFlash(newToken(), sealed)).toBeNull();
    // One bit of the ciphertext flipped (not a fixed text pasted over the end, which is already
    // that text in one run out of a thousand and made this test flaky).
    const tampered = Buffer.from(sealed, 'base64url');
    tampered[tampered.length - 1]! ^= 1;
    expect(openFlash(token, tampered.toString('base64url'))).toBeNull();
    expect(sealFlash(token, flash)).not.toBe(sealed); // fresh IV each time
  });
});

describe('cookie options', () => {
  it('map cookieSecure to @fastify/cookie’s secure flag', () => {
    expect(cookieOptions('auto')).toEqual({ path: '/dashboard', httpOnly: true, sameSite: 'lax', secure: 'auto' });
    expect(cookieOptions('always').secure).toBe(true);
    expect(cookieOptions('never').secure).toBe(false);
  });
});

describe('semaphore', () => {
  it('runs at most `max` at once, queues up to `maxWaiting`, and turns the rest away at once', async () => {
    const sem = new Semaphore(2, 1);
    let running = 0;
    let peak = 0;
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const job = async () => {
      running++;
      peak = Math.max(peak, running);
      await gate;
      running--;
      return 'done';
    };
    const all = Promise.all([1, 2, 3, 4, 5].map(() => sem.run(job, 'busy')));
    await new Promise((r) => setImmediate(r));
    expect(running).toBe(2);
    expect(sem.inUse).toBe(2);
    open();
    expect((await all).sort()).toEqual(['busy', 'busy', 'done', 'done', 'done']);
    expect(peak).toBe(2);
    expect(sem.inUse).toBe(0);
    // a failing job frees its slot too
    await expect(
      sem.run(async () => {
        throw new Error('boom');
      }, 'busy'),
    ).rejects.toThrow('boom');
    expect(sem.inUse).toBe(0);
  });
});
