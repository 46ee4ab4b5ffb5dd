// The write-behind of what is collected on the request's path (the request log's entries, the
// usage counts): one write at a time, one every few seconds while started, and a last one at
// close. The owner says what a write is and keeps what a failed write could not store for the
// next one; a timer's write that fails is reported, never thrown.
import { runInBackground, type BackgroundErrorHandler } from './background.js';
import { BACKGROUND_WRITE_WAIT_MS, INTERACTIVE_WRITE_WAIT_MS } from './write-lock.js';

export interface PeriodicWriterOptions {
  onError?: BackgroundErrorHandler;
  /** whether the timer's write has anything to do (default: always write) */
  due?: () => boolean;
}

export class PeriodicWriter {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();

  /**
   * @param task named in the reports of a failed write
   * @param writeOnce one write; while another process holds SQLite's write lock it waits at most `lockWaitMs`
   */
  constructor(
    private readonly task: string,
    private readonly writeOnce: (lockWaitMs: number) => Promise<void>,
    private readonly opts: PeriodicWriterOptions = {},
  ) {}

  /** Writes now, after the write under way if there is one: writes never overlap. Rejects when this write fails. */
  write(lockWaitMs = BACKGROUND_WRITE_WAIT_MS): Promise<void> {
    const run = this.running.then(() => this.writeOnce(lockWaitMs));
    this.running = run.catch(() => {});
    return run;
  }

  /** Writes every `intervalMs` until stop(). The timer never keeps the process alive. */
  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.opts.due?.() ?? true) runInBackground(this.task, () => this.write(), this.opts.onError);
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Stops the timer and writes what is left (before the database closes): the last chance, so it waits a little for the lock. */
  async close(): Promise<void> {
    this.stop();
    await this.write(INTERACTIVE_WRITE_WAIT_MS);
  }
}
