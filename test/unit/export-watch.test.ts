// What the log says of the trace exports (telemetry/export-watch.ts): a warning at the first
// failure, one a minute while failures go on (with their count), a line when the collector takes
// spans again, and nothing while it works.
import { describe, expect, it } from 'vitest';
import { collectorName, exportFailure, exportNotice, HEALTHY, REPEAT_MS, type ExportWatch } from '../../src/telemetry/export-watch.js';

const C = 'https://otel.example.com/v1/traces';
const fail = { ok: false as const, reason: 'HTTP 401 Unauthorized' };

/** Runs outcomes at the given times; the notices written, as [time, level, failedExports]. */
function run(steps: [number, boolean][]): [number, string, number][] {
  let s: ExportWatch = HEALTHY;
  const out: [number, string, number][] = [];
  for (const [at, ok] of steps) {
    const r = exportNotice(s, ok ? { ok: true } : fail, at, C);
    s = r.state;
    if (r.notice) out.push([at, r.notice.level, r.notice.fields.failedExports as number]);
  }
  return out;
}

describe('exportNotice', () => {
  it('says nothing while the collector takes every batch', () => {
    expect(
      run([
        [0, true],
        [5_000, true],
        [10 * REPEAT_MS, true],
      ]),
    ).toEqual([]);
  });

  it('warns at the first failure, then once a minute with the failures since, and once when it works again', () => {
    expect(
      run([
        [0, true],
        [1_000, false],
        [6_000, false],
        [11_000, false],
        [1_000 + REPEAT_MS - 1, false],
        [1_000 + REPEAT_MS, false],
        [2_000 + REPEAT_MS, true],
        [3_000 + REPEAT_MS, true],
        [4_000 + REPEAT_MS, false],
      ]),
    ).toEqual([
      [1_000, 'warn', 1],
      [1_000 + REPEAT_MS, 'warn', 4],
      [2_000 + REPEAT_MS, 'info', 5],
      [4_000 + REPEAT_MS, 'warn', 1],
    ]);
  });

  it('names the collector and the reason, and says what to check', () => {
    const { notice } = exportNotice(HEALTHY, fail, 0, C);
    expect(notice).toEqual({
      level: 'warn',
      fields: { collector: C, reason: 'HTTP 401 Unauthorized', failedExports: 1 },
      msg: expect.stringContaining('OTEL_EXPORTER_OTLP_HEADERS'),
    });
  });
});

describe('exportFailure and collectorName', () => {
  it("an HTTP status with its text, a network error's code, never the collector's body", () => {
    const http = Object.assign(new Error('Unauthorized'), { code: 401, data: '{"secret":"echoed"}' });
    expect(exportFailure(http)).toBe('HTTP 401 Unauthorized');
    expect(exportFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4318'), { code: 'ECONNREFUSED' }))).toBe('ECONNREFUSED');
    expect(exportFailure(new Error('Request timed out'))).toBe('Request timed out');
    expect(exportFailure(undefined)).toBe('unknown error');
  });

  it('the URL without a user name, password or query', () => {
    expect(collectorName('https://user:pw@otel.example.com:4318/v1/traces?api-key=abc')).toBe('https://otel.example.com:4318/v1/traces');
  });
});
