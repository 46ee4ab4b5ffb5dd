// Test mode from the command line: `keys create --test` makes a <prefix>_test_ key (and the
// clinic's sandbox), `keys list` says which keys are test keys, `sandbox reset --clinic` gives the
// sandbox fresh data, `import` into a sandbox is refused naming its clinic, `logs --test` shows
// test mode's requests apart, and `clinics list` never lists a sandbox as a clinic. In-process on
// a temporary DATA_DIR (SQLite), the clock fixed.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getClinic } from '../../src/repos/clinics.js';
import { runCli, tempDirs, withRuntimeAt, type Run } from './in-process.js';

const NOW = Date.UTC(2026, 2, 28, 12, 0, 0);
const dirs = tempDirs('clinic-sandbox-cli-');
let dataDir: string;
const cli = (argv: string[], now = NOW): Promise<Run> => runCli(argv, { dataDir, now });

beforeAll(() => {
  dataDir = dirs.make();
});
afterAll(() => dirs.cleanup());

describe('test mode commands', () => {
  it('keys create --test, keys list, sandbox reset, and a refused import into the sandbox', async () => {
    const clinicId = (await cli(['clinics', 'create', '--name', 'Clínica Pruebas', '--plan', 'premium'])).stdout.trim();
    const made = await cli(['keys', 'create', '--clinic', clinicId, '--name', 'Sandbox', '--test', '--json']);
    expect(made.code, made.stderr).toBe(0);
    const key = JSON.parse(made.stdout);
    expect(key).toMatchObject({ mode: 'test', name: 'Sandbox' });
    expect(key.key).toMatch(/^svc_test_[A-Za-z0-9_-]{43}$/);
    const live = JSON.parse((await cli(['keys', 'create', '--clinic', clinicId, '--name', 'Live', '--json'])).stdout);
    expect(live.mode).toBe('live');

    const listed = JSON.parse((await cli(['keys', 'list', '--clinic', clinicId, '--json'])).stdout) as { id: string; mode: string }[];
    expect(Object.fromEntries(listed.map((k) => [k.id, k.mode]))).toEqual({ [key.id]: 'test', [live.id]: 'live' });
    const text = (await cli(['keys', 'list', '--clinic', clinicId])).stdout;
    expect(
      text
        .split('\n')
        .find((l) => l.startsWith(key.id))!
        .split('\t')[1],
    ).toBe('active test key');
    expect(
      text
        .split('\n')
        .find((l) => l.startsWith(live.id))!
        .split('\t')[1],
    ).toBe('active');

    // The sandbox is no clinic of the list.
    const clinics = JSON.parse((await cli(['clinics', 'list', '--json'])).stdout) as { id: string }[];
    expect(clinics.map((c) => c.id)).toEqual([clinicId]);

    const sandboxId = (await withRuntimeAt(dataDir, (rt) => rt.sandboxes.find(clinicId)))!;
    expect(sandboxId).not.toBeNull();
    const reset = await cli(['sandbox', 'reset', '--clinic', clinicId, '--json']);
    expect(reset.code, reset.stderr).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({ clinic_id: clinicId, sandbox_id: sandboxId, clientas: 30 });

    const file = path.join(dataDir, 'lines.jsonl');
    writeFileSync(file, `${JSON.stringify({ type: 'cita', id: '00000000-0000-4000-8000-000000000001', deleted: true })}\n`);
    const refused = await cli(['import', '--clinic', sandboxId, file]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`sandbox of clinic ${clinicId}`);
    expect(refused.stderr).toContain('nothing can be imported');

    // logs --test: the requests of test keys (recorded under the sandbox), apart from live ones.
    await withRuntimeAt(dataDir, async (rt) => {
      const entry = (clinic: string, requestId: string, keyId: string) =>
        rt.requestLog!.record({
          clinicId: clinic,
          atMs: NOW - 1_000,
          requestId,
          keyId,
          grantId: null,
          method: 'GET',
          url: '/api/v1/citas',
          status: 200,
          errorCode: null,
          durationMs: 2,
          records: 0,
          ip: '203.0.113.9',
          userAgent: 'test',
          errorBody: null,
          clientas: null,
        });
      entry(sandboxId, 'req-test', key.id);
      entry(clinicId, 'req-live', live.id);
      await rt.requestLog!.flush();
    });
    const requestIds = async (...extra: string[]) =>
      (await cli(['logs', '--clinic', clinicId, ...extra])).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).request_id);
    expect(await requestIds('--test')).toEqual(['req-test']);
    expect(await requestIds()).toEqual(['req-live']);

    // The sandbox follows its clinic's plan.
    expect((await cli(['clinics', 'set-plan', clinicId, 'enterprise'])).code).toBe(0);
    expect((await withRuntimeAt(dataDir, (rt) => getClinic(rt.database.db, sandboxId)))!.plan).toBe('enterprise');

    const unknown = await cli(['sandbox', 'reset', '--clinic', '00000000-0000-4000-8000-000000000009']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('no clinic with id');
  });
});
