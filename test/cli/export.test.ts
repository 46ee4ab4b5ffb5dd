// `clinic-api clientas export` and `clinic-api export` in-process on an embedded SQLite file
// (so the export reads through its own snapshot connection): what each ZIP holds, that its JSON
// files match the JSON Schemas it carries, that one client's ZIP holds nobody else's data, and
// the refusals (unknown clienta, existing file, missing directory) that leave no file behind.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { readZip } from '../helpers/zip.js';
import { runCli, tempDirs, withRuntimeAt } from './in-process.js';

const dirs = tempDirs('clinic-export-');
afterAll(() => dirs.cleanup());

const id = (k: number, n: number) => `0f00000${k}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const HER = { id: id(1, 1), nombre: 'Hermenegilda Portabella', telefono: '+34611000111', email: 'h.portabella@example.org' };
const OTHER = { id: id(1, 2), nombre: 'Otilia Ajena', telefono: '+34622000222' };
const clienta = (c: { id: string; nombre: string; telefono: string; email?: string }) => ({
  type: 'clienta',
  ...c,
  vip: false,
  cliente_desde: '2025-02-01',
  created_at: '2025-02-01T10:00:00+01:00',
});
const cita = (n: number, clientaId: string, fecha: string, notas: string | null = null) => ({
  type: 'cita',
  id: id(2, n),
  clienta_id: clientaId,
  fecha_hora: fecha,
  servicio: 'Manicura',
  duracion_min: 45,
  precio: 25.5,
  estado: 'confirmada',
  profesional_nombre: 'Elena Ruiz',
  sede_nombre: 'Sede Norte',
  notas,
  created_at: '2026-03-01T09:00:00+01:00',
});
const llamada = (n: number, clientaId: string | null, telefono: string) => ({
  type: 'llamada',
  id: id(3, n),
  clienta_id: clientaId,
  fecha_hora: '2026-03-27T18:00:00+01:00',
  telefono_caller: telefono,
  duracion_segundos: 40,
  resultado: 'info',
  idioma: 'es',
  created_at: '2026-03-27T18:00:40+01:00',
});
const jsonl = (lines: object[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';

describe('clinic-api clientas export and clinic-api export', () => {
  const dataDir = dirs.make();
  const out = dirs.make();
  let clinic = '';
  const cli = (argv: string[], stdin?: string) => runCli(argv, { dataDir, stdin });
  const ok = async (argv: string[], stdin?: string) => {
    const r = await cli(argv, stdin);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.trim();
  };

  beforeAll(async () => {
    clinic = await ok(['clinics', 'create', '--name', 'Clínica Portátil', '--timezone', 'Europe/Madrid', '--plan', 'premium']);
    await ok(
      ['import', '--clinic', clinic, '-'],
      jsonl([
        clienta(HER),
        clienta(OTHER),
        cita(1, HER.id, '2026-03-30T10:00:00+02:00', '=cmd|" /C calc"!A0'),
        cita(2, HER.id, '2026-02-10T10:00:00+01:00'),
        cita(3, OTHER.id, '2026-03-30T11:00:00+02:00'),
        llamada(1, HER.id, HER.telefono),
        // From her phone, linked to no clienta: hers too.
        llamada(2, null, HER.telefono),
        llamada(3, OTHER.id, OTHER.telefono),
      ]),
    );
    const key = await ok(['keys', 'create', '--clinic', clinic, '--name', 'Agenda Web']);
    // Two requests that disclose her (and one that does not), logged by the runtime's request log.
    await withRuntimeAt(dataDir, async (rt) => {
      const app = await buildApp(rt);
      for (const url of ['/api/v1/clientas?q=hermenegilda', '/api/v1/citas?desde=2026-03-30&hasta=2026-03-30', '/api/v1/me'])
        expect((await app.inject({ url, headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
      await app.close();
    });
  }, 60_000);

  it('writes her ZIP: her records as JSON and CSV, her access record, the schemas they match, a LEEME.txt', async () => {
    const file = path.join(out, 'her.zip');
    await ok(['clientas', 'export', '--clinic', clinic, HER.id, '--out', file]);
    const files = await readZip(fs.readFileSync(file));
    expect([...files.keys()].sort()).toEqual(
      [
        'LEEME.txt',
        'accesos.csv',
        'accesos.json',
        'citas.csv',
        'citas.json',
        'clienta.csv',
        'clienta.json',
        'llamadas.csv',
        'llamadas.json',
        'schemas/accesos.schema.json',
        'schemas/citas.schema.json',
        'schemas/clienta.schema.json',
        'schemas/llamadas.schema.json',
      ].sort(),
    );
    const json = (name: string) => JSON.parse(files.get(name)!.toString()) as unknown;
    expect(json('clienta.json')).toMatchObject({ id: HER.id, nombre: HER.nombre, email: HER.email, total_citas: 2, total_llamadas: 1 });
    expect((json('citas.json') as { id: string }[]).map((c) => c.id)).toEqual([id(2, 2), id(2, 1)]);
    expect((json('llamadas.json') as { id: string }[]).map((c) => c.id).sort()).toEqual([id(3, 1), id(3, 2)]);
    const access = json('accesos.json') as Record<string, unknown>[];
    expect(access.map((a) => [a.integration, a.endpoint, a.status])).toEqual([
      ['Agenda Web', '/api/v1/citas', 200],
      ['Agenda Web', '/api/v1/clientas', 200],
    ]);
    // Every JSON file matches the JSON Schema the ZIP carries for it.
    const ajv = new Ajv2020.default({ strict: false });
    addFormats.default(ajv);
    for (const name of ['clienta', 'citas', 'llamadas', 'accesos']) {
      const validate = ajv.compile(json(`schemas/${name}.schema.json`) as object);
      expect(validate(json(`${name}.json`)), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    // The CSVs: the same records, a formula neutralised.
    const citas = parse(files.get('citas.csv')!, { columns: true }) as Record<string, string>[];
    expect(citas.map((c) => c.id)).toEqual([id(2, 2), id(2, 1)]);
    expect(citas[1]!.notas).toBe(`'=cmd|" /C calc"!A0`);
    expect((parse(files.get('accesos.csv')!, { columns: true }) as unknown[]).length).toBe(2);
    expect(files.get('LEEME.txt')!.toString()).toContain(`Datos de ${HER.nombre} en Clínica Portátil`);
    // Nobody else's data.
    const all = [...files.values()].map((b) => b.toString()).join('\n');
    for (const needle of [OTHER.nombre, OTHER.telefono, id(2, 3), id(3, 3), OTHER.id]) expect(all).not.toContain(needle);
  });

  it('writes the whole clinic: the import file and a CSV per table', async () => {
    const file = path.join(out, 'all.zip');
    await ok(['export', '--clinic', clinic, '--out', file]);
    const files = await readZip(fs.readFileSync(file));
    expect([...files.keys()]).toEqual(['LEEME.txt', 'clinica.jsonl', 'clientas.csv', 'citas.csv', 'llamadas.csv']);
    const lines = files.get('clinica.jsonl')!.toString().trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual([
      'clienta',
      'clienta',
      'cita',
      'cita',
      'cita',
      'llamada',
      'llamada',
      'llamada',
    ]);
    // Importing it again into the same clinic changes nothing: every line is what is stored.
    const again = await cli(['import', '--clinic', clinic, '-'], files.get('clinica.jsonl')!.toString());
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe('no changes');
  });

  it('refuses an unknown clienta, an existing file and a missing directory, leaving no file', async () => {
    const unknown = await cli(['clientas', 'export', '--clinic', clinic, id(1, 99), '--out', path.join(out, 'nobody.zip')]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`no clienta with id ${id(1, 99)}`);
    // The id is an argument, not an option: the refusal names it as the help does.
    const notAnId = await cli(['clientas', 'export', '--clinic', clinic, 'maria', '--out', path.join(out, 'maria.zip')]);
    expect([notAnId.code, notAnId.stderr]).toEqual([2, expect.stringContaining("<clienta-id> must be a clienta's id")]);
    const existing = path.join(out, 'taken.zip');
    fs.writeFileSync(existing, 'mine');
    const taken = await cli(['export', '--clinic', clinic, '--out', existing]);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain('--force');
    expect(fs.readFileSync(existing, 'utf8')).toBe('mine');
    const missing = await cli(['export', '--clinic', clinic, '--out', path.join(out, 'no', 'such', 'dir.zip')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('does not exist');
    expect(fs.readdirSync(out).sort()).toEqual(['all.zip', 'her.zip', 'taken.zip']);
    await ok(['export', '--clinic', clinic, '--out', existing, '--force']);
    expect((await readZip(fs.readFileSync(existing))).has('clinica.jsonl')).toBe(true);
  });
});
