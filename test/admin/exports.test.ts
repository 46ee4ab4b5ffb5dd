// The dashboard's exports (inject, both databases, two clinics): Settings > API > Export asks for
// the whole clinic's export, which the worker makes in the background (its pass run here) and
// stores in parts; the page shows its progress and then a link that only a signed-in owner of
// that clinic can use, for 24 hours, after which the export and its parts are deleted. One whose
// instance stopped midway is taken up again once its lease runs out. On a client's page of the
// access record, the owner's button downloads her data as a ZIP, with the CSRF token, and for
// nobody else.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importJsonLines } from '../../src/services/import.js';
import { dialects } from '../helpers/db.js';
import { readZip } from '../helpers/zip.js';
import { buildDashboardApp, Client, csrfOf, EMAILS, signedInOwners, type DashboardApp } from './helpers.js';

const EXPORT = '/dashboard/settings/api/export';
const ACCESS = '/dashboard/settings/api/logs/access';
const ANA = '0a000002-0000-4000-8000-000000000001';
const ANA_B = '0b000002-0000-4000-8000-000000000001';

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

const exportIds = (page: string) => [...page.matchAll(/<tr data-export-id="([^"]+)" data-state="([a-z]+)"/g)].map((m) => [m[1]!, m[2]!]);
const fileLink = (page: string) => /href="(\/dashboard\/settings\/api\/export\/[0-9a-f-]+\/file)"/.exec(page)?.[1] ?? null;

describe.each(dialects())('dashboard exports on %s', (dialect) => {
  let t: DashboardApp;
  let owner: Client;
  let ownerB: Client;

  beforeAll(async () => {
    t = await buildDashboardApp(dialect);
    await importJsonLines(t.database, t.clinicA.id, Readable.from([clienta(ANA, 'Ana Exportada')]));
    await importJsonLines(t.database, t.clinicB.id, Readable.from([clienta(ANA_B, 'Ana Ajena')]));
    ({ owner, ownerB } = await signedInOwners(t.app));
  });
  afterAll(() => t?.close());

  it('makes the whole clinic export in the background and offers it to its owner for 24 hours', async () => {
    const empty = await owner.get(EXPORT);
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('id="no-exports"');
    // Without the form's CSRF token, nothing is asked for.
    expect((await owner.post(EXPORT, {})).statusCode).toBe(403);
    expect((await t.rt.exports.list(t.clinicA.id)).length).toBe(0);

    const asked = await owner.submit(EXPORT, EXPORT, {});
    expect(asked.statusCode).toBe(303);
    // Asked twice: still one export.
    await owner.submit(EXPORT, EXPORT, {});
    const waiting = await owner.get(EXPORT);
    expect(exportIds(waiting.body)).toEqual([[expect.any(String), 'queued']]);
    expect(waiting.body).toContain('<meta http-equiv="refresh"');

    await t.rt.exports.pass();
    const ready = await owner.get(EXPORT);
    expect(exportIds(ready.body)).toEqual([[expect.any(String), 'done']]);
    expect(ready.body).not.toContain('http-equiv="refresh"');
    const link = fileLink(ready.body)!;
    expect(link).not.toBeNull();

    const file = await owner.get(link);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('application/zip');
    expect(file.headers['content-disposition']).toMatch(/^attachment; filename="clinica-\d{4}-\d{2}-\d{2}\.zip"$/);
    const files = await readZip(file.rawPayload);
    const lines = files.get('clinica.jsonl')!.toString();
    expect(lines).toContain(ANA);
    expect(lines).not.toContain(ANA_B);

    // Only a signed-in owner of the clinic: the other clinic's owner, staff, a superadmin and nobody get nothing.
    expect((await ownerB.get(link)).statusCode).toBe(404);
    const staff = new Client(t.app, '203.0.113.9');
    await staff.signIn(EMAILS.staffA);
    expect((await staff.get(link)).statusCode).toBe(404);
    expect((await staff.get(EXPORT)).statusCode).toBe(403);
    const root = new Client(t.app, '203.0.113.10');
    await root.signIn(EMAILS.superadmin);
    expect((await root.get(link)).statusCode).toBe(404);
    const nobody = await t.app.inject({ url: link });
    expect(nobody.statusCode).toBe(303);
    expect(nobody.headers.location).toMatch(/^\/dashboard\/sign-in/);

    // 24 hours later it is gone, parts and all.
    t.clock.now += 24 * 3_600_000 + 1;
    await t.rt.exports.pass();
    // (A day later the sessions have expired too.)
    ({ owner, ownerB } = await signedInOwners(t.app));
    expect((await owner.get(link)).statusCode).toBe(404);
    expect(exportIds((await owner.get(EXPORT)).body)).toEqual([]);
    const parts = await t.database.db.selectFrom('clinic_export_parts').select('seq').execute();
    expect(parts).toEqual([]);
  });

  it('takes up an export whose instance stopped midway once its lease runs out', async () => {
    const row = await t.rt.exports.request(t.clinicB.id, null);
    await t.database.db
      .updateTable('clinic_exports')
      .set({ state: 'running', lease_until: t.clock.now + 30_000 })
      .where('id', '=', row.id)
      .execute();
    await t.rt.exports.pass();
    expect((await t.rt.exports.list(t.clinicB.id))[0]!.state).toBe('running');
    t.clock.now += 31_000;
    await t.rt.exports.pass();
    const done = (await t.rt.exports.list(t.clinicB.id))[0]!;
    expect(done.state).toBe('done');
    const parts: Buffer[] = [];
    for await (const part of t.rt.exports.file(done)) parts.push(part);
    expect((await readZip(Buffer.concat(parts))).get('clinica.jsonl')!.toString()).toContain(ANA_B);
  });

  it("downloads a client's data from her page of the access record, for the clinic's owner only", async () => {
    const page = await owner.get(`${ACCESS}?clienta=${ANA}`);
    expect(page.body).toContain('id="clienta-export"');
    const res = await owner.post(`${ACCESS}/export`, { _csrf: csrfOf(page.body), clienta: ANA });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    const files = await readZip(res.rawPayload);
    expect(JSON.parse(files.get('clienta.json')!.toString())).toMatchObject({ id: ANA, nombre: 'Ana Exportada' });
    expect(files.has('LEEME.txt')).toBe(true);
    // Without the token; another clinic's owner asking for her; an id of no clienta.
    expect((await owner.post(`${ACCESS}/export`, { clienta: ANA })).statusCode).toBe(403);
    const pageB = await ownerB.get(`${ACCESS}?clienta=${ANA_B}`);
    expect((await ownerB.post(`${ACCESS}/export`, { _csrf: csrfOf(pageB.body), clienta: ANA })).statusCode).toBe(404);
    expect((await owner.post(`${ACCESS}/export`, { _csrf: csrfOf(page.body), clienta: ANA_B })).statusCode).toBe(404);
  });
});
