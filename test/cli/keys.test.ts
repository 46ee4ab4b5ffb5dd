// The key commands of least privilege (docs/cli.md and "Scopes"): create with --scopes and
// --allowed-ips, list showing them, update, roll with an overlap; every bad value refused with
// exit 2, a message naming it and the valid choices, and nothing created or changed. In-process on
// a temporary DATA_DIR (SQLite), the command's clock fixed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { formatTimestamp } from '../../src/time.js';
import { runCli, tempDirs, withRuntimeAt, type Run } from './in-process.js';

const NOW = Date.UTC(2026, 2, 28, 12, 0, 0);
const NOW_S = NOW / 1000;
const KEY_LINE_RE = /^svc_[A-Za-z0-9_-]{43}\n$/;
const ALL = ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read'];

const dirs = tempDirs('clinic-keys-cli-');
let dataDir: string;
const cli = (argv: string[], now = NOW): Promise<Run> => runCli(argv, { dataDir, now });

async function clinic(): Promise<string> {
  const r = await cli(['clinics', 'create', '--name', 'Clínica Llaves', '--plan', 'premium']);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

const list = async (clinicId: string, now = NOW) => JSON.parse((await cli(['keys', 'list', '--clinic', clinicId, '--json'], now)).stdout);

async function created(clinicId: string, ...extra: string[]) {
  const r = await cli(['keys', 'create', '--clinic', clinicId, '--name', 'Zapier', '--json', ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/** The command refused with exit 2, naming `...mentions`, printing nothing on stdout. */
function refused(r: Run, ...mentions: string[]) {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  for (const m of mentions) expect(r.stderr).toContain(m);
}

beforeAll(() => {
  dataDir = dirs.make();
});
afterAll(() => dirs.cleanup());

describe('keys create --scopes --allowed-ips', () => {
  it('makes a key with those scopes and addresses (canonical), listed with --json; the key reads as they say', async () => {
    const c = await clinic();
    const body = await created(c, '--scopes', 'contacto:read, citas:read', '--allowed-ips', '2001:DB8::1,203.0.113.0/24 203.0.113.0/24');
    expect(body).toMatchObject({
      scopes: ['citas:read', 'contacto:read'],
      allowed_ips: ['2001:db8::1', '203.0.113.0/24'],
      expires_at: null,
    });
    expect(await list(c)).toEqual([
      expect.objectContaining({
        id: body.id,
        scopes: ['citas:read', 'contacto:read'],
        allowed_ips: ['2001:db8::1', '203.0.113.0/24'],
        expires_at: null,
        replaced_by: null,
      }),
    ]);
    const k = await withRuntimeAt(dataDir, (rt) => rt.keys.verify(body.key));
    expect(k).toMatchObject({ scopes: ['citas:read', 'contacto:read'] });
    expect(k!.allowedIps!.allows('203.0.113.40')).toBe(true);
    expect(k!.allowedIps!.allows('198.51.100.1')).toBe(false);
    // the text list ends with the scopes
    expect((await cli(['keys', 'list', '--clinic', c])).stdout.trim().split('\t').at(-1)).toBe('citas:read,contacto:read');
  });

  it('without --scopes a key gets all five, from any address', async () => {
    const c = await clinic();
    const r = await cli(['keys', 'create', '--clinic', c, '--name', 'all']);
    expect(r.stdout).toMatch(KEY_LINE_RE);
    expect(r.stderr).toContain(ALL.join(', '));
    expect(await list(c)).toEqual([expect.objectContaining({ scopes: ALL, allowed_ips: null })]);
  });

  it.each([
    [
      ['--scopes', 'citas:write'],
      ['"citas:write"', ALL.join(', ')],
    ],
    [
      ['--scopes', 'citas:read,contactos:read'],
      ['"contactos:read"', ALL.join(', ')],
    ],
    [
      ['--scopes', ' , '],
      ['at least one scope', ALL.join(', ')],
    ],
    [
      ['--allowed-ips', '203.0.113.0/33'],
      ['"203.0.113.0/33"', 'CIDR', 'e.g. 203.0.113.7'],
    ],
    [
      ['--allowed-ips', '203.0.113.7/24'],
      ['"203.0.113.7/24"', 'the range is 203.0.113.0/24'],
    ],
    [['--allowed-ips', 'office'], ['"office"']],
    [
      ['--allowed-ips', '10.0.0.1,999.1.1.1,fe80::1%eth0'],
      ['"999.1.1.1"', '"fe80::1%eth0"'],
    ],
  ])('%j is refused with exit 2, naming the value and the valid forms; nothing is created', async (extra, mentions) => {
    const c = await clinic();
    refused(await cli(['keys', 'create', '--clinic', c, '--name', 'x', ...extra]), ...mentions);
    expect(await list(c)).toEqual([]);
  });
});

describe('keys update', () => {
  it('renames a key and changes its scopes and addresses; stdout is the id; the next verify reads the change', async () => {
    const c = await clinic();
    const k = await created(c);
    const r = await cli(['keys', 'update', k.id, '--name', 'Make', '--scopes', 'llamadas:read', '--allowed-ips', '198.51.100.0/24']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${k.id}\n`);
    expect(r.stderr).toContain('updated key');
    expect(r.stderr).toContain('running servers use it within 5 seconds');
    expect((await list(c))[0]).toMatchObject({ name: 'Make', scopes: ['llamadas:read'], allowed_ips: ['198.51.100.0/24'] });
    expect(await withRuntimeAt(dataDir, (rt) => rt.keys.verify(k.key))).toMatchObject({ keyName: 'Make', scopes: ['llamadas:read'] });
    // only what is given changes; none lifts the restriction
    expect((await cli(['keys', 'update', k.id, '--allowed-ips', 'none', '--json'])).code).toBe(0);
    expect((await list(c))[0]).toMatchObject({ name: 'Make', scopes: ['llamadas:read'], allowed_ips: null });
  });

  it('refuses nothing to change, bad values, an unknown id, a pasted key and a revoked key; nothing changes', async () => {
    const c = await clinic();
    const k = await created(c, '--scopes', 'citas:read');
    const before = await list(c);
    refused(await cli(['keys', 'update', k.id]), 'nothing to change', '--scopes');
    refused(await cli(['keys', 'update', k.id, '--scopes', 'citas:read,everything']), '"everything"', ALL.join(', '));
    refused(await cli(['keys', 'update', k.id, '--name', 'x', '--allowed-ips', '1.2.3']), '"1.2.3"');
    refused(await cli(['keys', 'update', '00000000-0000-4000-8000-000000000000', '--name', 'x']), 'no API key with id');
    const pasted = await cli(['keys', 'update', k.key, '--name', 'x']);
    refused(pasted, 'that is an API key, not a key id');
    expect(pasted.stderr).not.toContain(k.key);
    expect(await list(c)).toEqual(before);
    expect((await cli(['keys', 'revoke', k.id])).code).toBe(0);
    refused(await cli(['keys', 'update', k.id, '--name', 'x']), 'revoked');
    expect((await list(c))[0].name).toBe('Zapier');
  });
});

describe('keys roll', () => {
  it('makes a new key with the same name, scopes and addresses, printed once; the old one works for 24 hours, then expires', async () => {
    const c = await clinic();
    const old = await created(c, '--scopes', 'citas:read,eventos:read', '--allowed-ips', '203.0.113.0/24');
    const r = await cli(['keys', 'roll', old.id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(KEY_LINE_RE);
    const fresh = r.stdout.trim();
    expect(r.stderr).not.toContain(fresh);
    expect(r.stderr).toContain(`The old key works until 2026-03-29T14:00:00+02:00`);
    const keys = await list(c);
    const next = keys.find((k: { id: string }) => k.id !== old.id);
    expect(keys).toHaveLength(2);
    expect(next).toMatchObject({
      name: 'Zapier',
      scopes: ['citas:read', 'eventos:read'],
      allowed_ips: ['203.0.113.0/24'],
      status: 'active',
      expires_at: null,
    });
    expect(keys.find((k: { id: string }) => k.id === old.id)).toMatchObject({
      status: 'active',
      // in the clinic's zone (Europe/Madrid), as the API and the dashboard write times: summer time from the 29th at 02:00
      expires_at: '2026-03-29T14:00:00+02:00',
      replaced_by: next.id,
    });
    // both work during the overlap; afterwards only the new one
    const verify = async (key: string, at: number) => {
      const rt = await openRuntime(loadConfig({ DATA_DIR: dataDir }), { logTo: false, now: () => at });
      try {
        return (await rt.keys.verify(key))?.keyName ?? null;
      } finally {
        await rt.close();
      }
    };
    const end = NOW + 86_400_000;
    expect([await verify(fresh, NOW), await verify(old.key, NOW), await verify(old.key, end - 1000)]).toEqual([
      'Zapier',
      'Zapier',
      'Zapier',
    ]);
    expect([await verify(fresh, end), await verify(old.key, end)]).toEqual(['Zapier', null]);
    const later = await list(c, NOW + 86_400_000);
    expect(later.find((k: { id: string }) => k.id === old.id).status).toBe('expired');
    expect(later.find((k: { id: string }) => k.id === next.id).status).toBe('active');
  });

  it('the old key is marked "ends at" in the list and follows the new one: update and revoke reach it; it may be revoked alone', async () => {
    const c = await clinic();
    const old = await created(c);
    const fresh = (await cli(['keys', 'roll', old.id, '--overlap', '3d'])).stdout.trim();
    const keys = await list(c);
    const next = keys.find((k: { id: string }) => k.id !== old.id);
    expect(keys.find((k: { id: string }) => k.id === old.id)).toMatchObject({ status: 'active', ends_at: '2026-03-31T14:00:00+02:00' });
    expect(next).toMatchObject({ status: 'active', ends_at: null });
    const table = (await cli(['keys', 'list', '--clinic', c])).stdout;
    expect(table).toContain(`${old.id}\tactive, ends at 2026-03-31T14:00:00+02:00 (replaced by ${next.id})\t`);
    expect(table).toContain(`${next.id}\tactive\t`);
    // an old key is not changed on its own
    refused(await cli(['keys', 'update', old.id, '--scopes', 'citas:read']), 'was rolled', next.id);
    const scopesOf = async (key: string) => {
      const rt = await openRuntime(loadConfig({ DATA_DIR: dataDir }), { logTo: false, now: () => NOW });
      try {
        return (await rt.keys.verify(key))?.scopes ?? null;
      } finally {
        await rt.close();
      }
    };
    const up = await cli(['keys', 'update', next.id, '--scopes', 'citas:read', '--allowed-ips', '203.0.113.0/24']);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stderr).toContain(`so is the key it replaced, still in its overlap (${old.id})`);
    expect(await scopesOf(old.key)).toEqual(['citas:read']);
    expect((await list(c)).find((k: { id: string }) => k.id === old.id)).toMatchObject({
      scopes: ['citas:read'],
      allowed_ips: ['203.0.113.0/24'],
    });
    const gone = await cli(['keys', 'revoke', next.id, '--json']);
    expect(gone.code, gone.stderr).toBe(0);
    expect(JSON.parse(gone.stdout)).toEqual({ id: next.id, revoked: true, also_revoked: [old.id] });
    expect(gone.stderr).toContain(`and the key it replaced, still in its overlap (${old.id})`);
    expect([await scopesOf(old.key), await scopesOf(fresh)]).toEqual([null, null]);
    expect((await list(c)).map((k: { status: string; ends_at: string | null }) => [k.status, k.ends_at])).toEqual([
      ['revoked', null],
      ['revoked', null],
    ]);
    // revoking an old key alone: its replacement keeps working
    const other = await created(c);
    const otherNew = (await cli(['keys', 'roll', other.id])).stdout.trim();
    expect((await cli(['keys', 'revoke', other.id])).code).toBe(0);
    expect([await scopesOf(other.key), await scopesOf(otherNew)]).toEqual([null, ALL]);
  });

  it('--overlap 0 ends the old key at once; --json gives the new key and what it replaces', async () => {
    const c = await clinic();
    const old = await created(c);
    const r = await cli(['keys', 'roll', old.id, '--overlap', '0', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body).toMatchObject({
      name: 'Zapier',
      replaces: old.id,
      old_expires_at: '2026-03-28T13:00:00+01:00',
      scopes: ALL,
      allowed_ips: null,
    });
    expect(`${body.key}\n`).toMatch(KEY_LINE_RE);
    expect((await list(c)).find((k: { id: string }) => k.id === old.id).status).toBe('expired');
  });

  it('a key that expires keeps its lifetime: the new one lasts as long from now; the old one never gains time', async () => {
    const c = await clinic();
    const old = await created(c, '--expires-in', '30d');
    const at = NOW + 29.5 * 86_400_000;
    const r = await cli(['keys', 'roll', old.id, '--overlap', '7d', '--json'], at);
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body.expires_at).toBe(formatTimestamp((at + 30 * 86_400_000) / 1000, 'Europe/Madrid'));
    // it was due in 12 hours: the 7 days of overlap do not extend it
    expect(body.old_expires_at).toBe(formatTimestamp(NOW_S + 30 * 86_400, 'Europe/Madrid'));
  });

  it('refuses an overlap out of range, a key rolled already, a revoked one and an unknown id; nothing is created', async () => {
    const c = await clinic();
    const old = await created(c);
    for (const bad of ['8d', '169h', '-1h', '1w', 'soon', '24 h']) {
      refused(await cli(['keys', 'roll', old.id, '--overlap', bad]), `"${bad}"`, 'from 0 to 7d');
    }
    expect(await list(c)).toHaveLength(1);
    expect((await cli(['keys', 'roll', old.id])).code).toBe(0);
    const next = (await list(c)).find((k: { id: string }) => k.id !== old.id);
    refused(await cli(['keys', 'roll', old.id]), 'was rolled already', next.id);
    expect((await cli(['keys', 'revoke', next.id])).code).toBe(0);
    refused(await cli(['keys', 'roll', next.id]), 'is revoked');
    refused(await cli(['keys', 'roll', '00000000-0000-4000-8000-000000000000']), 'no API key with id');
    expect(await list(c)).toHaveLength(2);
  });
});
