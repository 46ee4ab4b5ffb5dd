// The process's logger (pino), made once by the runtime and used by the app (Fastify's logger
// is a child of it) and by every background service. Lines are JSON, one object per line, for
// log collectors; on a terminal (LOG_FORMAT=auto, the default, when stdout is a TTY) or with
// LOG_FORMAT=pretty they are written as short human lines instead, so that a first `npm start`
// shows its warnings in the same plain form as its banner. Secrets are masked either way
// (http/log.ts's serializers run before the line is formatted).
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.js';
import { logSerializers } from './http/log.js';

export type { Logger };

/** Where log lines go: a stream pino writes each line to (tests read them), else stdout. */
export type LogDestination = DestinationStream & { isTTY?: boolean };

/** JSON, or human lines: LOG_FORMAT, with `auto` decided by whether the lines reach a terminal. */
export function logFormat(setting: Config['logFormat'], toTerminal: boolean): 'json' | 'pretty' {
  if (setting === 'auto') return toTerminal ? 'pretty' : 'json';
  return setting;
}

const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
/** Fields every line has, or that say nothing on a terminal. */
const LEFT_OUT = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'err']);

function fieldValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

/**
 * One JSON log line as a human line: the time (UTC, never the machine's zone), the level, the
 * message, then the other fields as key=value; an error's stack on the lines below, indented.
 */
export function humanLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = typeof o.time === 'number' ? new Date(o.time).toISOString().slice(11, 19) : '--:--:--';
  const level = (LEVELS[o.level as number] ?? String(o.level)).padEnd(5);
  const fields = Object.entries(o)
    .filter(([k, v]) => !LEFT_OUT.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${fieldValue(v)}`);
  const err = o.err as { message?: string; stack?: string } | undefined;
  const head = [`${time} ${level} ${String(o.msg ?? '')}`, ...(err?.message ? [`error=${fieldValue(err.message)}`] : []), ...fields].join(
    '  ',
  );
  const stack =
    typeof err?.stack === 'string'
      ? err.stack
          .split('\n')
          .slice(1)
          .map((l) => `    ${l.trim()}\n`)
          .join('')
      : '';
  return `${head}\n${stack}`;
}

/** A pino destination that writes each line in human form to `out`. */
function humanStream(out: { write(s: string): unknown }): DestinationStream {
  return { write: (line: string) => void out.write(humanLine(line)) };
}

/**
 * The logger for `config` (LOG_LEVEL, LOG_FORMAT, API_KEY_PREFIX for the masks). `to`: where
 * lines go (default stdout); `false`: nowhere (the CLI, whose stdout is its result).
 */
export function makeLogger(config: Config, to?: LogDestination | false): Logger {
  const options = { level: to === false ? 'silent' : config.logLevel, serializers: logSerializers(config.apiKeyPrefix) };
  if (to === false) return pino(options);
  const format = logFormat(config.logFormat, Boolean(to === undefined ? process.stdout.isTTY : to.isTTY));
  if (format === 'pretty') return pino(options, humanStream(to ?? process.stdout));
  return to === undefined ? pino(options) : pino(options, to);
}
