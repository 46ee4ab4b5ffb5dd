// The request log's queue of waiting entries, kept as text outside V8's heap
// (src/services/encoded-queue.ts): whatever is pushed, read and shifted, in whatever sizes, it
// behaves as an array would: the same values, in the same order, none lost or repeated, across
// its blocks, with values larger than a block and text of every width in UTF-8.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EncodedQueue } from '../../src/services/encoded-queue.js';

type Value = { s: string; n: number | null };

const text = fc.oneof(
  fc.string({ maxLength: 40, unit: 'binary' }),
  // past one 64 KiB block: one of its own
  fc.integer({ min: 22_000, max: 70_000 }).map((n) => 'ñ€𝄞'.repeat(Math.ceil(n / 4))),
);
const value = fc.record({ s: text, n: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null)) });

const op = fc.oneof(
  { weight: 6, arbitrary: fc.array(value, { minLength: 1, maxLength: 300 }).map((vs) => ({ kind: 'push' as const, vs })) },
  { weight: 3, arbitrary: fc.nat(400).map((n) => ({ kind: 'read' as const, n })) },
  { weight: 3, arbitrary: fc.nat(400).map((n) => ({ kind: 'shift' as const, n })) },
);

/** What JSON keeps of a value (-0 becomes 0). */
const asJson = (v: Value): Value => JSON.parse(JSON.stringify(v)) as Value;

describe('EncodedQueue', () => {
  it('reads and shifts what was pushed, in order, as an array would', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const q = new EncodedQueue<Value>();
        let model: Value[] = [];
        for (const o of ops) {
          if (o.kind === 'push') {
            for (const v of o.vs) q.push(v);
            model.push(...o.vs.map(asJson));
          } else if (o.kind === 'read') {
            const r = q.reader();
            const got: Value[] = [];
            for (let i = 0; i < o.n; i++) {
              const v = r.next();
              if (v === undefined) break;
              got.push(v);
            }
            expect(got).toEqual(model.slice(0, o.n));
          } else {
            q.shift(o.n);
            model = model.slice(o.n);
          }
          expect(q.length).toBe(model.length);
        }
        const r = q.reader();
        const rest: Value[] = [];
        for (let v = r.next(); v !== undefined; v = r.next()) rest.push(v);
        expect(rest).toEqual(model);
      }),
      { numRuns: 150 },
    );
  });

  it('a reader also reads what is pushed after it was made, and a value stays until it is shifted', () => {
    const q = new EncodedQueue<string>();
    q.push('a');
    const r = q.reader();
    expect(r.next()).toBe('a');
    expect(r.next()).toBeUndefined();
    q.push('b');
    expect(r.next()).toBe('b');
    // Read, not removed: a write that failed leaves its entries in front.
    expect(q.reader().next()).toBe('a');
    q.shift(1);
    expect(q.reader().next()).toBe('b');
    expect(q.length).toBe(1);
  });
});
