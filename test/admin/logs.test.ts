// Settings > API > Logs (inject, both databases, two clinics): the clinic's requests newest first,
// filtered by key, status class, endpoint and dates, in keyset pages; one request in detail with its
// error body and the clientas it disclosed; the client access record found by name; staff refused;
// a superadmin picks the clinic; no page shows another clinic's entries, even for a guessed request
// id or clienta id; one request found and addressed by its request id, never by the log's row
// number (numbered across clinics); Spanish and English.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importJsonLines } from '../../src/services/import.js';
import { addDays, todayIn } from '../../src/time.js';
import { dialects } from '../helpers/db.js';
import { buildDashboardApp, Client, EMAILS, type DashboardApp, signedInOwners } from './helpers.js';

const LOGS = '/dashboard/settings/api/logs';
const ANA = '0a000001-0000-4000-8000-000000000001';
const BERTA = '0a000001-0000-4000-8000-000000000002';
const ANA_B = '0b000001-0000-4000-8000-000000000001';

const clienta = (id: string, nombre: string) =>
  JSON.stringify({
    type: 'clienta',
    id,
    nombre,
    telefono: '+34600000001',
    vip: false,
    cliente_desde: '2025-01-01',
    created_at: '2025-01-01T10:00:00+01:00',
  }) + '\n';

/** The request ids of the rows of a page's table, in order. */
const logIds = (page: string) => [...page.matchAll(/<tr data-request-id="([^"]+)"/g)].map((m) => m[1]!);

describe.each(dialects())('dashboard request log on %s', (dialect) => {
  let t: DashboardApp;
  let owner: Client;
  let ownerB: Client;
  const keys: Record<string, { id: string; key: string }> = {};
  const logOf: Record<string, string> = {};

  async function api(key: string, url: string, headers: Record<string, string> = {}): Promise<string> {
    const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}`, ...headers } });
    return String(res.headers['x-request-id']);
  }

  /** The request id of a request, once its entry is written. */
  async function idOf(requestId: string): Promise<string> {
    await t.rt.requestLog!.flush();
    return requestId;
  }

  /** The log's own row number of a request (numbered across clinics: never shown). */
  async function rowOf(requestId: string): Promise<number> {
    const row = await t.database.db.selectFrom('request_log').select('id').where('request_id', '=', requestId).executeTakeFirstOrThrow();
    return Number(row.id);
  }

  beforeAll(async () => {
    t = await buildDashboardApp(dialect);
    await importJsonLines(t.database, t.clinicA.id, Readable.from([clienta(ANA, 'Ana Ruiz') + clienta(BERTA, 'Berta Gil')]));
    await importJsonLines(t.database, t.clinicB.id, Readable.from([clienta(ANA_B, 'Ana Bruma')]));
    for (const [name, clinicId] of [
      ['Zapier', t.clinicA.id],
      ['Web', t.clinicA.id],
      ['Other', t.clinicB.id],
    ] as const) {
      const k = await t.keys.create({ clinicId, name, expiresAt: null, createdBy: null });
      keys[name] = { id: k.id, key: k.key };
    }
    logOf.list = await idOf(await api(keys.Zapier!.key, '/api/v1/clientas'));
    logOf.bad = await idOf(await api(keys.Web!.key, '/api/v1/citas?desde=nope'));
    logOf.one = await idOf(await api(keys.Web!.key, `/api/v1/clientas/${ANA}`));
    logOf.other = await idOf(await api(keys.Other!.key, '/api/v1/clientas'));
    ({ owner, ownerB } = await signedInOwners(t.app));
  });
  afterAll(async () => {
    await t?.close();
  });

  it("lists the clinic's requests newest first, with key, request, status and records, in the clinic's language; never another clinic's", async () => {
    const res = await owner.get(LOGS);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Registro de peticiones');
    expect(logIds(res.body)).toEqual([logOf.one, logOf.bad, logOf.list]);
    // the request may wrap only between its pieces, never mid-token (views/wrap.ts)
    expect(res.body).toContain('<span class="path">GET /<wbr>api/<wbr>v1/<wbr>citas<wbr>?desde=<wbr>nope</span>');
    expect(res.body).toContain('invalid_parameter');
    expect(res.body).toMatch(/<span class="key-name">Zapier<\/span>/);
    expect(res.body).not.toContain('>Other<');
    expect(res.body).toContain('aria-current="page" class="active">Registro</a>');
    const b = await ownerB.get(LOGS);
    expect(b.body).toContain('Request log');
    expect(logIds(b.body)).toEqual([logOf.other]);
  });

  it('filters by key, status class, endpoint (exact or a prefix) and dates; a filter it cannot use is named and left out', async () => {
    const ids = async (q: string) => logIds((await owner.get(`${LOGS}?${q}`)).body);
    expect(await ids(`key=${keys.Web!.id}`)).toEqual([logOf.one, logOf.bad]);
    expect(await ids('status=4xx')).toEqual([logOf.bad]);
    expect(await ids('status=2xx')).toEqual([logOf.one, logOf.list]);
    expect(await ids('endpoint=/api/v1/clientas')).toEqual([logOf.list]);
    expect(await ids(`endpoint=${encodeURIComponent('/api/v1/clientas*')}`)).toEqual([logOf.one, logOf.list]);
    const today = todayIn(t.clinicA.timezone, t.clock.now);
    expect(await ids(`since=${today}&until=${today}`)).toEqual([logOf.one, logOf.bad, logOf.list]);
    expect(await ids(`since=${addDays(today, 1)}`)).toEqual([]);
    expect((await owner.get(`${LOGS}?since=${addDays(today, 1)}`)).body).toContain('id="no-requests"');
    // Another clinic's key as a filter: refused as unusable, not a way to read its entries.
    for (const q of [`key=${keys.Other!.id}`, 'since=2026-02-30', 'status=9xx', 'endpoint=citas']) {
      const page = (await owner.get(`${LOGS}?${q}`)).body;
      expect(page, q).toContain('id="bad-filter"');
      expect(logIds(page), q).toEqual([logOf.one, logOf.bad, logOf.list]);
    }
  });

  it('pages by keyset: older pages continue where the last ended, with no row twice', async () => {
    const more: string[] = [];
    for (let i = 0; i < 53; i++) more.push(await idOf(await api(keys.Zapier!.key, '/api/v1/me')));
    const all = [...more.reverse(), logOf.one, logOf.bad, logOf.list];
    const first = (await owner.get(LOGS)).body;
    expect(logIds(first)).toEqual(all.slice(0, 50));
    const next = /<a class="btn btn-secondary btn-sm" rel="next" href="([^"]+)"/.exec(first)![1]!.replace(/&amp;/g, '&');
    const second = (await owner.get(next)).body;
    expect(logIds(second)).toEqual(all.slice(50));
    expect(second).not.toContain('rel="next"');
    // With a filter the links keep it.
    const filtered = (await owner.get(`${LOGS}?endpoint=/api/v1/me`)).body;
    expect(/rel="next" href="([^"]+)"/.exec(filtered)![1]).toContain('endpoint=%2Fapi%2Fv1%2Fme');
  });

  it('one request in detail: every recorded field, the error body, the clientas disclosed; another clinic’s id is not found', async () => {
    const bad = await owner.get(`${LOGS}/${logOf.bad}`);
    expect(bad.statusCode).toBe(200);
    expect(bad.body).toContain('id="error-body"');
    expect(bad.body).toMatch(/&quot;code&quot;: &quot;invalid_parameter&quot;/);
    expect(bad.body).toContain('Web');
    expect(bad.body).toContain(keys.Web!.id);
    expect(bad.body.replaceAll('<wbr>', '')).toContain('desde=nope');
    expect(bad.body).toContain('id="none-disclosed"');
    const one = await owner.get(`${LOGS}/${logOf.one}`);
    expect(one.body).toContain(ANA);
    expect(one.body).not.toContain('id="error-body"');
    const list = await owner.get(`${LOGS}/${logOf.list}`);
    expect(list.body).toContain(ANA);
    expect(list.body).toContain(BERTA);
    // Guessing the other clinic's log id, both ways: not found, nothing of it shown.
    const guessed = await owner.get(`${LOGS}/${logOf.other}`);
    expect(guessed.statusCode).toBe(404);
    expect(guessed.body).not.toContain(ANA_B);
    expect((await ownerB.get(`${LOGS}/${logOf.bad}`)).statusCode).toBe(404);
    for (const id of ['0', 'abc', '99999999', '1e3', 'a%20b']) expect((await owner.get(`${LOGS}/${id}`)).statusCode, id).toBe(404);
    // The log's row numbers (counted across every clinic) address nothing, and no page shows them.
    const row = await rowOf(logOf.bad!);
    expect((await owner.get(`${LOGS}/${row}`)).statusCode).toBe(404);
    // (a link ends at the row number: the page's own links hold request ids, which may start with its digits)
    expect(bad.body).not.toMatch(new RegExp(`${LOGS}/${row}["?]`));
    expect((await owner.get(LOGS)).body).not.toMatch(/data-log-id|logs\/\d+["?]/);
  });

  it('finds one request by its request id (the search box), the clinic’s own only; a reused X-Request-Id shows each request', async () => {
    const ids = async (q: string) => logIds((await owner.get(`${LOGS}?${q}`)).body);
    expect(await ids(`request_id=${logOf.bad}`)).toEqual([logOf.bad]);
    expect((await owner.get(LOGS)).body).toContain('id="f-request-id"');
    // Another clinic's request id finds nothing; one that cannot be an id is named as unusable.
    expect(await ids(`request_id=${logOf.other}`)).toEqual([]);
    const odd = (await owner.get(`${LOGS}?request_id=${encodeURIComponent('a b')}`)).body;
    expect(odd).toContain('id="bad-filter"');
    // A client that sends its own X-Request-Id, twice: both requests on its page, newest first.
    const mine = 'my-trace.0001:x';
    await api(keys.Web!.key, '/api/v1/me', { 'x-request-id': mine });
    await api(keys.Web!.key, '/api/v1/citas?desde=nope', { 'x-request-id': mine });
    await idOf(mine);
    expect(await ids(`request_id=${mine}`)).toEqual([mine, mine]);
    const page = await owner.get(`${LOGS}/${mine}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="same-request-id"');
    expect(page.body).toContain('id="request-facts"');
    expect(page.body).toContain('id="request-facts-2"');
    expect(page.body).toContain('id="error-body"');
    expect(page.body).not.toContain('id="error-body-2"');
    expect(page.body).toContain(`href="${LOGS}?request_id=${encodeURIComponent(mine)}"`);
    // A request id of one request: no such note.
    expect((await owner.get(`${LOGS}/${logOf.one}`)).body).not.toContain('id="same-request-id"');
  });

  it("the client access record: found by name (the clinic's clientas only), every request that disclosed her, newest first", async () => {
    const found = await owner.get(`${LOGS}/access?q=ana`);
    expect(found.statusCode).toBe(200);
    expect(found.body).toContain('Ana Ruiz');
    expect(found.body).not.toContain('Ana Bruma');
    expect(found.body).toContain(`clienta=${ANA}`);
    expect((await owner.get(`${LOGS}/access?q=zzz`)).body).toContain('id="no-matches"');
    const ana = await owner.get(`${LOGS}/access?clienta=${ANA}`);
    expect(ana.body).toContain('Ana Ruiz');
    expect(logIds(ana.body)).toEqual([logOf.one, logOf.list]);
    expect(ana.body).toContain('>Web<');
    expect(ana.body.replaceAll('<wbr>', '')).toContain(`GET /api/v1/clientas/${ANA}`);
    const berta = await owner.get(`${LOGS}/access?clienta=${BERTA}`);
    expect(logIds(berta.body)).toEqual([logOf.list]);
    // Another clinic's clienta, by her id: neither her name nor any request.
    const other = await owner.get(`${LOGS}/access?clienta=${ANA_B}`);
    expect(other.statusCode).toBe(200);
    expect(other.body).not.toContain('Ana Bruma');
    expect(other.body).toContain('id="no-access"');
    expect(logIds(other.body)).toEqual([]);
    expect(logIds((await ownerB.get(`${LOGS}/access?clienta=${ANA}`)).body)).toEqual([]);
    expect((await owner.get(`${LOGS}/access?clienta=not-a-uuid`)).statusCode).toBe(404);
  });

  it('staff are refused and see no Logs tab; a superadmin chooses the clinic; signed out goes to sign-in', async () => {
    const staff = new Client(t.app, '203.0.113.9');
    await staff.signIn(EMAILS.staffA);
    for (const url of [LOGS, `${LOGS}/${logOf.list}`, `${LOGS}/access?clienta=${ANA}`]) {
      const res = await staff.get(url);
      expect(res.statusCode, url).toBe(403);
      expect(res.body).toContain('Solo la propietaria de la clínica o un superadministrador');
      expect(res.body).not.toContain(ANA);
    }
    expect((await staff.get('/dashboard/settings/api')).body).not.toContain(LOGS);
    expect((await owner.get('/dashboard/settings/api')).body).toContain(LOGS);

    const root = new Client(t.app, '203.0.113.10');
    await root.signIn(EMAILS.superadmin);
    const pick = await root.get(LOGS);
    expect(pick.statusCode).toBe(303);
    expect(pick.headers.location).toBe('/dashboard/settings/api');
    const b = await root.get(`${LOGS}?clinic=${t.clinicB.id}`);
    expect(logIds(b.body)).toEqual([logOf.other]);
    expect(b.body).toContain(`href="${LOGS}/${logOf.other}?clinic=${t.clinicB.id}"`);
    expect((await root.get(`${LOGS}/${logOf.other}?clinic=${t.clinicA.id}`)).statusCode).toBe(404);

    const anon = new Client(t.app, '203.0.113.11');
    const res = await anon.get(LOGS);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toMatch(/^\/dashboard\/sign-in/);
  });
});
