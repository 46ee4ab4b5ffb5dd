// Clinic-time arithmetic, in one place. Nothing here reads the machine's zone: every function
// takes the clinic's IANA zone explicitly, and "now" is always passed in by the caller.
//
// Luxon does the calendar work (local midnight -> instant, which is where DST days bite).
// Formatting a timestamp with its offset is on the hot path (two per serialized row), so the
// offset lookup is memoised (offsetMinutes): per 6-hour span without a transition, and per
// 15-minute bucket around one (modern zone transitions fall on 15-minute UTC boundaries; a
// bucket whose two ends disagree is never cached but computed exactly).
import { DateTime, IANAZone } from 'luxon';
import { memo } from './memo.js';

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;
const BUCKET_MS = 15 * 60_000;

/** True for a real calendar date written `YYYY-MM-DD` (rejects 2026-02-30). */
export function isValidDate(value: string): boolean {
  const m = DATE_RE.exec(value);
  if (!m) return false;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return false;
  return d <= daysInMonth(y, mo);
}

/** Epoch ms of a UTC calendar day; unlike Date.UTC, years 0-99 are not taken as 1900-1999. */
function utcDayMs(year: number, month0: number, day: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month0, day);
  return d.getTime();
}

function daysInMonth(year: number, month: number): number {
  return new Date(utcDayMs(year, month, 0)).getUTCDate();
}

export function isValidTimeZone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

/** Calendar arithmetic on `YYYY-MM-DD`, independent of any zone. */
export function addDays(date: string, days: number): string {
  const m = DATE_RE.exec(date);
  if (!m) throw new RangeError(`not a date: ${date}`);
  const ms = utcDayMs(Number(m[1]), Number(m[2]) - 1, Number(m[3])) + days * DAY_MS;
  return new Date(ms).toISOString().slice(0, 10);
}

/** The calendar date in `zone` at instant `nowMs`. */
export function todayIn(zone: string, nowMs: number): string {
  return localDate(Math.floor(nowMs / 1000), zone);
}

/** Epoch seconds of the first instant of local day `date` in `zone` (DST-aware). */
export function dayStart(date: string, zone: string): number {
  return dayStarts(zone + '\u0000' + date);
}
// Memoised: every list request resolves two or three of these, and luxon takes ~150 us each.
const dayStarts = memo(10_000, (key: string): number => {
  const [zone, date] = key.split('\u0000') as [string, string];
  const dt = DateTime.fromISO(date, { zone });
  if (!dt.isValid) throw new RangeError(`invalid date or zone: ${date} ${zone}`);
  // startOf('day') handles zones whose midnight is skipped by a DST jump.
  return Math.floor(dt.startOf('day').toMillis() / 1000);
});

/**
 * The half-open instant range [start, end) covering whole local days `from`..`to` inclusive.
 * `to` may be null for "no upper bound".
 */
export function dayRange(from: string, to: string, zone: string): { start: number; end: number };
export function dayRange(from: string, to: string | null, zone: string): { start: number; end: number | null };
export function dayRange(from: string, to: string | null, zone: string): { start: number; end: number | null } {
  return { start: dayStart(from, zone), end: to === null ? null : dayStart(addDays(to, 1), zone) };
}

/** Epoch seconds of a local wall-clock time in `zone` (for demo data and tests). */
export function localToEpoch(date: string, hour: number, minute: number, zone: string): number {
  const dt = DateTime.fromISO(date, { zone }).set({ hour, minute, second: 0, millisecond: 0 });
  return Math.floor(dt.toMillis() / 1000);
}

const TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.\d+)?(?:Z|([+-])([01]\d|2[0-3]):([0-5]\d))$/i;

/** Parses an RFC 3339 timestamp with an explicit offset (or Z) into epoch seconds, else null. */
export function parseTimestamp(value: string): number | null {
  // RFC 3339 ranges: hour 00-23, minute and second 00-59, offset up to 23:59. By arithmetic, not
  // Luxon: an import parses two or three per line, and Luxon's fromISO was a tenth of its time.
  // The offset is whole minutes, so a fraction of a second never carries past the floor below.
  const m = TIMESTAMP_RE.exec(value);
  if (m === null) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  const offset = m[7] === undefined ? 0 : (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9]));
  const local = utcDayMs(year, month - 1, day) / 1000 + Number(m[4]) * 3600 + Number(m[5]) * 60 + Number(m[6]);
  return local - offset * 60;
}

/**
 * One zone's memos: by 6-hour span (NaN: the span holds a transition), and by 15-minute bucket;
 * and the span asked last, with its offset: the timestamps of a page (a list in time order, each
 * row's created and updated instants) mostly fall in the span of the one before, which then costs
 * no memo lookup.
 */
interface ZoneOffsets {
  spans: (span: number) => number;
  buckets: (bucket: number) => number;
  zone: IANAZone;
  lastSpan: number;
  lastSpanOffset: number;
}
const SPAN_MS = 6 * 3_600_000;
// Per zone in use (a few hundred exist); each bounded: a long-running process touches at most a
// few years of spans per zone.
const zoneOffsets = memo(1_000, (name: string): ZoneOffsets => {
  const zone = IANAZone.create(name);
  return {
    zone,
    spans: memo(50_000, (span: number) => offsetThroughout(zone, span * SPAN_MS, SPAN_MS)),
    buckets: memo(10_000, (bucket: number) => offsetThroughout(zone, bucket * BUCKET_MS, BUCKET_MS)),
    lastSpan: NaN,
    lastSpanOffset: 0,
  };
});
/** The zone asked last (a page's timestamps are all in its clinic's zone). */
let lastZone: { name: string; offsets: ZoneOffsets } = { name: '', offsets: zoneOffsets('UTC') };
function zoneOffsetsOf(name: string): ZoneOffsets {
  const offsets = zoneOffsets(name);
  lastZone = { name, offsets };
  return offsets;
}

/**
 * UTC offset of `zone` at `ms`, in minutes. Memoised per 6-hour span whose two ends agree (a
 * zone's transitions are months apart, so such a span has none; an import's timestamps spread
 * over years, and a 15-minute memo alone asked Luxon twice for every new quarter hour), and per
 * 15-minute bucket inside a span that holds a transition (they fall on 15-minute boundaries; a
 * bucket whose ends disagree is computed exactly).
 */
export function offsetMinutes(ms: number, zone: string): number {
  const z = zone === lastZone.name ? lastZone.offsets : zoneOffsetsOf(zone);
  const span = Math.floor(ms / SPAN_MS);
  if (span === z.lastSpan) return z.lastSpanOffset;
  const whole = z.spans(span);
  if (!Number.isNaN(whole)) {
    z.lastSpan = span;
    z.lastSpanOffset = whole;
    return whole;
  }
  const steady = z.buckets(Math.floor(ms / BUCKET_MS));
  return Number.isNaN(steady) ? z.zone.offset(ms) : steady;
}

/** The zone's offset over [start, start + length) when its two ends agree, else NaN (a transition within). */
function offsetThroughout(zone: IANAZone, start: number, length: number): number {
  const atStart = zone.offset(start);
  return zone.offset(start + length - 1) === atStart ? atStart : NaN;
}

const DAY_S = 86_400;
const TWO = Array.from({ length: 60 }, (_, i) => (i < 10 ? '0' : '') + i);
/** `HH:MM` of each minute of the day, and `:SS` of each second: a timestamp is then three joins, not eight. */
const HOUR_MINUTE = Array.from({ length: 1440 }, (_, i) => `${TWO[Math.floor(i / 60)]}:${TWO[i % 60]}`);
const COLON_SECOND = TWO.map((ss) => ':' + ss);
/** `YYYY-MM-DD` of a UTC day number (days since 1970-01-01), memoised. */
const dayString = memo(100_000, (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10));

/** `+01:00` for 60, memoised (whole minutes only). */
const offsetString = memo(1_000, (off: number): string => {
  const abs = Math.abs(off);
  return `${off < 0 ? '-' : '+'}${TWO[Math.floor(abs / 60)] ?? Math.floor(abs / 60)}:${TWO[abs % 60]}`;
});

/** The day and the offset formatTimestamp wrote last, with their texts: most timestamps of a page share them. */
let lastDay = NaN;
let lastDayT = '';
let lastOffset = NaN;
let lastOffsetText = '';

/** RFC 3339 with the zone's offset at that instant and whole seconds: `2026-11-21T10:30:00+01:00`. */
export function formatTimestamp(epochSeconds: number, zone: string): string {
  const ms = epochSeconds * 1000;
  const off = offsetMinutes(ms, zone);
  // Hot path (three per row of a citas page): the date part from a per-day cache, the time by arithmetic.
  if (Number.isInteger(off)) {
    const local = Math.floor(epochSeconds) + off * 60;
    const day = Math.floor(local / DAY_S);
    if (day !== lastDay) {
      lastDayT = dayString(day) + 'T';
      lastDay = day;
    }
    if (off !== lastOffset) {
      lastOffsetText = offsetString(off);
      lastOffset = off;
    }
    const sod = local - day * DAY_S;
    const minute = Math.floor(sod / 60);
    return lastDayT + HOUR_MINUTE[minute]! + COLON_SECOND[sod - minute * 60]! + lastOffsetText;
  }
  // Historical local mean time offsets are not whole minutes.
  const local = new Date(ms + off * 60_000).toISOString().slice(0, 19);
  const sign = off < 0 ? '-' : '+';
  const abs = Math.abs(off);
  const hh = Math.floor(abs / 60);
  const mm = abs % 60;
  return `${local}${sign}${hh < 10 ? '0' : ''}${hh}:${mm < 10 ? '0' : ''}${mm}`;
}

/** formatTimestamp with the milliseconds: `2026-11-21T10:30:00.250+01:00` (the request log's times, in the CLI). */
export function formatTimestampMs(epochMs: number, zone: string): string {
  const s = formatTimestamp(Math.floor(epochMs / 1000), zone);
  const ms = String(((epochMs % 1000) + 1000) % 1000).padStart(3, '0');
  return `${s.slice(0, 19)}.${ms}${s.slice(19)}`;
}

/** The local calendar date of an instant in `zone`. */
export function localDate(epochSeconds: number, zone: string): string {
  const ms = epochSeconds * 1000;
  const off = offsetMinutes(ms, zone);
  if (Number.isInteger(off)) return dayString(Math.floor((Math.floor(epochSeconds) + off * 60) / DAY_S));
  return new Date(ms + off * 60_000).toISOString().slice(0, 10);
}
