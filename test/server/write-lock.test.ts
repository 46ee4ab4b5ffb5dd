// SQLite's write lock held by another process (here a second connection to the same file, holding
// BEGIN IMMEDIATE as a long import does) against a real server process: the server never waits
// for the lock inside a statement, which would stop its event loop. /livez and the API's reads
// keep answering; a dashboard write waits for the lock asynchronously, answers the busy page
// when it does not get it within its bound (nothing written), and goes through once it is free.
// (PostgreSQL has no such database-wide lock: this is the embedded database's test.)
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { csrfToken } from '../../src/admin/csrf.js';
import { messages } from '../../src/admin/i18n.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { pause } from '../helpers/wait.js';

/** The busy page's title, in the clinic's language or the browser's. */
const BUSY_TITLES = [messages('en').writeBusyTitle, messages('es').writeBusyTitle];

interface Answer {
  status: number;
  body: string;
  location: string | null;
}

describe('the SQLite write lock held by another process', () => {
  let server: ServerProcess;
  let session = '';
  let locker: BetterSqlite3.Database | null = null;

  /** A dashboard request as the signed-in owner (cookies by hand: fetch keeps none). */
  async function dashboard(method: 'GET' | 'POST', p: string, form: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(`${server.baseUrl}${p}`, {
      method,
      redirect: 'manual',
      headers: {
        cookie: session,
        'accept-language': 'en',
        ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(method === 'POST' ? { body: new URLSearchParams({ ...form, _csrf: csrfToken(session.split('=')[1]!) }).toString() } : {}),
    });
    return { status: res.status, body: await res.text(), location: res.headers.get('location') };
  }

  // A key needs at least one permission ticked (the form refuses none).
  const createKey = (name: string) => dashboard('POST', '/dashboard/settings/api/keys', { name, expires: 'never', scopes: 'citas:read' });
  const createWebhook = (url: string) => dashboard('POST', '/dashboard/settings/api/webhooks', { url });

  // It waits for the lock as an import would: the server takes it for a moment now and then (its
  // periodic writes, such as the request log's), and a locker that gave up at once failed a CI run
  // with SQLITE_BUSY.
  function holdWriteLock(): BetterSqlite3.Database {
    const db = new BetterSqlite3(path.join(server.dataDir, 'clinic.db'), { timeout: 5_000 });
    db.exec('begin immediate');
    return db;
  }

  beforeAll(async () => {
    server = await startServerProcess({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    const password = /sign in as owner@demo\.clinic \/ (\S+)/.exec(server.output())![1]!;
    const form = await fetch(`${server.baseUrl}/dashboard/sign-in`);
    const presession = form.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const signedIn = await fetch(`${server.baseUrl}/dashboard/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: presession, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: 'owner@demo.clinic', password, _csrf: csrf }).toString(),
    });
    expect(signedIn.status).toBe(303);
    session = signedIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .find((c) => !c.endsWith('='))!;
    expect((await dashboard('GET', '/dashboard/settings/api')).status).toBe(200);
  });
  afterEach(() => {
    locker?.close();
    locker = null;
  });
  afterAll(async () => {
    await server?.kill();
  });

  it.each([
    ['an API key', () => createKey('made while locked'), 'made while locked', '/dashboard/settings/api'],
    [
      'a webhook endpoint',
      () => createWebhook('http://127.0.0.1:9/made-while-locked'),
      '127.0.0.1:9/made-while-locked',
      '/dashboard/settings/api/webhooks',
    ],
  ])(
    'creating %s: the busy page within its bound while /livez and the API answer, nothing written; done once the lock is free',
    async (_what, create, shown, list) => {
      locker = holdWriteLock();
      let answered: Answer | null = null;
      const write = create().then((a) => (answered = a));
      // The event loop keeps turning while the write waits for the lock: /livez and an API read
      // (WAL readers never wait for the writer) are answered before the write is.
      let livezBeforeWrite = 0;
      while (answered === null) {
        const livez = await fetch(`${server.baseUrl}/livez`);
        expect(livez.status).toBe(200);
        if (answered === null) livezBeforeWrite++;
      }
      const read = await fetch(`${server.baseUrl}/api/v1/citas?limit=1`, { headers: { authorization: `Bearer ${server.key}` } });
      expect(read.status).toBe(200);
      const busy = await write;
      // Still held: the answer came within the write's bound, not after the lock went.
      expect(locker.inTransaction).toBe(true);
      expect(livezBeforeWrite).toBeGreaterThan(0);
      expect([busy.status, BUSY_TITLES.some((title) => busy.body.includes(title))]).toEqual([503, true]);
      expect((await dashboard('GET', list)).body).not.toContain(shown);

      locker.exec('rollback');
      const done = await create();
      expect(done.status).toBe(303);
      expect((await dashboard('GET', list)).body).toContain(shown);
    },
  );

  it('a write that gets the lock within its bound waits for it and is done', async () => {
    locker = holdWriteLock();
    const write = createKey('waited for the lock');
    // Released while the write waits (its bound is seconds). A wait for a lock shows nowhere
    // outside the server process, so a time it surely takes to get there stands for it.
    await pause(500);
    locker.exec('rollback');
    expect((await write).status).toBe(303);
    expect((await dashboard('GET', '/dashboard/settings/api')).body).toContain('waited for the lock');
  });
});
