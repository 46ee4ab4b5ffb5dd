// The dashboard's small pure parts: escaping, language negotiation, CSRF tokens, sealed flashes.
import { describe, expect, it } from 'vitest';
import { csrfToken, csrfValid } from '../../src/admin/csrf.js';
import { html, trusted } from '../../src/admin/html.js';
import { Formatter, messages, negotiateLang } from '../../src/admin/i18n.js';
import { cookieOptions } from '../../src/admin/session.js';
import { newToken, openFlash, sealFlash } from '../../src/services/sessions.js';
import { Semaphore } from '../../src/admin/throttle.js';

describe('html templates', () => {
  it('escapes every interpolated string, in text and in attributes', () => {
    const name = `<img src=x onerror="alert('x')">&\``;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;&#96;">&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;&#96;</p>',
    );
  });

  it('nests templates and lists without double escaping, and drops null, undefined and false', () => {
    const items = ['a<b', 'c'].map((s) => html`<li>${s}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value).toBe('<ul><li>a&lt;b</li><li>c</li></ul>0');
    expect(html`${trusted('<b>ok</b>')}`.value).toBe('<b>ok</b>');
  });
});

describe('language', () => {
  it('is Spanish unless the browser prefers English', () => {
    expect(negotiateLang(undefined)).toBe('es');
    expect(negotiateLang('fr-FR,fr;q=0.9')).toBe('es');
    expect(negotiateLang('en-US,en;q=0.9')).toBe('en');
    expect(negotiateLang('es;q=0.4,en;q=0.8')).toBe('en');
    expect(negotiateLang('de, es-MX;q=0.7, en;q=0.5')).toBe('es');
    expect(negotiateLang('en;q=0')).toBe('es');
  });

  it('has every message in both languages', () => {
    const walk = (o: object): string[] => Object.entries(o).flatMap(([k, v]) => (v && typeof v === 'object' ? walk(v).map((s) => `${k}.${s}`) : [k]));
    expect(walk(messages('es')).sort()).toEqual(walk(messages('en')).sort());
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
    expect(openFlash(token, sealed.slice(0, -2) + 'AA')).toBeNull();
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
    await expect(sem.run(async () => { throw new Error('boom'); }, 'busy')).rejects.toThrow('boom');
    expect(sem.inUse).toBe(0);
  });
});
