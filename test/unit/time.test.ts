// src/time.ts: calendar days and offsets in a clinic's zone, never the machine's.
// Every expected value below is worked out by hand from the zone rules (2026):
//   Europe/Madrid      +01:00, DST +02:00 from Sun 29 Mar 02:00 (-> 03:00) to Sun 25 Oct 03:00 (-> 02:00)
//   America/Mexico_City -06:00 all year (no DST since 2022)
//   Pacific/Auckland   +13:00 until Sun 5 Apr 03:00 (-> 02:00), +12:00, +13:00 again from Sun 27 Sep 02:00
//   Asia/Kathmandu     +05:45 all year
//   America/St_Johns   -03:30, DST -02:30 from Sun 8 Mar 02:00
//   Africa/Cairo       +02:00, DST +03:00 from Fri 24 Apr 00:00 (-> 01:00: local midnight does not exist)
//   America/Havana     -05:00, DST -04:00 from Sun 8 Mar 00:00 (-> 01:00: midnight skipped)
//   America/Santiago   -03:00 until Sun 5 Apr 00:00 (-> Sat 23:00, so Sat 4 Apr lasts 25 h),
//                      -04:00, then -03:00 from Sun 6 Sep 00:00 (-> 01:00: midnight skipped)
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  addDays,
  dayRange,
  dayStart,
  formatTimestamp,
  formatTimestampMs,
  isValidDate,
  isValidTimeZone,
  localDate,
  localToEpoch,
  offsetMinutes,
  parseTimestamp,
  todayIn,
} from '../../src/time.js';

/** Epoch seconds of an ISO instant (for expectations only; Date.parse is zone-independent with Z). */
const s = (iso: string) => Date.parse(iso) / 1000;
const ms = (iso: string) => Date.parse(iso);
const HOUR = 3600;

describe('isValidDate', () => {
  it('accepts real calendar dates, including leap days of leap years', () => {
    for (const d of ['2024-02-29', '2000-02-29', '2026-02-28', '2026-12-31', '2026-01-01', '2026-04-30', '0004-02-29', '9999-12-31']) {
      expect(isValidDate(d), d).toBe(true);
    }
  });

  it('rejects impossible dates: 2026-02-29/30, 1900-02-29, 2100-02-29, 31st of 30-day months', () => {
    for (const d of ['2026-02-29', '2026-02-30', '1900-02-29', '2100-02-29', '2026-04-31', '2026-06-31', '2026-09-31', '2026-11-31']) {
      expect(isValidDate(d), d).toBe(false);
    }
  });

  it('rejects out-of-range parts and anything not exactly YYYY-MM-DD', () => {
    for (const d of [
      '2026-13-01',
      '2026-00-10',
      '2026-01-00',
      '2026-01-32',
      '0000-01-01',
      '2026-1-01',
      '2026-01-1',
      '26-01-01',
      ' 2026-01-01',
      '2026-01-01 ',
      '2026-01-01T00:00',
      '2026/01/01',
      '20260101',
      '',
      'today',
    ]) {
      expect(isValidDate(d), JSON.stringify(d)).toBe(false);
    }
  });
});

describe('formatTimestampMs', () => {
  it('keeps the milliseconds and the offset of the instant, on both sides of a DST change', () => {
    expect(formatTimestampMs(Date.parse('2026-03-29T00:59:59.250Z'), 'Europe/Madrid')).toBe('2026-03-29T01:59:59.250+01:00');
    expect(formatTimestampMs(Date.parse('2026-03-29T01:00:00.007Z'), 'Europe/Madrid')).toBe('2026-03-29T03:00:00.007+02:00');
    expect(formatTimestampMs(Date.parse('2026-11-21T10:30:00.000Z'), 'Asia/Kathmandu')).toBe('2026-11-21T16:15:00.000+05:45');
  });
});

describe('isValidTimeZone', () => {
  it('knows IANA zones and refuses made-up ones', () => {
    expect(isValidTimeZone('Europe/Madrid')).toBe(true);
    expect(isValidTimeZone('Asia/Kathmandu')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
  });
});

describe('addDays', () => {
  it('crosses month, leap-day and year ends in both directions', () => {
    expect(addDays('2026-01-31', 1)).toBe('2026-02-01');
    expect(addDays('2026-02-28', 1)).toBe('2026-03-01');
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2024-02-29', 1)).toBe('2024-03-01');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2027-01-01', -1)).toBe('2026-12-31');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(addDays('2026-03-28', 30)).toBe('2026-04-27');
    expect(addDays('2026-03-28', -7)).toBe('2026-03-21');
    expect(addDays('2026-01-01', 365)).toBe('2027-01-01');
    expect(addDays('2024-01-01', 366)).toBe('2025-01-01');
    expect(addDays('2026-05-17', 0)).toBe('2026-05-17');
  });

  it('is pure calendar arithmetic: DST days are one day like any other', () => {
    expect(addDays('2026-03-28', 1)).toBe('2026-03-29');
    expect(addDays('2026-03-29', 1)).toBe('2026-03-30');
    expect(addDays('2026-10-25', 1)).toBe('2026-10-26');
    expect(addDays('2026-10-26', -1)).toBe('2026-10-25');
  });

  it('keeps years below 100 as they are (not 1900 + year)', () => {
    expect(addDays('0050-01-01', 1)).toBe('0050-01-02');
    expect(addDays('0099-12-31', 1)).toBe('0100-01-01');
  });

  it('throws on a malformed date', () => {
    expect(() => addDays('2026-3-1', 1)).toThrow(RangeError);
    expect(() => addDays('tomorrow', 1)).toThrow(RangeError);
  });
});

describe('todayIn', () => {
  it('Europe/Madrid: the date turns at local midnight, +01:00 in winter and +02:00 in summer', () => {
    expect(todayIn('Europe/Madrid', ms('2026-03-28T22:59:59.999Z'))).toBe('2026-03-28');
    expect(todayIn('Europe/Madrid', ms('2026-03-28T23:00:00Z'))).toBe('2026-03-29');
    expect(todayIn('Europe/Madrid', ms('2026-07-01T21:59:59Z'))).toBe('2026-07-01');
    expect(todayIn('Europe/Madrid', ms('2026-07-01T22:00:00Z'))).toBe('2026-07-02');
  });

  it('America/Mexico_City: -06:00, still yesterday when it is already tomorrow in UTC', () => {
    expect(todayIn('America/Mexico_City', ms('2026-03-29T05:59:59Z'))).toBe('2026-03-28');
    expect(todayIn('America/Mexico_City', ms('2026-03-29T06:00:00Z'))).toBe('2026-03-29');
    expect(todayIn('America/Mexico_City', ms('2026-12-31T23:30:00Z'))).toBe('2026-12-31');
    expect(todayIn('America/Mexico_City', ms('2027-01-01T06:00:00Z'))).toBe('2027-01-01');
  });

  it('Pacific/Auckland: +13:00 in January and +12:00 in July, a day ahead of UTC', () => {
    expect(todayIn('Pacific/Auckland', ms('2026-01-08T10:59:59Z'))).toBe('2026-01-08');
    expect(todayIn('Pacific/Auckland', ms('2026-01-08T11:00:00Z'))).toBe('2026-01-09');
    expect(todayIn('Pacific/Auckland', ms('2026-07-01T11:59:59Z'))).toBe('2026-07-01');
    expect(todayIn('Pacific/Auckland', ms('2026-07-01T12:00:00Z'))).toBe('2026-07-02');
    expect(todayIn('Pacific/Auckland', ms('2026-12-31T11:00:00Z'))).toBe('2027-01-01');
  });

  it('Asia/Kathmandu: a +05:45 offset turns the date at 18:15 UTC', () => {
    expect(todayIn('Asia/Kathmandu', ms('2026-03-28T18:14:59Z'))).toBe('2026-03-28');
    expect(todayIn('Asia/Kathmandu', ms('2026-03-28T18:15:00Z'))).toBe('2026-03-29');
  });
});

describe('dayStart and dayRange', () => {
  it('an ordinary Madrid day is 24 h from local midnight', () => {
    const r = dayRange('2026-03-28', '2026-03-28', 'Europe/Madrid');
    expect(r).toEqual({ start: s('2026-03-27T23:00:00Z'), end: s('2026-03-28T23:00:00Z') });
  });

  it('DST start: Madrid 2026-03-29 is 23 h long', () => {
    const r = dayRange('2026-03-29', '2026-03-29', 'Europe/Madrid');
    expect(r.start).toBe(s('2026-03-28T23:00:00Z'));
    expect(r.end).toBe(s('2026-03-29T22:00:00Z'));
    expect(r.end! - r.start).toBe(23 * HOUR);
    expect(formatTimestamp(r.start, 'Europe/Madrid')).toBe('2026-03-29T00:00:00+01:00');
    expect(formatTimestamp(r.end!, 'Europe/Madrid')).toBe('2026-03-30T00:00:00+02:00');
  });

  it('DST end: Madrid 2026-10-25 is 25 h long', () => {
    const r = dayRange('2026-10-25', '2026-10-25', 'Europe/Madrid');
    expect(r.start).toBe(s('2026-10-24T22:00:00Z'));
    expect(r.end).toBe(s('2026-10-25T23:00:00Z'));
    expect(r.end! - r.start).toBe(25 * HOUR);
    expect(formatTimestamp(r.start, 'Europe/Madrid')).toBe('2026-10-25T00:00:00+02:00');
    expect(formatTimestamp(r.end!, 'Europe/Madrid')).toBe('2026-10-26T00:00:00+01:00');
  });

  it('a month in Madrid spans the DST start: 31 days minus one hour', () => {
    const r = dayRange('2026-03-01', '2026-03-31', 'Europe/Madrid');
    expect(r.start).toBe(s('2026-02-28T23:00:00Z'));
    expect(r.end).toBe(s('2026-03-31T22:00:00Z'));
    expect(r.end! - r.start).toBe((31 * 24 - 1) * HOUR);
  });

  it('midnight skipped (Africa/Cairo 2026-04-24): the day starts at its first existing instant, 01:00', () => {
    const start = dayStart('2026-04-24', 'Africa/Cairo');
    expect(start).toBe(s('2026-04-23T22:00:00Z'));
    expect(formatTimestamp(start, 'Africa/Cairo')).toBe('2026-04-24T01:00:00+03:00');
    // The day before ends exactly there: no instant belongs to two days or to none.
    expect(dayRange('2026-04-23', '2026-04-23', 'Africa/Cairo')).toEqual({ start: s('2026-04-22T22:00:00Z'), end: start });
    expect(formatTimestamp(start - 1, 'Africa/Cairo')).toBe('2026-04-23T23:59:59+02:00');
    const r = dayRange('2026-04-24', '2026-04-24', 'Africa/Cairo');
    expect(r.end! - r.start).toBe(23 * HOUR);
  });

  it('midnight skipped (America/Havana 2026-03-08, America/Santiago 2026-09-06)', () => {
    const havana = dayStart('2026-03-08', 'America/Havana');
    expect(formatTimestamp(havana, 'America/Havana')).toBe('2026-03-08T01:00:00-04:00');
    expect(formatTimestamp(havana - 1, 'America/Havana')).toBe('2026-03-07T23:59:59-05:00');
    const santiago = dayRange('2026-09-06', '2026-09-06', 'America/Santiago');
    expect(formatTimestamp(santiago.start, 'America/Santiago')).toBe('2026-09-06T01:00:00-03:00');
    expect(santiago.end! - santiago.start).toBe(23 * HOUR);
  });

  it('America/Santiago 2026-04-04 is 25 h long: 23:00-24:00 happens twice', () => {
    const r = dayRange('2026-04-04', '2026-04-04', 'America/Santiago');
    expect(formatTimestamp(r.start, 'America/Santiago')).toBe('2026-04-04T00:00:00-03:00');
    expect(formatTimestamp(r.end!, 'America/Santiago')).toBe('2026-04-05T00:00:00-04:00');
    expect(r.end! - r.start).toBe(25 * HOUR);
  });

  it('zones without DST and offsets with minutes', () => {
    expect(dayRange('2026-03-29', '2026-03-29', 'America/Mexico_City')).toEqual({
      start: s('2026-03-29T06:00:00Z'),
      end: s('2026-03-30T06:00:00Z'),
    });
    expect(dayRange('2026-03-29', '2026-03-29', 'Asia/Kathmandu')).toEqual({
      start: s('2026-03-28T18:15:00Z'),
      end: s('2026-03-29T18:15:00Z'),
    });
    expect(dayStart('2026-01-09', 'Pacific/Auckland')).toBe(s('2026-01-08T11:00:00Z'));
  });

  it('null upper bound means no end', () => {
    expect(dayRange('2026-03-01', null, 'Europe/Madrid')).toEqual({ start: s('2026-02-28T23:00:00Z'), end: null });
  });

  it('throws on an invalid zone or date', () => {
    expect(() => dayStart('2026-03-01', 'Mars/Base')).toThrow(RangeError);
    expect(() => dayStart('2026-02-30', 'Europe/Madrid')).toThrow(RangeError);
  });
});

describe('formatTimestamp', () => {
  const RFC3339_WHOLE_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;

  it('Madrid: +01:00 in winter, +02:00 in summer', () => {
    expect(formatTimestamp(s('2026-11-21T09:30:00Z'), 'Europe/Madrid')).toBe('2026-11-21T10:30:00+01:00');
    expect(formatTimestamp(s('2026-07-01T07:00:00Z'), 'Europe/Madrid')).toBe('2026-07-01T09:00:00+02:00');
  });

  it('switches offset at the exact second of each transition', () => {
    expect(formatTimestamp(s('2026-03-29T00:59:59Z'), 'Europe/Madrid')).toBe('2026-03-29T01:59:59+01:00');
    expect(formatTimestamp(s('2026-03-29T01:00:00Z'), 'Europe/Madrid')).toBe('2026-03-29T03:00:00+02:00');
    // DST end: 02:30 happens twice, told apart by the offset.
    expect(formatTimestamp(s('2026-10-25T00:30:00Z'), 'Europe/Madrid')).toBe('2026-10-25T02:30:00+02:00');
    expect(formatTimestamp(s('2026-10-25T00:59:59Z'), 'Europe/Madrid')).toBe('2026-10-25T02:59:59+02:00');
    expect(formatTimestamp(s('2026-10-25T01:00:00Z'), 'Europe/Madrid')).toBe('2026-10-25T02:00:00+01:00');
    expect(formatTimestamp(s('2026-10-25T01:30:00Z'), 'Europe/Madrid')).toBe('2026-10-25T02:30:00+01:00');
  });

  it('negative, fractional-hour and far-east offsets', () => {
    const t = s('2026-01-08T12:00:00Z');
    expect(formatTimestamp(t, 'America/Mexico_City')).toBe('2026-01-08T06:00:00-06:00');
    expect(formatTimestamp(t, 'Asia/Kathmandu')).toBe('2026-01-08T17:45:00+05:45');
    expect(formatTimestamp(t, 'Pacific/Auckland')).toBe('2026-01-09T01:00:00+13:00');
    expect(formatTimestamp(s('2026-07-01T12:00:00Z'), 'Pacific/Auckland')).toBe('2026-07-02T00:00:00+12:00');
    expect(formatTimestamp(t, 'Pacific/Chatham')).toBe('2026-01-09T01:45:00+13:45');
    expect(formatTimestamp(t, 'Pacific/Kiritimati')).toBe('2026-01-09T02:00:00+14:00');
    expect(formatTimestamp(t, 'UTC')).toBe('2026-01-08T12:00:00+00:00');
  });

  it('negative offsets with minutes: America/St_Johns -03:30, then -02:30 in summer', () => {
    expect(formatTimestamp(s('2026-01-08T12:00:00Z'), 'America/St_Johns')).toBe('2026-01-08T08:30:00-03:30');
    expect(formatTimestamp(s('2026-03-08T05:29:59Z'), 'America/St_Johns')).toBe('2026-03-08T01:59:59-03:30');
    expect(formatTimestamp(s('2026-03-08T05:30:00Z'), 'America/St_Johns')).toBe('2026-03-08T03:00:00-02:30');
    expect(formatTimestamp(s('2026-07-01T12:00:00Z'), 'America/St_Johns')).toBe('2026-07-01T09:30:00-02:30');
  });

  it('whole seconds, across the year end and before 1970', () => {
    const out = formatTimestamp(s('2026-12-31T23:30:00Z'), 'Pacific/Auckland');
    expect(out).toBe('2027-01-01T12:30:00+13:00');
    expect(out).toMatch(RFC3339_WHOLE_SECONDS);
    expect(formatTimestamp(-1, 'UTC')).toBe('1969-12-31T23:59:59+00:00');
  });

  it('agrees with Intl every 5 minutes around transitions, walking forwards and backwards (memoised offsets)', () => {
    const cases: [string, string][] = [
      ['Europe/Madrid', '2026-03-29T01:00:00Z'],
      ['Europe/Madrid', '2026-10-25T01:00:00Z'],
      ['America/St_Johns', '2026-03-08T05:30:00Z'],
      ['Africa/Cairo', '2026-04-23T22:00:00Z'],
      ['Pacific/Auckland', '2026-04-04T14:00:00Z'],
      ['Asia/Kathmandu', '2026-03-28T18:15:00Z'],
      // Lord Howe shifts by 30 minutes only.
      ['Australia/Lord_Howe', '2026-04-04T15:00:00Z'],
      ['America/Santiago', '2026-04-05T03:00:00Z'],
    ];
    for (const [zone, around] of cases) {
      const centre = s(around);
      const steps = Array.from({ length: 2 * 72 + 1 }, (_, i) => centre + (i - 72) * 300);
      for (const order of [steps, [...steps].reverse()]) {
        for (const t of order) expect(formatTimestamp(t, zone), `${zone} ${t}`).toBe(intlFormat(t, zone));
        // one second either side of each step too (transition instants are exact)
        for (const t of order) expect(formatTimestamp(t - 1, zone), `${zone} ${t - 1}`).toBe(intlFormat(t - 1, zone));
      }
    }
  });

  it('any instant from 1970 to 2060 in zones with DST, half-hour offsets and changed rules: as Intl formats it (the offset memo never spans a transition)', () => {
    const zones = [
      'Europe/Madrid',
      'America/St_Johns',
      'Africa/Cairo',
      'America/Havana',
      'Australia/Lord_Howe',
      'Pacific/Apia',
      'America/Mexico_City',
      'Asia/Kathmandu',
    ];
    fc.assert(
      fc.property(fc.constantFrom(...zones), fc.integer({ min: 0, max: 2_871_000_000 }), (zone, t) => {
        // the instant itself, and the seconds either side of the 6-hour span and quarter hour it falls in
        for (const x of [t, t - (t % 21_600), t - (t % 21_600) - 1, t - (t % 900), t - (t % 900) - 1]) {
          expect(formatTimestamp(x, zone), `${zone} ${x}`).toBe(intlFormat(x, zone));
        }
      }),
      { numRuns: 3_000 },
    );
  });

  it('offsetMinutes matches the formatted offset', () => {
    expect(offsetMinutes(ms('2026-01-08T12:00:00Z'), 'Asia/Kathmandu')).toBe(345);
    expect(offsetMinutes(ms('2026-01-08T12:00:00Z'), 'America/St_Johns')).toBe(-210);
    expect(offsetMinutes(ms('2026-07-01T12:00:00Z'), 'Europe/Madrid')).toBe(120);
  });
});

describe('localDate', () => {
  it('is the local calendar date of an instant', () => {
    expect(localDate(s('2026-03-28T22:59:59Z'), 'Europe/Madrid')).toBe('2026-03-28');
    expect(localDate(s('2026-03-28T23:00:00Z'), 'Europe/Madrid')).toBe('2026-03-29');
    expect(localDate(s('2026-03-28T23:00:00Z'), 'America/Mexico_City')).toBe('2026-03-28');
    expect(localDate(s('2026-03-28T18:15:00Z'), 'Asia/Kathmandu')).toBe('2026-03-29');
    expect(localDate(s('2026-12-31T11:00:00Z'), 'Pacific/Auckland')).toBe('2027-01-01');
    // Both 02:30 of the Madrid DST end are on the 25th.
    expect(localDate(s('2026-10-25T00:30:00Z'), 'Europe/Madrid')).toBe('2026-10-25');
    expect(localDate(s('2026-10-25T01:30:00Z'), 'Europe/Madrid')).toBe('2026-10-25');
  });
});

describe('localToEpoch', () => {
  it('turns a local wall-clock time into an instant', () => {
    expect(localToEpoch('2026-07-01', 9, 30, 'Europe/Madrid')).toBe(s('2026-07-01T07:30:00Z'));
    expect(localToEpoch('2026-07-01', 9, 30, 'America/Mexico_City')).toBe(s('2026-07-01T15:30:00Z'));
    expect(localToEpoch('2026-07-01', 9, 30, 'Asia/Kathmandu')).toBe(s('2026-07-01T03:45:00Z'));
  });
});

describe('parseTimestamp', () => {
  it('reads Z and any offset into epoch seconds', () => {
    const t = s('2026-11-21T09:30:00Z');
    expect(parseTimestamp('2026-11-21T09:30:00Z')).toBe(t);
    expect(parseTimestamp('2026-11-21T10:30:00+01:00')).toBe(t);
    expect(parseTimestamp('2026-11-21T03:30:00-06:00')).toBe(t);
    expect(parseTimestamp('2026-11-21T15:15:00+05:45')).toBe(t);
    expect(parseTimestamp('2026-11-21T06:00:00-03:30')).toBe(t);
    expect(parseTimestamp('2026-11-21T09:30:00+00:00')).toBe(t);
    expect(parseTimestamp('2026-11-21T09:30:00-00:00')).toBe(t);
    // RFC 3339 allows lower-case t and z.
    expect(parseTimestamp('2026-11-21t09:30:00z')).toBe(t);
  });

  it('reads both sides of a DST change by their offsets', () => {
    expect(parseTimestamp('2026-03-29T01:59:59+01:00')! + 1).toBe(parseTimestamp('2026-03-29T03:00:00+02:00'));
    expect(parseTimestamp('2026-10-25T02:30:00+01:00')! - parseTimestamp('2026-10-25T02:30:00+02:00')!).toBe(HOUR);
  });

  it('drops fractional seconds (rounding down)', () => {
    const t = s('2026-11-21T09:30:00Z');
    expect(parseTimestamp('2026-11-21T09:30:00.999Z')).toBe(t);
    expect(parseTimestamp('2026-11-21T10:30:00.5+01:00')).toBe(t);
    expect(parseTimestamp('2026-11-21T09:30:00.123456789Z')).toBe(t);
    expect(parseTimestamp('1969-12-31T23:59:59.5Z')).toBe(-1);
  });

  it('agrees with Luxon on any valid timestamp: years 0001-9999, any offset, with or without a fraction', () => {
    const two = (n: number) => String(n).padStart(2, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 31 }),
        fc.integer({ min: 0, max: 86_399 }),
        fc.option(fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 })),
        fc.option(fc.stringMatching(/^[0-9]{1,9}$/)),
        (y, mo, d, sod, off, frac) => {
          const date = `${String(y).padStart(4, '0')}-${two(mo)}-${two(d)}`;
          const fraction = frac === null ? '' : `.${frac}`;
          const time = `${two(Math.floor(sod / 3600))}:${two(Math.floor(sod / 60) % 60)}:${two(sod % 60)}${fraction}`;
          const zone = off === null ? 'Z' : `${off < 0 ? '-' : '+'}${two(Math.floor(Math.abs(off) / 60))}:${two(Math.abs(off) % 60)}`;
          const value = `${date}T${time}${zone}`;
          const luxon = DateTime.fromISO(value, { setZone: true });
          const expected = isValidDate(date) && luxon.isValid ? Math.floor(luxon.toMillis() / 1000) : null;
          expect(parseTimestamp(value), value).toBe(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('rejects a missing offset, impossible dates and times, and anything not RFC 3339', () => {
    for (const v of [
      '2026-11-21T10:30:00',
      '2026-11-21',
      '2026-11-21T10:30Z',
      '2026-11-21T10:30:00+0100',
      '2026-11-21T10:30:00+01',
      '2026-02-30T10:00:00Z',
      '2026-02-29T10:00:00Z',
      '2026-13-01T10:00:00Z',
      '2026-11-21T24:00:00Z',
      '2026-11-21T25:00:00Z',
      '2026-11-21T10:60:00Z',
      '2026-11-21T10:30:60Z',
      '2026-11-21T10:30:00+25:00',
      '2026-11-21T10:30:00+01:60',
      '2026-11-21T10:30:00.Z',
      ' 2026-11-21T10:30:00Z',
      '2026-11-21T10:30:00Z ',
      '',
      'now',
      '1763717400',
    ]) {
      expect(parseTimestamp(v), JSON.stringify(v)).toBeNull();
    }
  });
});

/** Reference formatting through Intl (independent of luxon and of the module's offset cache). */
function intlFormat(epochSeconds: number, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(epochSeconds * 1000));
  const p = (type: string) => parts.find((x) => x.type === type)?.value ?? '';
  const name = p('timeZoneName'); // "GMT+05:45", "GMT-03:30" or "GMT"
  const offset = name === 'GMT' ? '+00:00' : name.slice(3);
  return `${p('year')}-${p('month')}-${p('day')}T${p('hour')}:${p('minute')}:${p('second')}${offset}`;
}
