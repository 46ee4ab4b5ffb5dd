// The write-behind shared by the request log and the usage counts (src/services/periodic-writer.ts):
// writes never overlap, the timer's failures are reported and the timer goes on, close() writes
// what is left with the interactive lock wait, and stop() ends the timer.
import { describe, expect, it } from 'vitest';
import { PeriodicWriter } from '../../src/services/periodic-writer.js';
import { INTERACTIVE_WRITE_WAIT_MS } from '../../src/services/write-lock.js';
import { pause, until } from '../helpers/wait.js';

describe('PeriodicWriter', () => {
  it('runs writes one at a time, in the order asked, and each caller sees its own write fail', async () => {
    const log: string[] = [];
    let n = 0;
    const writer = new PeriodicWriter('test write', async () => {
      const i = ++n;
      log.push(`start ${i}`);
      await pause(20);
      log.push(`end ${i}`);
      if (i === 2) throw new Error('second failed');
    });
    const results = await Promise.allSettled([writer.write(), writer.write(), writer.write()]);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('writes on its timer only when due, reports a failed write and keeps going; stop() ends it', async () => {
    const errors: string[] = [];
    let due = false;
    let writes = 0;
    const writer = new PeriodicWriter(
      'test write',
      async () => {
        writes++;
        if (writes === 1) throw new Error('database busy');
      },
      { onError: (task, err) => errors.push(`${task}: ${(err as Error).message}`), due: () => due },
    );
    writer.start(10);
    await pause(60);
    expect(writes).toBe(0);
    due = true;
    await until(() => writes >= 3, 'three timer writes');
    expect(errors).toEqual(['test write: database busy']);
    writer.stop();
    const after = writes;
    await pause(60);
    expect(writes).toBe(after);
  });

  it('close() stops the timer and makes a last write that waits for the lock', async () => {
    const waits: number[] = [];
    const writer = new PeriodicWriter('test write', async (lockWaitMs) => void waits.push(lockWaitMs));
    writer.start(10);
    await writer.close();
    const count = waits.length;
    expect(waits.at(-1)).toBe(INTERACTIVE_WRITE_WAIT_MS);
    await pause(50);
    expect(waits.length).toBe(count);
  });
});
