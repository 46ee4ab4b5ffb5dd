// `clinic-api apps list --clinic ID` and `apps revoke GRANT_ID` (docs/cli.md): a clinic's
// connected apps with their scopes and who connected them; revoking one ends it and removes its
// tokens; an unknown or malformed grant id is an exit-2 error naming the fix. In-process on a
// temporary DATA_DIR.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/services/accounts.js';
import { runCli, tempDirs, withRuntimeAt, type RunOptions } from './in-process.js';

const NOW = Date.UTC(2026, 2, 28, 12, 0, 0);
const dirs = tempDirs('clinic-apps-');
let dataDir: string;
const cli = (argv: string[], opts: Partial<RunOptions> = {}) => runCli(argv, { dataDir, now: NOW, ...opts });

beforeAll(() => {
  dataDir = dirs.make();
});
afterAll(() => dirs.cleanup());

describe('apps', () => {
  it('lists a clinic’s connected apps and revokes one by its grant id', async () => {
    const clinic = (await cli(['clinics', 'create', '--name', 'Uno', '--plan', 'premium'])).stdout.trim();
    const other = (await cli(['clinics', 'create', '--name', 'Dos', '--plan', 'premium'])).stdout.trim();
    const grantId = 'g'.repeat(43);
    await withRuntimeAt(dataDir, async (rt) => {
      const user = await createUser(rt.database.db, {
        clinicId: clinic,
        email: 'owner@uno.example',
        role: 'owner',
        password: 'correct horse battery',
      });
      await rt.appGrants.recordConsent({
        grantId,
        clinicId: clinic,
        clientId: 'client-1',
        clientName: 'Claude',
        redirectHost: 'claude.ai',
        scopes: ['llamadas:read', 'citas:read'],
        resource: 'https://api.example.com/mcp',
        grantedBy: user.id,
      });
    });
    const list = await cli(['apps', 'list', '--clinic', clinic, '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({
        id: grantId,
        app: 'Claude',
        status: 'active',
        scopes: ['citas:read', 'llamadas:read'],
        mode: 'live',
        granted_by: 'owner@uno.example',
        last_used_at: null,
      }),
    ]);
    // The text names the resource: an app's REST and MCP connections are told apart.
    expect((await cli(['apps', 'list', '--clinic', clinic])).stdout.split('\t')[2]).toBe('Claude (MCP)');
    expect(JSON.parse((await cli(['apps', 'list', '--clinic', other, '--json'])).stdout)).toEqual([]);

    const revoked = await cli(['apps', 'revoke', grantId]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).toContain(`revoked grant ${grantId}`);
    expect(JSON.parse((await cli(['apps', 'list', '--clinic', clinic, '--json'])).stdout)[0]).toMatchObject({ status: 'disconnected' });
    expect((await cli(['apps', 'revoke', grantId])).stderr).toContain('already revoked');

    const unknown = await cli(['apps', 'revoke', 'h'.repeat(43)]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('apps list --clinic');
    const malformed = await cli(['apps', 'revoke', 'not a grant']);
    expect(malformed.code).toBe(2);
  });
});
