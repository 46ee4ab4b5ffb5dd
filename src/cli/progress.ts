// Progress of long commands (import, demo) on stderr: a bar when stderr is a terminal, else a
// plain line every few seconds, so logs of a CI job or a cron run stay readable.
import cliProgress from 'cli-progress';
import type { Writable } from 'node:stream';

export interface Progress {
  /** `done` of `total` units; `detail` is shown after the numbers (e.g. "1,200,000 lines"). */
  update(done: number, detail?: string): void;
  stop(): void;
}

export interface ProgressOptions {
  label: string;
  /** null when unknown (stdin): no bar, just the plain lines. */
  total: number | null;
  unit: string;
  /** seconds between plain lines */
  everySeconds?: number;
  now?: () => number;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export function startProgress(stream: Writable & { isTTY?: boolean }, opts: ProgressOptions): Progress {
  const now = opts.now ?? Date.now;
  const started = now();
  if (stream.isTTY && opts.total !== null && opts.total > 0) {
    const bar = new cliProgress.SingleBar(
      {
        stream: stream as NodeJS.WritableStream,
        format: `${opts.label} [{bar}] {percentage}% | {detail} | {rate}/s | ETA {eta_formatted}`,
        barsize: 30,
        hideCursor: true,
        etaBuffer: 50,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(opts.total, 0, { detail: '', rate: '0' });
    return {
      update(done, detail) {
        const secs = Math.max((now() - started) / 1000, 0.001);
        bar.update(done, { detail: detail ?? `${fmt(done)} ${opts.unit}`, rate: fmt(done / secs) });
      },
      stop() {
        bar.stop();
      },
    };
  }
  const every = (opts.everySeconds ?? 5) * 1000;
  let last = started;
  return {
    update(done, detail) {
      const t = now();
      if (t - last < every) return;
      last = t;
      const pct = opts.total ? ` (${Math.min(100, Math.floor((done / opts.total) * 100))}%)` : '';
      const rate = done / Math.max((t - started) / 1000, 0.001);
      stream.write(`${opts.label}: ${detail ?? `${fmt(done)} ${opts.unit}`}${pct}, ${fmt(rate)} ${opts.unit}/s\n`);
    },
    stop() {},
  };
}
