// The MCP tools' text rendering (src/http/mcp/render.ts): the weekday is computed from a date's
// digits by arithmetic, so it is checked here against every day of the years the API accepts;
// and the paging sentence a model follows to the next page.
import { describe, expect, it } from 'vitest';
import { pagingLine, weekday, when } from '../../src/http/mcp/render.js';

describe('MCP text rendering', () => {
  it('gives every date from 1900 to 2199 the weekday of the calendar (leap years, centuries)', () => {
    const names = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
    for (let t = Date.UTC(1900, 0, 1); t <= Date.UTC(2199, 11, 31); t += 86_400_000) {
      const d = new Date(t);
      const date = d.toISOString().slice(0, 10);
      expect(weekday(date), date).toBe(names[d.getUTCDay()]);
    }
  });

  it('writes a timestamp with its weekday and offset, seconds only when there are some', () => {
    expect(when('2026-03-29T03:00:00+02:00')).toBe('Sun 2026-03-29 03:00 +02:00');
    expect(when('2026-03-27T23:59:59+01:00')).toBe('Fri 2026-03-27 23:59:59 +01:00');
    expect(when('2024-02-29T10:00:00-06:00')).toBe('Thu 2024-02-29 10:00 -06:00');
  });

  it('says where a page is in the total, and the call for the next one', () => {
    expect(pagingLine('list_citas', 0, 0, 0)).toBe('Nothing matches.');
    expect(pagingLine('list_citas', 7, 10, 0)).toBe('offset 10 is past the last match: use an offset below 7.');
    expect(pagingLine('list_citas', 7, 0, 3)).toBe(
      'Showing 1-3 of 7 (total counts every match, whatever limit and offset). Next page: ' +
        'call list_citas again with offset=3 and the same other arguments.',
    );
    expect(pagingLine('list_clientas', 7, 6, 1)).toBe(
      'Showing 7-7 of 7 (total counts every match, whatever limit and offset). This is the last page.',
    );
  });
});
