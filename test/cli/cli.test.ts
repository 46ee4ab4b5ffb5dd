// The operator CLI (docs/cli.md), run in-process through main(argv, io) with captured streams and
// a temporary DATA_DIR (the embedded SQLite database), plus a few runs of the real entry
// `node bin/clinic-api.js` (which runs the compiled dist/, built once in beforeAll), its Node
// version check included.
// Contract: only the result on stdout, human text on stderr, --json gives JSON, errors are clear
// and exit non-zero.
import { execFile, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { verifyPassword } from '../../src/services/passwords.js';
import { runCli, type Run, type RunOptions } from './in-process.js';
import { NODE_VERSIONS, pretendNode } from './node-versions.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NOW = Date.UTC(2026, 2, 28, 12, 0, 0);
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEY_LINE_RE = /^svc_[A-Za-z0-9_-]{43}\n$/;

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-cli-'));
  tempDirs.push(dir);
  return dir;
}

let dataDir: string;

/** Runs the CLI in-process (in-process.ts), on this file's DATA_DIR and clock unless told otherwise. */
function cli(argv: string[], opts: Partial<RunOptions> = {}): Promise<Run> {
  return runCli(argv, { ...opts, dataDir: opts.dataDir ?? dataDir, now: opts.now ?? NOW });
}

/** A runtime on the same DATA_DIR, to look at what the commands did. */
async function withRt<T>(fn: (rt: Runtime) => Promise<T>, dir = dataDir): Promise<T> {
  const rt = await openRuntime(loadConfig({ DATA_DIR: dir }), { logTo: false });
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}

async function createClinic(extra: string[] = []): Promise<string> {
  const r = await cli(['clinics', 'create', '--name', 'Clínica Prueba', ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

async function tableCounts(clinicId: string, dir = dataDir) {
  return withRt(async (rt) => {
    const n = async (table: 'clientas' | 'citas' | 'llamadas') =>
      Number(
        (
          await rt.database.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('clinic_id', '=', clinicId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    return { clientas: await n('clientas'), citas: await n('citas'), llamadas: await n('llamadas') };
  }, dir);
}

const cid = (k: number, n: number) => `0d00000${k}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const VALID_JSONL =
  [
    {
      type: 'clienta',
      id: cid(1, 1),
      nombre: 'Lucía Gómez',
      telefono: '+34600111222',
      vip: true,
      cliente_desde: '2025-02-01',
      created_at: '2025-02-01T10:00:00+01:00',
    },
    {
      type: 'cita',
      id: cid(2, 1),
      clienta_id: cid(1, 1),
      fecha_hora: '2026-03-30T10:00:00+02:00',
      servicio: 'Manicura',
      duracion_min: 45,
      precio: 25,
      estado: 'confirmada',
      profesional_nombre: 'Elena Ruiz',
      sede_nombre: 'Sede Norte',
      created_at: '2026-03-01T09:00:00+01:00',
    },
    {
      type: 'llamada',
      id: cid(3, 1),
      fecha_hora: '2026-03-27T18:00:00+01:00',
      telefono_caller: '+34911222333',
      duracion_segundos: 40,
      resultado: 'info',
      idioma: 'es',
      created_at: '2026-03-27T18:00:40+01:00',
    },
  ]
    .map((l) => JSON.stringify(l))
    .join('\n') + '\n';

/** stdout of an import that created one record of each type. */
const SUMMARY_CREATED =
  [
    'clientas: 1 created, 0 updated, 0 unchanged, 0 deleted',
    'citas: 1 created, 0 updated, 0 unchanged, 0 deleted',
    'llamadas: 1 created, 0 updated, 0 unchanged, 0 deleted',
  ].join('\n') + '\n';

beforeAll(() => {
  dataDir = tempDir();
});
afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('clinics create', () => {
  it('prints only the new clinic id on stdout, human text on stderr', async () => {
    const r = await cli([
      'clinics',
      'create',
      '--name',
      'Clínica Aurora',
      '--timezone',
      'America/Mexico_City',
      '--currency',
      'mxn',
      '--plan',
      'enterprise',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
    const id = r.stdout.trim();
    expect(id).toMatch(UUID_RE);
    expect(r.stderr).toContain('Clínica Aurora');
    const clinic = await withRt((rt) => rt.database.db.selectFrom('clinics').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
    expect(clinic).toMatchObject({
      name: 'Clínica Aurora',
      timezone: 'America/Mexico_City',
      currency: 'MXN',
      plan: 'enterprise',
      created_at: NOW / 1000,
    });
  });

  it('defaults to Europe/Madrid, EUR and pro_total', async () => {
    const id = await createClinic();
    const clinic = await withRt((rt) => rt.database.db.selectFrom('clinics').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
    expect(clinic).toMatchObject({ timezone: 'Europe/Madrid', currency: 'EUR', plan: 'pro_total' });
  });

  it('--json prints the clinic as JSON, before or after the command', async () => {
    for (const argv of [
      ['clinics', 'create', '--name', 'JSON', '--json'],
      ['--json', 'clinics', 'create', '--name', 'JSON'],
    ]) {
      const r = await cli(argv);
      expect(r.code).toBe(0);
      const body = JSON.parse(r.stdout);
      expect(body).toMatchObject({ name: 'JSON', timezone: 'Europe/Madrid', currency: 'EUR', plan: 'pro_total' });
      expect(body.id).toMatch(UUID_RE);
      expect(r.stdout.trim().split('\n')).toHaveLength(1);
    }
  });

  it('a bad --timezone exits 2 naming the problem, creating nothing', async () => {
    const before = await withRt(async (rt) => (await rt.database.db.selectFrom('clinics').select('id').execute()).length);
    const r = await cli(['clinics', 'create', '--name', 'X', '--timezone', 'Mars/Olympus_Mons']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/"Mars\/Olympus_Mons" is not an IANA time zone/);
    expect(await withRt(async (rt) => (await rt.database.db.selectFrom('clinics').select('id').execute()).length)).toBe(before);
  });

  it('other bad values and a missing --name exit 2 with a message', async () => {
    const plan = await cli(['clinics', 'create', '--name', 'X', '--plan', 'gold']);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toMatch(/plan must be one of basic, pro, pro_total, enterprise, premium/);
    const currency = await cli(['clinics', 'create', '--name', 'X', '--currency', 'EURO']);
    expect(currency.code).toBe(2);
    expect(currency.stderr).toMatch(/ISO 4217/);
    const noName = await cli(['clinics', 'create']);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toMatch(/--name/);
    expect(noName.stdout).toBe('');
  });
});

describe('users create', () => {
  it('--password-stdin reads the password from stdin; stdout is only the id', async () => {
    const clinic = await createClinic();
    const r = await cli(['users', 'create', '--clinic', clinic, '--email', 'Owner@Example.com', '--role', 'owner', '--password-stdin'], {
      stdin: 'correct horse battery staple\nignored second line\n',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
    expect(r.stderr).not.toContain('correct horse');
    const user = await withRt((rt) =>
      rt.database.db.selectFrom('users').selectAll().where('id', '=', r.stdout.trim()).executeTakeFirstOrThrow(),
    );
    expect(user).toMatchObject({ clinic_id: clinic, email: 'owner@example.com', role: 'owner' });
    expect(user.password_hash).not.toContain('correct horse');
    expect(await verifyPassword('correct horse battery staple', user.password_hash)).toBe(true);
  });

  it('without --password-stdin a password is generated and shown once on stderr, never on stdout', async () => {
    const clinic = await createClinic();
    const r = await cli(['users', 'create', '--clinic', clinic, '--email', 'staff@example.com', '--role', 'staff']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
    const m = /generated password \(shown once\): (\S+)/.exec(r.stderr);
    expect(m).not.toBeNull();
    const password = m![1]!;
    expect(password.length).toBeGreaterThanOrEqual(10);
    expect(r.stdout).not.toContain(password);
    const user = await withRt((rt) =>
      rt.database.db.selectFrom('users').selectAll().where('id', '=', r.stdout.trim()).executeTakeFirstOrThrow(),
    );
    expect(await verifyPassword(password, user.password_hash)).toBe(true);
  });

  it('a superadmin has no clinic', async () => {
    const r = await cli(['users', 'create', '--email', 'root@example.com', '--role', 'superadmin', '--json'], { stdin: '' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ email: 'root@example.com', role: 'superadmin', clinic_id: null });
    const clinic = await createClinic();
    const withClinic = await cli(['users', 'create', '--clinic', clinic, '--email', 'root2@example.com', '--role', 'superadmin']);
    expect(withClinic.code).toBe(2);
    expect(withClinic.stderr).toMatch(/superadmin belongs to no clinic: leave out --clinic/);
  });

  it('refuses an owner without a clinic, an unknown clinic, a bad role, a duplicate e-mail, a short or missing password', async () => {
    const clinic = await createClinic();
    const cases: [string[], string | undefined, RegExp][] = [
      [['--email', 'o1@example.com', '--role', 'owner'], undefined, /belongs to a clinic: give --clinic ID/],
      [
        ['--clinic', '00000000-0000-4000-8000-000000000000', '--email', 'o2@example.com', '--role', 'owner'],
        undefined,
        /no clinic with id/,
      ],
      [['--clinic', clinic, '--email', 'o3@example.com', '--role', 'admin'], undefined, /role must be one of owner, staff, superadmin/],
      [['--clinic', clinic, '--email', 'not-an-email', '--role', 'staff'], undefined, /is not an e-mail address/],
      [['--clinic', clinic, '--email', 'o4@example.com', '--role', 'staff', '--password-stdin'], 'short\n', /at least 10 characters/],
      [['--clinic', clinic, '--email', 'o5@example.com', '--role', 'staff', '--password-stdin'], '', /no password on stdin/],
    ];
    for (const [args, stdin, message] of cases) {
      const r = await cli(['users', 'create', ...args], stdin === undefined ? {} : { stdin });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
    }
    expect((await cli(['users', 'create', '--clinic', clinic, '--email', 'dup@example.com', '--role', 'staff'])).code).toBe(0);
    const dup = await cli(['users', 'create', '--clinic', clinic, '--email', 'DUP@example.com', '--role', 'staff']);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toMatch(/already exists/);
  });
});

describe('keys', () => {
  it('create prints exactly the key on stdout, once; it verifies; list never shows it', async () => {
    const clinic = await createClinic(['--plan', 'premium']);
    const r = await cli(['keys', 'create', '--clinic', clinic, '--name', 'Zapier']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(KEY_LINE_RE);
    const key = r.stdout.trim();
    expect(r.stderr).toMatch(/cannot be shown again/);
    expect(r.stderr).not.toContain(key);

    // Listed before it is verified: verifying is a use, written to last_used_at off the request's
    // path (whether that write beats the runtime's close is not what this test is about).
    const list = await cli(['keys', 'list', '--clinic', clinic]);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain(key);
    expect(list.stdout).not.toContain(key.slice(4, 20));
    const [line, ...rest] = list.stdout.trim().split('\n');
    expect(rest).toEqual([]);
    const [keyId, status, hint, name] = line!.split('\t');
    expect(keyId).toMatch(UUID_RE);
    expect({ status, hint, name }).toEqual({ status: 'active', hint: `…${key.slice(-4)}`, name: 'Zapier' });
    expect(line).toContain('last used never');

    const json = await cli(['keys', 'list', '--clinic', clinic, '--json']);
    const rows = JSON.parse(json.stdout);
    expect(rows).toEqual([
      expect.objectContaining({
        id: keyId,
        name: 'Zapier',
        hint: `…${key.slice(-4)}`,
        status: 'active',
        revoked_at: null,
        expires_at: null,
      }),
    ]);
    expect(json.stdout).not.toContain(key);
    expect(json.stdout).not.toContain('key_hash');
    expect(await withRt((rt) => rt.keys.verify(key))).toMatchObject({ clinicId: clinic, revoked: false });
  });

  it('create --json gives the key with its id and hint', async () => {
    const clinic = await createClinic(['--plan', 'enterprise']);
    const r = await cli(['keys', 'create', '--clinic', clinic, '--name', 'n8n', '--json']);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body).toMatchObject({ name: 'n8n', clinic_id: clinic, expires_at: null });
    expect(`${body.key}\n`).toMatch(KEY_LINE_RE);
    expect(body.hint).toBe(body.key.slice(-4));
    expect(body.id).toMatch(UUID_RE);
  });

  it('revoke: stdout is the id, the key stops working, list shows it revoked; again is harmless; unknown is an error', async () => {
    const clinic = await createClinic(['--plan', 'premium']);
    const key = (await cli(['keys', 'create', '--clinic', clinic, '--name', 'old'])).stdout.trim();
    const keyId = (await cli(['keys', 'list', '--clinic', clinic])).stdout.split('\t')[0]!;
    const r = await cli(['keys', 'revoke', keyId]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${keyId}\n`);
    expect(r.stderr).toMatch(/revoked key/);
    expect(await withRt((rt) => rt.keys.verify(key))).toBeNull();
    expect((await cli(['keys', 'list', '--clinic', clinic])).stdout.split('\t')[1]).toBe('revoked');
    const again = await cli(['keys', 'revoke', keyId]);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/already revoked/);
    const unknown = await cli(['keys', 'revoke', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no API key with id/);
  });

  it('a basic-plan clinic gets no key: non-zero exit, the plan rule in the message, nothing written', async () => {
    for (const plan of ['basic', 'pro']) {
      const clinic = await createClinic(['--plan', plan]);
      const r = await cli(['keys', 'create', '--clinic', clinic, '--name', 'nope']);
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`plan "${plan}" does not include API access`);
      expect(r.stderr).toContain('pro_total, enterprise, premium');
      expect((await cli(['keys', 'list', '--clinic', clinic])).stdout).toBe('');
    }
  });

  it('API_PLANS and API_KEY_PREFIX from the environment apply', async () => {
    const clinic = await createClinic(['--plan', 'basic']);
    const r = await cli(['keys', 'create', '--clinic', clinic, '--name', 'basic ok'], {
      env: { API_PLANS: 'basic,premium', API_KEY_PREFIX: 'clin' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^clin_[A-Za-z0-9_-]{43}\n$/);
  });

  it('--expires-in 30d sets expires_at 30 days from now; the key is listed expired afterwards', async () => {
    const clinic = await createClinic(['--plan', 'premium']);
    const r = await cli(['keys', 'create', '--clinic', clinic, '--name', 'temp', '--expires-in', '30d', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body.expires_at).toBe('2026-04-27T14:00:00+02:00');
    const row = await withRt((rt) => rt.keys.get(clinic, body.id));
    expect(row!.expires_at).toBe(NOW / 1000 + 30 * 86_400);
    const later = await cli(['keys', 'list', '--clinic', clinic, '--json'], { now: NOW + 31 * 86_400_000 });
    expect(JSON.parse(later.stdout)[0]).toMatchObject({ status: 'expired', expires_at: '2026-04-27T14:00:00+02:00' });
  });

  it('a bad --expires-in, an unknown clinic or a missing --name exit 2', async () => {
    const clinic = await createClinic(['--plan', 'premium']);
    for (const bad of ['30', '0d', 'abc', '1w', '-5d', '30 d']) {
      const r = await cli(['keys', 'create', '--clinic', clinic, '--name', 'x', '--expires-in', bad]);
      expect(r.code, bad).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/--expires-in must be a number of days such as 30d/);
    }
    const unknown = await cli(['keys', 'create', '--clinic', '00000000-0000-4000-8000-000000000000', '--name', 'x']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/No clinic with id/);
    const noName = await cli(['keys', 'create', '--clinic', clinic]);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toMatch(/--name/);
    expect((await cli(['keys', 'list', '--clinic', clinic])).stdout).toBe('');
  });
});

describe('import', () => {
  it('imports a file; stdout is the summary', async () => {
    const clinic = await createClinic(['--plan', 'premium']);
    const file = path.join(tempDir(), 'data.jsonl');
    fs.writeFileSync(file, VALID_JSONL);
    const r = await cli(['import', '--clinic', clinic, file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(SUMMARY_CREATED);
    expect(r.stderr).toContain('imported 3 line(s): 3 change(s)');
    expect(await tableCounts(clinic)).toEqual({ clientas: 1, citas: 1, llamadas: 1 });
    // Re-import is an upsert that finds everything as it is: it says so (issue 9).
    const again = await cli(['import', '--clinic', clinic, file]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe('no changes\n');
    expect(again.stderr).toMatch(/no changes: every record of the 3 line\(s\) was already stored/);
    expect(await tableCounts(clinic)).toEqual({ clientas: 1, citas: 1, llamadas: 1 });
  });

  it("counts what each type did, deletions and the cascade of a clienta's deletion included", async () => {
    const clinic = await createClinic(['--plan', 'premium']);
    expect((await cli(['import', '--clinic', clinic, '-'], { stdin: VALID_JSONL })).code).toBe(0);
    const changes = [
      JSON.stringify({
        type: 'llamada',
        id: cid(3, 2),
        clienta_id: cid(1, 1),
        fecha_hora: '2026-03-27T19:00:00+01:00',
        telefono_caller: '+34911222333',
        duracion_segundos: 40,
        resultado: 'info',
        idioma: 'es',
        created_at: '2026-03-27T19:00:40+01:00',
      }),
      JSON.stringify({ type: 'llamada', id: cid(3, 1), deleted: true }),
      JSON.stringify({ type: 'clienta', id: cid(1, 1), deleted: true }),
    ].join('\n');
    const r = await cli(['import', '--clinic', clinic, '-', '--json'], { stdin: changes });
    expect(r.code, r.stderr).toBe(0);
    const did = (created: number, updated: number, unchanged: number, deleted: number) => ({ created, updated, unchanged, deleted });
    // The new call, linked to her, is unlinked when she goes (an update); her cita goes with her.
    expect(JSON.parse(r.stdout)).toEqual({
      ok: true,
      lines: 3,
      changed: true,
      counts: { clientas: did(0, 0, 0, 1), citas: did(0, 0, 0, 1), llamadas: did(1, 1, 0, 1) },
    });
    expect(await tableCounts(clinic)).toEqual({ clientas: 0, citas: 0, llamadas: 1 });
    const missing = await cli(['import', '--clinic', clinic, '-'], {
      stdin: JSON.stringify({ type: 'cita', id: cid(2, 1), deleted: true }),
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`line 1: cita ${cid(2, 1)} does not exist in this clinic, so it cannot be deleted`);
  });

  it("'-' reads stdin; --json gives the counts", async () => {
    const clinic = await createClinic(['--plan', 'premium']);
    const r = await cli(['import', '--clinic', clinic, '-', '--json'], { stdin: VALID_JSONL });
    expect(r.code, r.stderr).toBe(0);
    const created = { created: 1, updated: 0, unchanged: 0, deleted: 0 };
    expect(JSON.parse(r.stdout)).toEqual({
      ok: true,
      lines: 3,
      changed: true,
      counts: { clientas: created, citas: created, llamadas: created },
    });
    expect(await tableCounts(clinic)).toEqual({ clientas: 1, citas: 1, llamadas: 1 });
    const again = await cli(['import', '--clinic', clinic, '-', '--json'], { stdin: VALID_JSONL });
    const unchanged = { created: 0, updated: 0, unchanged: 1, deleted: 0 };
    expect(JSON.parse(again.stdout)).toEqual({
      ok: true,
      lines: 3,
      changed: false,
      counts: { clientas: unchanged, citas: unchanged, llamadas: unchanged },
    });
  });

  it('a bad file exits 1, lists every problem on stderr as "line N: reason", and changes nothing', async () => {
    const clinic = await createClinic(['--plan', 'premium']);
    const good = path.join(tempDir(), 'good.jsonl');
    fs.writeFileSync(good, VALID_JSONL);
    expect((await cli(['import', '--clinic', clinic, good])).code).toBe(0);
    const before = await tableCounts(clinic);

    const lines = VALID_JSONL.trim().split('\n');
    const bad = [
      lines[0]!.replace('Lucía Gómez', 'Changed Name'),
      '{"type":"cita",',
      lines[1]!.replace('"precio":25', '"precio":25.555'),
      JSON.stringify({
        type: 'cita',
        id: cid(2, 2),
        clienta_id: cid(1, 77),
        fecha_hora: '2026-03-30T10:00:00+02:00',
        servicio: 'Manicura',
        duracion_min: 45,
        precio: 25,
        estado: 'confirmada',
        profesional_nombre: 'Elena Ruiz',
        sede_nombre: 'Sede Norte',
        created_at: '2026-03-01T09:00:00+01:00',
      }),
      lines[2]!.replace('"resultado":"info"', '"resultado":"maybe"').replace('"duracion_segundos":', '"duracion":'),
    ].join('\n');
    const file = path.join(tempDir(), 'bad.jsonl');
    fs.writeFileSync(file, bad);
    const r = await cli(['import', '--clinic', clinic, file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const reported = r.stderr.split('\n').filter((l) => l.startsWith('line '));
    expect(reported).toEqual([
      'line 2: not valid JSON',
      'line 3: precio must have at most 2 decimals',
      `line 4: clienta_id ${cid(1, 77)} is not a clienta of this clinic nor in the file`,
      'line 5: missing required field "duracion_segundos"',
      expect.stringMatching(/^line 5: resultado must be one of: /),
      expect.stringMatching(/^line 5: unknown field "duracion" for type llamada; allowed: /),
    ]);
    expect(r.stderr).toMatch(/import refused: 4 bad line\(s\) of 5, 6 problem\(s\); nothing was changed/);
    expect(await tableCounts(clinic)).toEqual(before);
    const name = await withRt(
      async (rt) =>
        (await rt.database.db.selectFrom('clientas').select('nombre').where('clinic_id', '=', clinic).executeTakeFirstOrThrow()).nombre,
    );
    expect(name).toBe('Lucía Gómez');

    const json = await cli(['import', '--clinic', clinic, file, '--json']);
    expect(json.code).toBe(1);
    const body = JSON.parse(json.stdout);
    expect(body).toMatchObject({ ok: false, lines: 5, bad_lines: 4, error_count: 6 });
    expect(body.errors.map((e: { line: number; field: string | null }) => [e.line, e.field])).toEqual([
      [2, null],
      [3, 'precio'],
      [4, 'clienta_id'],
      [5, 'duracion_segundos'],
      [5, 'resultado'],
      [5, 'duracion'],
    ]);
  });

  it('more than 100 bad lines: 100 listed, then how many more', async () => {
    const clinic = await createClinic(['--plan', 'premium']);
    const r = await cli(['import', '--clinic', clinic, '-'], { stdin: Array.from({ length: 130 }, () => 'x').join('\n') });
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter((l) => /^line \d+: not valid JSON$/.test(l))).toHaveLength(100);
    expect(r.stderr).toMatch(/… and 30 more problem\(s\)/);
    expect(r.stderr).toMatch(/import refused: 130 bad line\(s\) of 130, 130 problem\(s\)/);
  });

  it('a missing file or an unknown clinic exits 2', async () => {
    const clinic = await createClinic(['--plan', 'premium']);
    const missing = await cli(['import', '--clinic', clinic, path.join(dataDir, 'no-such-file.jsonl')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*no-such-file\.jsonl/);
    const unknown = await cli(['import', '--clinic', '00000000-0000-4000-8000-000000000000', '-'], { stdin: VALID_JSONL });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/No clinic with id/);
    const noFile = await cli(['import', '--clinic', clinic]);
    expect(noFile.code).toBe(2);
  });
});

describe('demo', () => {
  it('--clinics 2 --scale 1 creates two clinics with data and prints their ids', async () => {
    const dir = tempDir();
    const r = await cli(['demo', '--clinics', '2', '--scale', '1'], { dataDir: dir });
    expect(r.code, r.stderr).toBe(0);
    const ids = r.stdout.trim().split('\n');
    expect(ids).toHaveLength(2);
    for (const id of ids) {
      expect(id).toMatch(UUID_RE);
      expect(await tableCounts(id, dir)).toEqual({ clientas: 200, citas: 1000, llamadas: 500 });
    }
    expect(new Set(ids).size).toBe(2);
  });

  it('is deterministic for a seed (same now): the same records in another DATA_DIR', async () => {
    const runs = [];
    for (let i = 0; i < 2; i++) {
      const dir = tempDir();
      const r = await cli(['demo', '--seed', '7', '--scale', '1', '--json'], { dataDir: dir });
      expect(r.code, r.stderr).toBe(0);
      const [clinic] = JSON.parse(r.stdout) as { id: string; name: string; clientas: number }[];
      expect(clinic).toMatchObject({ clientas: 200, citas: 1000, llamadas: 500 });
      runs.push(
        await withRt(
          async (rt) => ({
            citas: await rt.database.db
              .selectFrom('citas')
              .select(['id', 'clienta_id', 'fecha_hora', 'servicio', 'precio_cents', 'estado'])
              .orderBy('id')
              .execute(),
            clientas: await rt.database.db.selectFrom('clientas').select(['id', 'nombre', 'telefono', 'vip']).orderBy('id').execute(),
          }),
          dir,
        ),
      );
    }
    expect(runs[1]).toEqual(runs[0]);
  });

  it('bad --clinics / --scale exit 2', async () => {
    for (const args of [
      ['--clinics', '0'],
      ['--scale', 'big'],
      ['--clinics', '-1'],
    ]) {
      const r = await cli(['demo', ...args], { dataDir: tempDir() });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
    }
  });
});

describe('migrate', () => {
  it('applies migrations once; a second run has nothing to do', async () => {
    const dir = tempDir();
    const first = await cli(['migrate'], { dataDir: dir });
    expect(first.code, first.stderr).toBe(0);
    const applied = first.stdout.trim().split('\n');
    expect(applied.length).toBeGreaterThan(0);
    expect(applied[0]).toMatch(/^001/);
    expect(fs.existsSync(path.join(dir, 'clinic.db'))).toBe(true);
    const second = await cli(['migrate'], { dataDir: dir });
    expect(second).toEqual({ code: 0, stdout: '', stderr: 'database is up to date\n' });
    const json = await cli(['migrate', '--json'], { dataDir: dir });
    expect(JSON.parse(json.stdout)).toEqual({ applied: [] });
  });
});

describe('configuration and usage errors', () => {
  it('a bad variable exits 2 naming it, before touching DATA_DIR', async () => {
    const dir = tempDir();
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: 'abc' }, /configuration error: PORT: must be a whole number from 0 to 65535, got "abc"/],
      [{ API_KEY_PREFIX: 'Bad_' }, /configuration error: API_KEY_PREFIX: /],
      [{ API_PLANS: 'gold' }, /configuration error: API_PLANS: .*unknown: gold/],
      [{ LOG_LEVEL: 'loud' }, /configuration error: LOG_LEVEL: /],
      [{ DATABASE_URL: 'mysql://localhost/clinic' }, /configuration error: DATABASE_URL: /],
    ];
    for (const [env, message] of cases) {
      for (const argv of [['migrate'], ['clinics', 'create', '--name', 'X'], ['serve']]) {
        const r = await cli(argv, { env, dataDir: dir });
        expect(r.code, `${JSON.stringify(env)} ${argv.join(' ')}`).toBe(2);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(message);
      }
    }
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('an unknown command, an unknown option or no command exits non-zero with usage help', async () => {
    const unknown = await cli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command 'frobnicate'/);
    expect(unknown.stdout).toBe('');
    const option = await cli(['clinics', 'create', '--name', 'X', '--colour', 'red']);
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/unknown option '--colour'/);
    const none = await cli([]);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/Usage: clinic-api/);
  });

  it('--help prints usage on stdout and exits 0, listing every command of the README', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    for (const command of ['serve', 'migrate', 'clinics', 'users', 'keys', 'import', 'demo', 'backup', 'restore'])
      expect(r.stdout).toContain(command);
    const keys = await cli(['keys', '--help']);
    expect(keys.code).toBe(0);
    for (const sub of ['create', 'list', 'revoke']) expect(keys.stdout).toContain(sub);
  });
});

describe('the real binary: node bin/clinic-api.js', () => {
  const BIN = path.join(ROOT, 'bin', 'clinic-api.js');
  let binDir: string;

  beforeAll(() => {
    // bin/clinic-api.js runs the compiled dist/: build it from the current sources.
    const build = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 180_000,
    });
    if (build.status !== 0) {
      // tsc still emits on type errors (e.g. a file another change is half-way through); the
      // runs below then show whether the entry works. A missing dist/ fails them clearly.
      process.stderr.write(`cli.test.ts: \`tsc -p tsconfig.build.json\` reported errors:\n${build.stdout}${build.stderr}\n`);
    }
    if (!fs.existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'))) {
      throw new Error('dist/cli/main.js is missing after building; run `npm run build` and see its errors');
    }
    binDir = tempDir();
  }, 180_000);

  function bin(args: string[], opts: { env?: Record<string, string>; stdin?: string } = {}): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = execFile(
        process.execPath,
        [BIN, ...args],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', DATA_DIR: binDir, LOG_LEVEL: 'silent', ...opts.env },
          timeout: 60_000,
        },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
          if (code === null) reject(err);
          else resolve({ code, stdout, stderr });
        },
      );
      child.stdin!.end(opts.stdin ?? '');
    });
  }

  it('creates a clinic and a key, imports from stdin, and exits 0', async () => {
    const clinic = await bin(['clinics', 'create', '--name', 'Binaria', '--plan', 'premium']);
    expect(clinic.code, clinic.stderr).toBe(0);
    expect(clinic.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
    const id = clinic.stdout.trim();
    const key = await bin(['keys', 'create', '--clinic', id, '--name', 'bin']);
    expect(key.code, key.stderr).toBe(0);
    expect(key.stdout).toMatch(KEY_LINE_RE);
    expect(await withRt((rt) => rt.keys.verify(key.stdout.trim()), binDir)).toMatchObject({ clinicId: id });
    const imported = await bin(['import', '--clinic', id, '-'], { stdin: VALID_JSONL });
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toBe(SUMMARY_CREATED);
  });

  it('exits 2 on a configuration error and on an unknown command, 1 on a refused import', async () => {
    const config = await bin(['migrate'], { env: { PORT: 'abc' } });
    expect(config.code).toBe(2);
    expect(config.stderr).toMatch(/PORT/);
    expect((await bin(['frobnicate'])).code).toBe(2);
    const id = (await bin(['clinics', 'create', '--name', 'Bin 2'])).stdout.trim();
    const refused = await bin(['import', '--clinic', id, '-'], { stdin: '{"type":"clienta"}\n' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^line 1: missing required field/m);
  });

  it('refuses a Node outside package.json engines in one line, before loading anything; runs on the others', async () => {
    // Someone may switch Node after installing: npm's check is past by then.
    const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version as string;
    for (const [node, supported] of [...NODE_VERSIONS, ['18.20.8', false] as const]) {
      const r = spawnSync(process.execPath, ['--import', pretendNode(node), BIN, '--version'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', DATA_DIR: binDir },
        encoding: 'utf8',
        timeout: 30_000,
      });
      if (supported) {
        expect({ node, status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
          node,
          status: 0,
          stdout: `${version}\n`,
          stderr: '',
        });
      } else {
        expect({ node, status: r.status, stdout: r.stdout }).toEqual({ node, status: 2, stdout: '' });
        expect(r.stderr).toBe(
          `clinic-api: Node.js ${node} is not supported; use Node.js 24 LTS (or 22.15 and later), e.g. \`nvm install 24\`\n`,
        );
      }
    }
  });

  /** The modules `node bin/clinic-api.js ...args` loaded through import (test/cli/record-loads.mjs), and how it ended. */
  function loadsOf(args: string[]): { status: number | null; loaded: string[] } {
    const file = path.join(binDir, `loads-${args.join('-')}.txt`);
    fs.rmSync(file, { force: true });
    const r = spawnSync(process.execPath, ['--import', path.join(ROOT, 'test', 'cli', 'record-loads.mjs'), BIN, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: binDir, RECORD_LOADS: file },
      encoding: 'utf8',
      timeout: 30_000,
    });
    return { status: r.status, loaded: fs.readFileSync(file, 'utf8').trim().split('\n') };
  }

  /** What only the server or the data commands need: none of it is for --version or --help. */
  const HEAVY =
    /\/node_modules\/(fastify|@fastify|kysely|better-sqlite3|pg|pino|prom-client|redis|@redis|@sinclair\/typebox|luxon)\/|\/dist\/(runtime|server|app|config)\.js$/;

  it('--version and --help load the CLI alone: no server, database driver, logger or configuration schema', () => {
    for (const args of [['--version'], ['--help'], ['keys', '--help'], ['help', 'import']]) {
      const { status, loaded } = loadsOf(args);
      expect({ args, status }).toEqual({ args, status: 0 });
      // The recorder saw the loads (commander is what --help is made of)...
      expect(loaded.some((url) => url.includes('/node_modules/commander/'))).toBe(true);
      // ...and nothing heavy among them.
      expect({ args, heavy: loaded.filter((url) => HEAVY.test(url)) }).toEqual({ args, heavy: [] });
    }
  });

  it('a command loads what it runs: `clinics list` opens the database without the server or Redis', () => {
    const { status, loaded } = loadsOf(['clinics', 'list']);
    expect(status).toBe(0);
    expect(loaded.some((url) => url.includes('/node_modules/better-sqlite3/'))).toBe(true);
    expect(loaded.filter((url) => /\/node_modules\/(fastify|@fastify|redis|@redis)\/|\/dist\/(server|app)\.js$/.test(url))).toEqual([]);
  });

  it('pipes: the stdout of one command is the argument of the next', async () => {
    // The shell form `clinic-api keys create --clinic "$(clinic-api clinics create --name X)"`.
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        '/bin/sh',
        ['-c', `node "${BIN}" keys create --name piped --clinic "$(node "${BIN}" clinics create --name Piped --plan premium)"`],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', DATA_DIR: binDir, LOG_LEVEL: 'silent' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      child.stdout.on('data', (c: Buffer) => {
        stdout += c.toString();
      });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}`))));
    });
    expect(out).toMatch(KEY_LINE_RE);
  });
});
