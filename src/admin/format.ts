// Counting and formatting in a page's language, with Intl only: plural forms (PluralRules), numbers
// (NumberFormat), dates and times in the clinic's time zone (DateTimeFormat), "5 minutes ago"
// (RelativeTimeFormat) and "a, b or c" (ListFormat). Nothing here reads the machine's time zone:
// every date is formatted in a zone given by the caller, or in UTC for a calendar day.
import { memo } from '../memo.js';
import type { Messages, Plural } from './locales/messages.js';

// One PluralRules and one NumberFormat per locale: building them costs more than using them.
const pluralRules = memo(16, (locale: string) => new Intl.PluralRules(locale));
const numberFormat = memo(16, (locale: string) => new Intl.NumberFormat(locale));

/** `forms` for the count `n` in `locale`: the plural category of n, with n formatted for the locale. */
export function countIn(locale: string, forms: Plural, n: number): string {
  const form = forms[pluralRules(locale).select(n)] ?? forms.other;
  return form.replaceAll('{n}', numberFormat(locale).format(n));
}

/** `forms` for the count `n` in the language of `t`. */
export function count(t: Messages, forms: Plural, n: number): string {
  return countIn(t.locale, forms, n);
}

/** Formatting in a page's language and the clinic's time zone, relative to the page's now. */
export class Formatter {
  private readonly dateTime: Intl.DateTimeFormat;
  private readonly date: Intl.DateTimeFormat;
  private readonly weekday: Intl.DateTimeFormat;
  private readonly longDay: Intl.DateTimeFormat;
  private readonly number: Intl.NumberFormat;
  private readonly relative: Intl.RelativeTimeFormat;
  private readonly orList: Intl.ListFormat;
  private readonly andList: Intl.ListFormat;

  constructor(
    readonly t: Messages,
    readonly timeZone: string,
    readonly nowMs: number,
  ) {
    this.dateTime = new Intl.DateTimeFormat(t.locale, { dateStyle: 'medium', timeStyle: 'short', timeZone });
    this.date = new Intl.DateTimeFormat(t.locale, { dateStyle: 'medium', timeZone });
    // Calendar days (`YYYY-MM-DD`, already the clinic's) are read at noon UTC and shown in UTC.
    this.weekday = new Intl.DateTimeFormat(t.locale, { weekday: 'short', day: 'numeric', timeZone: 'UTC' });
    this.longDay = new Intl.DateTimeFormat(t.locale, { weekday: 'long', day: 'numeric', month: 'long', timeZone: 'UTC' });
    this.number = new Intl.NumberFormat(t.locale);
    this.relative = new Intl.RelativeTimeFormat(t.locale, { numeric: 'auto' });
    this.orList = new Intl.ListFormat(t.locale, { type: 'disjunction' });
    this.andList = new Intl.ListFormat(t.locale, { type: 'conjunction' });
  }

  /** A counted phrase: "1 petición", "2 peticiones", "12.345 peticiones". */
  count(forms: Plural, n: number): string {
    return count(this.t, forms, n);
  }

  /** "a, b or c" in the page's language (Spanish also turns "o" into "u" before an o- sound). */
  or(items: readonly string[]): string {
    return this.orList.format(items);
  }

  /** "a, b y c" / "a, b and c" in the page's language. */
  list(items: readonly string[]): string {
    return this.andList.format(items);
  }

  dateTimeOf(epochS: number): string {
    return this.dateTime.format(epochS * 1000);
  }

  dateOf(epochS: number): string {
    return this.date.format(epochS * 1000);
  }

  /** `YYYY-MM-DD` as a short weekday and day number, e.g. "sáb 21". */
  shortDay(day: string): string {
    return this.weekday.format(Date.parse(`${day}T12:00:00Z`));
  }

  longDayOf(day: string): string {
    return this.longDay.format(Date.parse(`${day}T12:00:00Z`));
  }

  num(n: number): string {
    return this.number.format(n);
  }

  /** "5 minutes ago", "yesterday"... relative to the page's now; older than 30 days, the date. */
  ago(epochS: number): string {
    const diff = epochS - Math.floor(this.nowMs / 1000);
    const abs = Math.abs(diff);
    if (abs < 60) return this.relative.format(0, 'second');
    if (abs < 3600) return this.relative.format(Math.round(diff / 60), 'minute');
    if (abs < 86_400) return this.relative.format(Math.round(diff / 3600), 'hour');
    if (abs < 30 * 86_400) return this.relative.format(Math.round(diff / 86_400), 'day');
    return this.dateOf(epochS);
  }
}
