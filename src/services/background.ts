// Work done off the request's path (usage flushes, last_used_at writes, timers). Its failures are
// reported and stop there: an exception in a background task must never end the process, which
// an unhandled rejection would (Node's default, and close-with-grace's in server.ts).
export type BackgroundErrorHandler = (task: string, err: unknown) => void;

/** Hands `err` to `onError`; if the handler itself throws, that is swallowed too. */
export function reportBackgroundError(onError: BackgroundErrorHandler | undefined, task: string, err: unknown): void {
  try {
    onError?.(task, err);
  } catch {
    // nothing left to tell: the handler was the way to tell
  }
}

/** Runs `fn` now, off the caller's path; a throw or a rejection goes to `onError`. */
export function runInBackground(task: string, fn: () => unknown, onError: BackgroundErrorHandler | undefined): void {
  try {
    Promise.resolve(fn()).catch((err: unknown) => reportBackgroundError(onError, task, err));
  } catch (err) {
    reportBackgroundError(onError, task, err);
  }
}
