// Request ids (src/http/plugins/request-id.ts): UUIDs version 7 whose random bits come from a
// pool refilled every 256 ids. Each is new, they carry their millisecond, and an id of a later
// millisecond sorts after an earlier one (the request log's index relies on it).
import { describe, expect, it } from 'vitest';
import { newRequestId, requestIdGenerator } from '../../src/http/plugins/request-id.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const msOf = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe('request ids', () => {
  it('are distinct version 7 UUIDs across refills of the pool, each with the millisecond it was made', () => {
    const before = Date.now();
    const ids = Array.from({ length: 2_000 }, () => newRequestId());
    const after = Date.now();
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id).toMatch(V7);
      expect(msOf(id)).toBeGreaterThanOrEqual(before);
      expect(msOf(id)).toBeLessThanOrEqual(after);
    }
    // The random part of two ids 256 apart (one pool apart) differs: the pool is refilled, not reused.
    expect(ids[0]!.slice(14)).not.toBe(ids[256]!.slice(14));
  });

  it('sort in time order from one millisecond to the next', async () => {
    const first = newRequestId();
    await new Promise((resolve) => setTimeout(resolve, 3));
    const second = newRequestId();
    expect(msOf(second)).toBeGreaterThan(msOf(first));
    expect(second > first).toBe(true);
  });

  it('echo a sane incoming X-Request-Id, and replace one shaped like a key', () => {
    const gen = requestIdGenerator('ck_');
    expect(gen({ headers: { 'x-request-id': 'trace-42' } })).toBe('trace-42');
    expect(gen({ headers: { 'x-request-id': 'ck_live_0123456789abcdef0123456789abcdef' } })).toMatch(V7);
    expect(gen({ headers: {} })).toMatch(V7);
  });
});
