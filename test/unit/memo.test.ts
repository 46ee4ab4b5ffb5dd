// memo (src/memo.ts), the one way a computed value is kept: computed once per key, kept for up to
// `max` keys (the oldest kept goes first), null and undefined kept like any value, and nothing
// kept when the computation throws. loadOnce, the same for a module loaded on first use: one load
// shared by every caller, and a failed one started again.
import { describe, expect, it } from 'vitest';
import { loadOnce, memo } from '../../src/memo.js';

/** A memo of `max` keys over a computation that records the keys it was asked for. */
function counted<V>(max: number, compute: (k: string) => V) {
  const asked: string[] = [];
  const m = memo(max, (k: string) => {
    asked.push(k);
    return compute(k);
  });
  return { m, asked };
}

describe('memo', () => {
  it('computes a key once and gives the kept value after', () => {
    const { m, asked } = counted(10, (k) => k.toUpperCase());
    expect([m('a'), m('a'), m('b'), m('a')]).toEqual(['A', 'A', 'B', 'A']);
    expect(asked).toEqual(['a', 'b']);
  });

  it('keeps null and undefined as values, not as misses', () => {
    const { m, asked } = counted(10, (k) => (k === 'n' ? null : undefined));
    expect([m('n'), m('n'), m('u'), m('u')]).toEqual([null, null, undefined, undefined]);
    expect(asked).toEqual(['n', 'u']);
  });

  it('keeps `max` keys at most: at the bound the oldest kept goes first, even if used since', () => {
    const { m, asked } = counted(2, (k) => k);
    m('a');
    m('b');
    m('a'); // a hit: still the oldest
    m('c'); // a goes
    asked.length = 0;
    m('b');
    m('c');
    expect(asked).toEqual([]);
    m('a');
    expect(asked).toEqual(['a']);
  });

  it('keeps nothing when the computation throws', () => {
    let fail = true;
    const m = memo(10, (k: string) => {
      if (fail) throw new RangeError(`bad ${k}`);
      return k;
    });
    expect(() => m('x')).toThrow('bad x');
    fail = false;
    expect(m('x')).toBe('x');
  });
});

describe('loadOnce', () => {
  it('starts the load at the first call and gives every caller, at once or later, its one result', async () => {
    let started = 0;
    const load = loadOnce(async () => ({ n: ++started }));
    expect(started).toBe(0);
    const [a, b] = await Promise.all([load(), load()]);
    const c = await load();
    expect(started).toBe(1);
    expect(a).toBe(b);
    expect(c).toBe(a);
  });

  it('keeps no failure: every caller of the failed load is refused, and the next call loads again', async () => {
    let started = 0;
    const load = loadOnce(async () => {
      started += 1;
      if (started === 1) throw new Error('import failed');
      return 'loaded';
    });
    const first = await Promise.allSettled([load(), load()]);
    expect(first.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(started).toBe(1);
    await expect(load()).resolves.toBe('loaded');
    await expect(load()).resolves.toBe('loaded');
    expect(started).toBe(2);
  });
});
