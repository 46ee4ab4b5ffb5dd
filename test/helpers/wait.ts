// Waiting for something to happen, instead of sleeping for a time it usually takes: the test goes
// on the moment the condition holds, and a machine busy with other work only makes it wait longer.
// The bound is never an assertion about speed, only what turns a hang into a failure that says
// what never happened.

/** Checks `cond` every `intervalMs` until it holds; rejects after `ms`, naming `what` never happened. */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 20_000, intervalMs = 10): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await pause(intervalMs);
  }
}

/** Reads with `read` until `done` holds for what it read, and returns that; the last value read is in the error. */
export async function untilRead<T>(
  what: string,
  read: () => Promise<T>,
  done: (v: T) => boolean,
  ms = 30_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}: ${JSON.stringify(v).slice(0, 300)}`);
    await pause(intervalMs);
  }
}

/**
 * A fixed wait: the pace of a poll, or a time that is the test's subject (a client that sends a
 * byte every 200 ms, a fault that lasts a while, nothing happening for a while). Every caller says
 * which; a wait for something to happen is until()'s.
 */
export function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
