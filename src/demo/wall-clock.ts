// The demo generator's clinic time (demo/generate.ts): local wall-clock times as instants, cached
// per day and hour so the inner loops at scale 1000 do no luxon work.
import { addDays, localToEpoch } from '../time.js';

/**
 * Instants of local wall-clock times, by day offset from today. One luxon call per (day, hour),
 * then plain arithmetic for minutes and seconds: zone transitions happen on hour boundaries
 * (and at night), so within an hour the wall clock and the instant move together. Midnight plus
 * minutes would be an hour off after a DST change; this is not.
 */
export class WallClock {
  private readonly hours = new Map<number, number>();
  private readonly dates = new Map<number, string>();
  private readonly todayWeekday: number;

  constructor(
    private readonly today: string,
    private readonly zone: string,
  ) {
    this.todayWeekday = new Date(`${today}T00:00:00Z`).getUTCDay();
  }

  date(offset: number): string {
    let d = this.dates.get(offset);
    if (d === undefined) {
      d = addDays(this.today, offset);
      this.dates.set(offset, d);
    }
    return d;
  }

  /** 0 = Sunday. */
  weekday(offset: number): number {
    return (((this.todayWeekday + offset) % 7) + 7) % 7;
  }

  at(offset: number, hour: number, minute: number, second = 0): number {
    const key = offset * 24 + hour;
    let base = this.hours.get(key);
    if (base === undefined) {
      base = localToEpoch(this.date(offset), hour, 0, this.zone);
      this.hours.set(key, base);
    }
    return base + minute * 60 + second;
  }
}
