// The key results of src/time.ts, as one JSON-able object. time-zones.test.ts computes it in-process
// (TZ=UTC) and in child processes started with far-off machine zones, and requires the same
// answers: nothing in the time module may depend on the machine's zone.
// Run directly (`node --import tsx test/unit/time-probe.ts`) it prints the object as JSON.
import { pathToFileURL } from 'node:url';
import {
  addDays,
  dayRange,
  dayStart,
  formatTimestamp,
  isValidDate,
  localDate,
  localToEpoch,
  parseTimestamp,
  todayIn,
} from '../../src/time.js';

const s = (iso: string) => Date.parse(iso) / 1000;

export function probe() {
  const zones = [
    'Europe/Madrid',
    'America/Mexico_City',
    'Pacific/Auckland',
    'Asia/Kathmandu',
    'America/St_Johns',
    'Africa/Cairo',
    'America/Santiago',
  ];
  const instants = [
    '2026-01-08T12:00:00Z',
    '2026-03-28T22:59:59Z',
    '2026-03-28T23:00:00Z',
    '2026-03-29T00:59:59Z',
    '2026-03-29T01:00:00Z',
    '2026-04-23T21:59:59Z',
    '2026-04-23T22:00:00Z',
    '2026-07-01T11:59:59Z',
    '2026-10-25T00:30:00Z',
    '2026-10-25T01:30:00Z',
    '2026-12-31T23:30:00Z',
  ];
  const days = [
    '2026-03-28',
    '2026-03-29',
    '2026-03-30',
    '2026-04-04',
    '2026-04-05',
    '2026-04-24',
    '2026-09-06',
    '2026-09-27',
    '2026-10-25',
    '2026-12-31',
  ];
  return {
    machine: {
      // Reported separately by the test: proves the child really ran in another zone.
      zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      offsetMinutes: new Date(Date.UTC(2026, 0, 8, 12)).getTimezoneOffset(),
    },
    results: {
      formatted: zones.map((z) => instants.map((i) => formatTimestamp(s(i), z))),
      localDates: zones.map((z) => instants.map((i) => localDate(s(i), z))),
      today: zones.map((z) => instants.map((i) => todayIn(z, Date.parse(i)))),
      ranges: zones.map((z) => days.map((d) => dayRange(d, d, z))),
      starts: zones.map((z) => days.map((d) => dayStart(d, z))),
      openRange: dayRange('2026-03-01', null, 'Europe/Madrid'),
      wallClock: zones.map((z) => localToEpoch('2026-07-01', 9, 30, z)),
      parsed: [
        '2026-11-21T10:30:00+01:00',
        '2026-11-21T09:30:00Z',
        '2026-03-29T03:00:00+02:00',
        '2026-01-08T17:45:00.75+05:45',
        '2026-11-21T10:30:00',
        '2026-02-30T10:00:00Z',
      ].map(parseTimestamp),
      dates: ['2024-02-29', '2026-02-29', '2026-02-30', '2000-02-29', '1900-02-29'].map(isValidDate),
      added: [addDays('2026-03-28', 1), addDays('2026-10-25', 1), addDays('2026-12-31', 1), addDays('2024-03-01', -1)],
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`${JSON.stringify(probe())}\n`);
}
