// Which of Redis' changes of state are logged (src/redis/outages.ts), on explicit clocks: the
// first outage and its end; an outage within QUIET_MS of the last one logged only if it lasts past
// that time, then with the count of the shorter ones. The same rules on a real redis-server that
// is killed twice: test/fleet/redis-link.test.ts; under a real server process: fail-open.test.ts.
import { describe, expect, it } from 'vitest';
import { QUIET_MS, QuietOutages } from '../../src/redis/outages.js';

describe('QuietOutages', () => {
  it('logs the first outage (even before Redis ever answered) and its end', () => {
    const q = new QuietOutages();
    expect(q.down(0, 'connect ECONNREFUSED')).toEqual({ log: 'connect ECONNREFUSED' });
    expect(q.up()).toBe(true);
    // A second `up` in a row has nothing to say.
    expect(q.up()).toBe(false);
  });

  it('logs the first `up` of a link that was never down', () => {
    const q = new QuietOutages();
    expect(q.up()).toBe(true);
    expect(q.down(5, 'no answer within 10 ms')).toEqual({ log: 'no answer within 10 ms' });
  });

  it('an outage within the quiet time is not logged if it ends within it, nor is its end', () => {
    const q = new QuietOutages();
    q.up();
    expect(q.down(1_000, 'a')).toEqual({ log: 'a' });
    expect(q.up()).toBe(true);
    expect(q.down(2_000, 'b')).toEqual({ askAt: 1_000 + QUIET_MS });
    expect(q.up()).toBe(false);
    // Asked again when the time came: that outage is over, nothing to log.
    expect(q.due(1_000 + QUIET_MS)).toBeNull();
  });

  it('an outage within the quiet time that outlasts it is logged then, with the shorter ones before it', () => {
    const q = new QuietOutages();
    q.up();
    q.down(0, 'first');
    q.up();
    for (const at of [10_000, 20_000]) {
      q.down(at, 'blip');
      expect(q.up()).toBe(false);
    }
    expect(q.down(30_000, 'lasting')).toEqual({ askAt: QUIET_MS });
    // A timer that fires early is told to ask again.
    expect(q.due(QUIET_MS - 1)).toEqual({ askAt: QUIET_MS });
    expect(q.due(QUIET_MS)).toEqual({ log: 'lasting (and 2 shorter outages since the last one reported)' });
    // Its end is logged, and the quiet time counts from it now.
    expect(q.up()).toBe(true);
    expect(q.down(QUIET_MS + 1, 'soon')).toEqual({ askAt: 2 * QUIET_MS });
  });

  it('an outage past the quiet time is logged at once, with the count of the shorter ones', () => {
    const q = new QuietOutages();
    q.down(0, 'first');
    q.up();
    q.down(5_000, 'blip');
    q.up();
    expect(q.down(QUIET_MS + 5, 'later')).toEqual({ log: 'later (and 1 shorter outage since the last one reported)' });
  });
});
