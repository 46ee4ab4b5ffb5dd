// The schedule of a background job that works in passes (the change feed's retention, the
// request log's, the OAuth sweep): the first pass `firstDelayMs` after start, then one every
// `intervalMs` after the previous one ended (never two at once), the timer never keeping the
// process alive. stop() ends the schedule and waits for a pass in progress; a pass checks
// `stopped` between its batches so that it ends soon. The pass reports its own outcome and
// failures: whatever it throws is dropped here, and the next pass runs as planned.
export interface PassTiming {
  firstDelayMs: number;
  intervalMs: number;
}

export class PeriodicPasses {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private ended = false;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly timing: PassTiming,
  ) {}

  /** Whether stop() was called: a pass in progress ends at its next batch. */
  get stopped(): boolean {
    return this.ended;
  }

  start(): void {
    if (this.ended || this.timer !== null) return;
    this.schedule(this.timing.firstDelayMs);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.pass()
        .catch(() => {})
        .finally(() => {
          this.running = null;
          if (!this.ended) this.schedule(this.timing.intervalMs);
        });
    }, ms);
    this.timer.unref();
  }

  /** Stops the schedule and waits for a pass in progress to end. */
  async stop(): Promise<void> {
    this.ended = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
