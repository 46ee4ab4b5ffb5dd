// src/time.ts in processes whose machine zone is far from UTC: the key results (time-probe.ts)
// computed here (TZ=UTC) and in child processes started under three far-off zones must agree,
// since nothing in the time module may depend on the machine's zone. In the processes project
// (it starts processes); the hand-worked cases are in time.test.ts.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { probe } from './time-probe.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const s = (iso: string) => Date.parse(iso) / 1000;

describe('independence from the machine time zone', () => {
  it('in-process (TZ=UTC) and child processes under TZ=Pacific/Kiritimati, America/Los_Angeles and Asia/Kathmandu agree', async () => {
    const here = probe();
    expect(here.machine.offsetMinutes).toBe(0);
    const zones = ['Pacific/Kiritimati', 'America/Los_Angeles', 'Asia/Kathmandu'];
    const children = await Promise.all(
      zones.map(async (TZ) => {
        const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/unit/time-probe.ts'], {
          cwd: ROOT,
          env: { ...process.env, TZ },
          timeout: 60_000,
        });
        return JSON.parse(stdout) as ReturnType<typeof probe>;
      }),
    );
    // The children really ran in those zones (getTimezoneOffset is minutes *behind* UTC; ICU may
    // report Kathmandu under its older spelling, so the offsets are the proof)...
    expect(children.map((c) => c.machine.offsetMinutes)).toEqual([-14 * 60, 8 * 60, -(5 * 60 + 45)]);
    // ...and computed exactly what this process computed.
    for (const c of children) expect(c.results).toEqual(here.results);
    // Spot-check that the shared results are the right ones, not merely equal.
    expect(here.results.ranges[0]![1]).toEqual({ start: s('2026-03-28T23:00:00Z'), end: s('2026-03-29T22:00:00Z') });
    expect(here.results.formatted[3]![0]).toBe('2026-01-08T17:45:00+05:45');
  });
});
