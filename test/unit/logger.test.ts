// The process's log lines (docs/operations.md, "Logs"): JSON for collectors, human lines on a
// terminal (LOG_FORMAT), secrets masked either way.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { humanLine, logFormat, makeLogger } from '../../src/logger.js';

/** A destination that keeps what it is given, on a terminal or not. */
function sink(isTTY: boolean) {
  const lines: string[] = [];
  return { lines, stream: { isTTY, write: (s: string) => void lines.push(s) } };
}

describe('LOG_FORMAT', () => {
  it('auto is human on a terminal and JSON elsewhere; json and pretty are what they say', () => {
    expect(logFormat('auto', true)).toBe('pretty');
    expect(logFormat('auto', false)).toBe('json');
    expect(logFormat('json', true)).toBe('json');
    expect(logFormat('pretty', false)).toBe('pretty');
  });

  it('a logger on a terminal writes human lines; off one, JSON objects', () => {
    const config = loadConfig({});
    const tty = sink(true);
    makeLogger(config, tty.stream).warn({ redis: 'redis:6379' }, 'Redis does not answer');
    expect(tty.lines).toHaveLength(1);
    expect(tty.lines[0]).toMatch(/^\d\d:\d\d:\d\d warn {2}Redis does not answer {2}redis=redis:6379\n$/);
    const pipe = sink(false);
    makeLogger(config, pipe.stream).warn({ redis: 'redis:6379' }, 'Redis does not answer');
    expect(JSON.parse(pipe.lines[0]!)).toMatchObject({ level: 40, msg: 'Redis does not answer', redis: 'redis:6379' });
    const forced = sink(true);
    makeLogger(loadConfig({ LOG_FORMAT: 'json' }), forced.stream).info('x');
    expect(JSON.parse(forced.lines[0]!)).toMatchObject({ level: 30, msg: 'x' });
  });

  it('human lines mask keys as JSON lines do (the serializers run first)', () => {
    const key = `svc_${'k'.repeat(43)}`;
    const tty = sink(true);
    makeLogger(loadConfig({}), tty.stream).error({ err: new Error(`bad key ${key}`) }, 'failed');
    expect(tty.lines.join('')).not.toContain(key);
    expect(tty.lines.join('')).toContain('[redacted]');
  });
});

describe('humanLine', () => {
  it('time in UTC, level, message, then the other fields; an error with its stack indented below', () => {
    const at = Date.UTC(2026, 2, 28, 23, 59, 58);
    expect(
      humanLine(JSON.stringify({ level: 30, time: at, pid: 1, hostname: 'h', msg: 'clinic-api listening', address: 'http://x', n: 3 })),
    ).toBe('23:59:58 info  clinic-api listening  address=http://x  n=3\n');
    expect(
      humanLine(
        JSON.stringify({ level: 50, time: at, msg: 'x', err: { message: 'boom now', stack: 'Error: boom now\n    at f (a.js:1:1)' } }),
      ),
    ).toBe('23:59:58 error x  error="boom now"\n    at f (a.js:1:1)\n');
    expect(humanLine(JSON.stringify({ level: 40, time: at, msg: 'm', where: 'a b', what: { k: 1 } }))).toBe(
      '23:59:58 warn  m  where="a b"  what={"k":1}\n',
    );
  });

  it('passes a line that is not JSON through as it is', () => {
    expect(humanLine('not json')).toBe('not json\n');
  });
});
