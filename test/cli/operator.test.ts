// The operator's commands beyond create (docs/cli.md): --version, clinics list and set-plan,
// users list and reset-password, demo with an owner and a key per clinic, unknown ids named in an
// exit-2 error, and a key pasted where its id belongs. In-process on a temporary DATA_DIR.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { verifyPassword } from '../../src/services/passwords.js';
import { Client } from '../admin/helpers.js';
import { runCli, tempDirs, withRuntimeAt, type RunOptions } from './in-process.js';

const NOW = Date.UTC(2026, 2, 28, 12, 0, 0);
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN = '0badc0de-0000-4000-8000-000000000000';
const PKG = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const dirs = tempDirs('clinic-operator-');
let dataDir: string;
const cli = (argv: string[], opts: Partial<RunOptions> = {}) => runCli(argv, { dataDir, now: NOW, ...opts });

async function ok(argv: string[], opts: Partial<RunOptions> = {}): Promise<string> {
  const r = await cli(argv, opts);
  expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout.trim();
}

const newClinic = (name: string, plan = 'premium') => ok(['clinics', 'create', '--name', name, '--plan', plan]);

beforeAll(() => {
  dataDir = dirs.make();
});
afterAll(() => dirs.cleanup());

describe('--version', () => {
  it("prints package.json's version on stdout and exits 0; --json gives it as JSON", async () => {
    for (const flag of ['--version', '-V']) expect(await cli([flag])).toEqual({ code: 0, stdout: `${PKG.version}\n`, stderr: '' });
    for (const argv of [
      ['--json', '--version'],
      ['--version', '--json'],
    ]) {
      const r = await cli(argv);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ version: PKG.version });
    }
    expect((await cli(['--help'])).stdout).toMatch(/--version/);
  });
});

describe('clinics list', () => {
  it('lists every clinic by name with its plan, API access and active key count; --json gives the counts', async () => {
    const dir = dirs.make();
    const run = (argv: string[], now = NOW) => runCli(argv, { dataDir: dir, now });
    const zeta = (await run(['clinics', 'create', '--name', 'Zeta Estética', '--plan', 'premium'])).stdout.trim();
    const alfa = (await run(['clinics', 'create', '--name', 'Alfa Belleza', '--plan', 'basic'])).stdout.trim();
    // Zeta: one live key, one revoked, one that expires in a day.
    for (const name of ['live', 'revoked']) expect((await run(['keys', 'create', '--clinic', zeta, '--name', name])).code).toBe(0);
    expect((await run(['keys', 'create', '--clinic', zeta, '--name', 'short', '--expires-in', '1d'])).code).toBe(0);
    const revokedId = JSON.parse((await run(['keys', 'list', '--clinic', zeta, '--json'])).stdout).find(
      (k: { name: string }) => k.name === 'revoked',
    ).id;
    expect((await run(['keys', 'revoke', revokedId])).code).toBe(0);

    const list = await run(['clinics', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(
      list.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')),
    ).toEqual([
      [alfa, 'basic (no API)', '0 active keys', 'Europe/Madrid', 'Alfa Belleza'],
      [zeta, 'premium', '2 active keys', 'Europe/Madrid', 'Zeta Estética'],
    ]);
    // Two days later the short key has expired.
    const later = await run(['clinics', 'list', '--json'], NOW + 2 * 86_400_000);
    expect(JSON.parse(later.stdout)).toEqual([
      expect.objectContaining({ id: alfa, name: 'Alfa Belleza', plan: 'basic', api_access: false, active_keys: 0, all_keys: 0 }),
      expect.objectContaining({
        id: zeta,
        name: 'Zeta Estética',
        plan: 'premium',
        api_access: true,
        active_keys: 1,
        all_keys: 3,
        created_at: '2026-03-28T13:00:00+01:00',
      }),
    ]);
  });
});

describe('clinics set-plan', () => {
  it('upgrades a basic clinic so that it can have keys; downgrading says its keys keep working', async () => {
    const clinic = await newClinic('Clínica Plan', 'basic');
    expect((await cli(['keys', 'create', '--clinic', clinic, '--name', 'before'])).code).toBe(3);

    const up = await cli(['clinics', 'set-plan', clinic, 'pro_total']);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toBe(`${clinic}\n`);
    expect(up.stderr).toMatch(/"Clínica Plan": plan basic -> pro_total; its owners can create API keys/);
    expect(
      await withRuntimeAt(
        dataDir,
        async (rt) => (await rt.database.db.selectFrom('clinics').select('plan').where('id', '=', clinic).executeTakeFirstOrThrow()).plan,
      ),
    ).toBe('pro_total');
    const key = await ok(['keys', 'create', '--clinic', clinic, '--name', 'after']);

    const down = await cli(['clinics', 'set-plan', clinic, 'basic', '--json']);
    expect(down.code, down.stderr).toBe(0);
    expect(JSON.parse(down.stdout)).toEqual({
      id: clinic,
      name: 'Clínica Plan',
      plan: 'basic',
      previous_plan: 'pro_total',
      api_access: false,
      active_keys: 1,
    });
    expect(down.stderr).toMatch(/no new API keys; its 1 active key keeps working until revoked \(clinic-api keys list --clinic /);
    // Keys are not plan-checked per request: the existing one still works.
    expect(await withRuntimeAt(dataDir, (rt) => rt.keys.verify(key))).toMatchObject({ clinicId: clinic });
    expect((await cli(['keys', 'create', '--clinic', clinic, '--name', 'again'])).code).toBe(3);

    const same = await cli(['clinics', 'set-plan', clinic, 'basic']);
    expect(same.code).toBe(0);
    expect(same.stderr).toMatch(/plan already basic/);
  });

  it('a plan that does not exist exits 2 listing the plans, and changes nothing', async () => {
    const clinic = await newClinic('Clínica Oro', 'pro');
    const r = await cli(['clinics', 'set-plan', clinic, 'gold']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/plan must be one of basic, pro, pro_total, enterprise, premium, got "gold"/);
    expect(JSON.parse((await cli(['clinics', 'list', '--json'])).stdout).find((c: { id: string }) => c.id === clinic).plan).toBe('pro');
    expect((await cli(['clinics', 'set-plan', clinic])).code).toBe(2); // missing argument
  });
});

describe('users list', () => {
  it("lists a clinic's users, owners first, never a password hash", async () => {
    const clinic = await newClinic('Clínica Gente');
    const other = await newClinic('Clínica Otra');
    await ok(['users', 'create', '--clinic', clinic, '--email', 'b-staff@gente.es', '--role', 'staff']);
    await ok(['users', 'create', '--clinic', clinic, '--email', 'z-owner@gente.es', '--role', 'owner']);
    await ok(['users', 'create', '--clinic', clinic, '--email', 'a-staff@gente.es', '--role', 'staff']);
    await ok(['users', 'create', '--clinic', other, '--email', 'owner@otra.es', '--role', 'owner']);

    const r = await cli(['users', 'list', '--clinic', clinic]);
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(rows.map(([, role, email]) => [role, email])).toEqual([
      ['owner', 'z-owner@gente.es'],
      ['staff', 'a-staff@gente.es'],
      ['staff', 'b-staff@gente.es'],
    ]);
    for (const row of rows) {
      expect(row[0]).toMatch(UUID_RE);
      expect(row[3]).toBe('created 2026-03-28T13:00:00+01:00');
    }
    const json = await cli(['users', 'list', '--clinic', clinic, '--json']);
    const users = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(users).toHaveLength(3);
    expect(users[0]).toEqual({
      id: rows[0]![0],
      email: 'z-owner@gente.es',
      role: 'owner',
      clinic_id: clinic,
      created_at: '2026-03-28T13:00:00+01:00',
    });
    expect(json.stdout).not.toMatch(/scrypt|password/);

    const empty = await newClinic('Clínica Vacía');
    expect(await cli(['users', 'list', '--clinic', empty])).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

describe('users reset-password', () => {
  it('sets a new password, ends every dashboard session of that user (not of others), and prints a generated one on stderr', async () => {
    const clinic = await newClinic('Clínica Reset');
    const oldPassword = 'the old password 123';
    for (const email of ['owner@reset.es', 'staff@reset.es']) {
      await ok(
        [
          'users',
          'create',
          '--clinic',
          clinic,
          '--email',
          email,
          '--role',
          email.startsWith('owner') ? 'owner' : 'staff',
          '--password-stdin',
        ],
        { stdin: `${oldPassword}\n` },
      );
    }
    const PAGE = '/dashboard/settings/api';
    // Signed in to the dashboard (the real app on this DATA_DIR), twice as the owner and once as staff.
    await withRuntimeAt(dataDir, async (rt) => {
      const app = await buildApp(rt);
      try {
        const laptop = new Client(app, '203.0.113.1');
        const phone = new Client(app, '203.0.113.2');
        const staff = new Client(app, '203.0.113.3');
        for (const [c, email] of [
          [laptop, 'owner@reset.es'],
          [phone, 'owner@reset.es'],
          [staff, 'staff@reset.es'],
        ] as const) {
          expect((await c.signIn(email, oldPassword)).statusCode).toBe(303);
          expect((await c.get(PAGE)).statusCode).toBe(200);
        }

        const r = await cli(['users', 'reset-password', '--email', 'Owner@Reset.es']);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
        expect(r.stderr).toMatch(/new password set for owner owner@reset\.es; ended 2 dashboard sessions/);
        const password = /generated password \(shown once\): (\S+)/.exec(r.stderr)![1]!;
        expect(password.length).toBeGreaterThanOrEqual(16);
        expect(r.stdout).not.toContain(password);

        // Both of the owner's sessions are gone at once; staff's is untouched.
        for (const c of [laptop, phone]) {
          const res = await c.get(PAGE);
          expect(res.statusCode).toBe(303);
          expect(res.headers.location).toMatch(/^\/dashboard\/sign-in/);
        }
        expect((await staff.get(PAGE)).statusCode).toBe(200);
        // The old password no longer signs in; the new one does.
        const again = new Client(app, '203.0.113.4');
        expect((await again.signIn('owner@reset.es', oldPassword)).statusCode).not.toBe(303);
        expect((await again.signIn('owner@reset.es', password)).statusCode).toBe(303);
        expect((await again.get(PAGE)).statusCode).toBe(200);
      } finally {
        await app.close();
      }
    });
  });

  it('--password-stdin takes the password from stdin; --json reports it without a password', async () => {
    const clinic = await newClinic('Clínica Stdin');
    const id = await ok(['users', 'create', '--clinic', clinic, '--email', 'o@stdin.es', '--role', 'owner']);
    const r = await cli(['users', 'reset-password', '--email', 'o@stdin.es', '--password-stdin', '--json'], {
      stdin: 'chosen by the owner\nsecond line\n',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ id, email: 'o@stdin.es', role: 'owner', clinic_id: clinic, sessions_ended: 0 });
    expect(r.stderr).not.toMatch(/chosen by the owner|generated password/);
    const hash = await withRuntimeAt(
      dataDir,
      async (rt) =>
        (await rt.database.db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow()).password_hash,
    );
    expect(await verifyPassword('chosen by the owner', hash)).toBe(true);
  });

  it('a short or missing password exits 2 and changes nothing', async () => {
    const clinic = await newClinic('Clínica Corta');
    const id = await ok(['users', 'create', '--clinic', clinic, '--email', 'o@corta.es', '--role', 'owner', '--password-stdin'], {
      stdin: 'a fine password\n',
    });
    for (const [stdin, message] of [
      ['short\n', /at least 10 characters/],
      ['', /no password on stdin/],
    ] as const) {
      const r = await cli(['users', 'reset-password', '--email', 'o@corta.es', '--password-stdin'], { stdin });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
    }
    const hash = await withRuntimeAt(
      dataDir,
      async (rt) =>
        (await rt.database.db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow()).password_hash,
    );
    expect(await verifyPassword('a fine password', hash)).toBe(true);
  });
});

describe('demo', () => {
  it('prints an owner and a working key per clinic; names stay distinct across runs on one database', async () => {
    const dir = dirs.make();
    const first = await runCli(['demo'], { dataDir: dir, now: NOW });
    expect(first.code, first.stderr).toBe(0);
    const second = await runCli(['demo', '--clinics', '2', '--json'], { dataDir: dir, now: NOW });
    expect(second.code, second.stderr).toBe(0);
    const made = JSON.parse(second.stdout) as {
      id: string;
      name: string;
      owner: { email: string; password: string };
      key: { id: string; key: string };
    }[];
    expect(made).toHaveLength(2);

    // The human form: ids on stdout; per clinic, its owner and key on stderr.
    const firstId = first.stdout.trim();
    expect(firstId).toMatch(UUID_RE);
    const owner = /dashboard owner \(password shown once\): (\S+) \/ (\S+)/.exec(first.stderr)!;
    const key = /API key \(shown once\): (svc_[A-Za-z0-9_-]{43})/.exec(first.stderr)!;
    expect(owner, first.stderr).not.toBeNull();
    expect(key, first.stderr).not.toBeNull();
    const all = [
      { id: firstId, owner: { email: owner[1]!, password: owner[2]! }, key: key[1]! },
      ...made.map((m) => ({ id: m.id, owner: m.owner, key: m.key.key })),
    ];

    await withRuntimeAt(dir, async (rt) => {
      const clinics = await rt.database.db.selectFrom('clinics').select(['id', 'name']).execute();
      expect(clinics).toHaveLength(3);
      expect(new Set(clinics.map((c) => c.name)).size).toBe(3);
      expect(made.map((m) => m.name)).toEqual(all.slice(1).map((a) => clinics.find((c) => c.id === a.id)!.name));
      for (const a of all) {
        // in the demo clinic's language (Spanish), as the dashboard shows it
        expect(await rt.keys.verify(a.key)).toMatchObject({ clinicId: a.id, keyName: 'Clave de demostración' });
        const user = await rt.database.db.selectFrom('users').selectAll().where('email', '=', a.owner.email).executeTakeFirstOrThrow();
        expect(user).toMatchObject({ clinic_id: a.id, role: 'owner' });
        expect(await verifyPassword(a.owner.password, user.password_hash)).toBe(true);
      }
    });
    expect(new Set(all.map((a) => a.owner.email)).size).toBe(3);
  });
});

describe('unknown ids', () => {
  it('every command that names a clinic, key or user that does not exist exits 2 naming it', async () => {
    const cases: [string[], string][] = [
      [['keys', 'list', '--clinic', UNKNOWN], UNKNOWN],
      [['keys', 'create', '--clinic', UNKNOWN, '--name', 'x'], UNKNOWN],
      [['keys', 'revoke', UNKNOWN], UNKNOWN],
      [['users', 'list', '--clinic', UNKNOWN], UNKNOWN],
      [['users', 'create', '--clinic', UNKNOWN, '--email', 'x@unknown.es', '--role', 'owner'], UNKNOWN],
      [['users', 'reset-password', '--email', 'nobody@unknown.es'], 'nobody@unknown.es'],
      [['clinics', 'set-plan', UNKNOWN, 'premium'], UNKNOWN],
      [['import', '--clinic', UNKNOWN, '-'], UNKNOWN],
      [['keys', 'list', '--clinic', 'not-an-id'], 'not-an-id'],
    ];
    for (const [argv, named] of cases) {
      const r = await cli(argv, { stdin: '' });
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stdout, argv.join(' ')).toBe('');
      expect(r.stderr, argv.join(' ')).toContain(named);
    }
  });

  it('a key pasted where its id belongs is refused without repeating it, pointing at keys list', async () => {
    const clinic = await newClinic('Clínica Pegada');
    const key = await ok(['keys', 'create', '--clinic', clinic, '--name', 'pasted']);
    for (const argv of [
      ['keys', 'revoke', key],
      ['keys', 'revoke', ` ${key} `],
      ['keys', 'revoke', key, '--json'],
    ]) {
      const r = await cli(argv);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/that is an API key, not a key id/);
      expect(r.stderr).toMatch(/clinic-api keys list --clinic/);
      expect(r.stderr).toContain(`…${key.slice(-4)}`);
      expect(r.stderr).not.toContain(key.slice(4, -4));
    }
    expect(await withRuntimeAt(dataDir, (rt) => rt.keys.verify(key))).toMatchObject({ clinicId: clinic });
  });
});
