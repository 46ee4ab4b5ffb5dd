// Auto-paging against the real service, on both databases: `for await` over every record of a
// list, 500 a request unless told otherwise, no request past the page that reaches `total`, the
// list's order kept, and a walk over a default date window that crosses the clinic's midnight
// staying in the window of its first page.
import { ClinicApi, type Cita } from '@clinic-api/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../../test/helpers/app.js';
import { dialects } from '../../../test/helpers/db.js';
import { A, citaRecord, uid } from '../../../test/helpers/fixtures.js';
import { listeningApp, pathOf, recordingFetch, type ListeningApp } from './helpers.js';

const EXTRA = 1_234;

describe.each(dialects())('auto-paging on %s', (dialect) => {
  let t: ListeningApp;
  beforeAll(async () => {
    t = await listeningApp(dialect, { env: { RATE_LIMIT_RPS: '10000', RATE_LIMIT_BURST: '10000' } });
    // 1,234 more citas in April, several at each minute so that the order's tie-break on id matters
    const extra = Array.from({ length: EXTRA }, (_, i) => {
      const day = 1 + (i % 20);
      const minute = Math.floor(i / 20) % 60;
      const fecha = `2026-04-${String(day).padStart(2, '0')}T10:${String(minute).padStart(2, '0')}:00+02:00`;
      return citaRecord(uid('a', 2, 10_000 + i), i % 2 ? A.maria : A.mario, fecha);
    });
    await seedRecords(t.database, t.clinicA, extra);
  });
  afterAll(async () => {
    await t.close();
  });

  const client = () => {
    const rec = recordingFetch();
    return { rec, api: new ClinicApi({ baseUrl: t.baseUrl, apiKey: t.keyA, fetch: rec.fetch }) };
  };
  const april = { desde: '2026-04-01', hasta: '2026-04-30' } as const;

  it('every record once, in the order of the list, 500 a request', async () => {
    const { rec, api } = client();
    const seen: Cita[] = [];
    for await (const cita of api.citas.all(april)) seen.push(cita);
    const total = (await api.citas.list({ ...april, limit: 1 })).total;
    expect(total).toBeGreaterThanOrEqual(EXTRA);
    expect(seen).toHaveLength(total);
    expect(new Set(seen.map((c) => c.id)).size).toBe(total);
    const keys = seen.map((c) => [Date.parse(c.fecha_hora), c.id] as const);
    const sorted = [...keys].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    expect(keys).toEqual(sorted);
    expect(rec.requests.slice(0, -1).map((r) => pathOf(r.url))).toEqual([
      '/api/v1/citas?desde=2026-04-01&hasta=2026-04-30&limit=500&offset=0',
      '/api/v1/citas?desde=2026-04-01&hasta=2026-04-30&limit=500&offset=500',
      '/api/v1/citas?desde=2026-04-01&hasta=2026-04-30&limit=500&offset=1000',
    ]);
  });

  it('no request past the page that reaches total (a total that is a multiple of the page size)', async () => {
    const { rec, api } = client();
    const total = (await api.citas.list({ ...april, limit: 1 })).total;
    let n = 0;
    // a page size that divides the total exactly
    const size = [2, 3, 5, 7, 11, 13].find((d) => total % d === 0 && total / d <= 500)!;
    expect(size).toBeDefined();
    for await (const page of api.citas.pages({ ...april, limit: total / size })) n += page.citas.length;
    expect(n).toBe(total);
    expect(rec.requests).toHaveLength(1 + size);
  });

  it('a page size of its own, an offset to start from, and breaking out of the loop stops the requests', async () => {
    const { rec, api } = client();
    const names: string[] = [];
    for await (const c of api.clientas.all({ limit: 2, offset: 1 })) names.push(c.nombre);
    expect(names).toHaveLength(4);
    expect(rec.requests.map((r) => pathOf(r.url))).toEqual(['/api/v1/clientas?limit=2&offset=1', '/api/v1/clientas?limit=2&offset=3']);
    rec.requests.length = 0;
    for await (const _ of api.citas.all({ ...april, limit: 10 })) break;
    expect(rec.requests).toHaveLength(1);
  });

  it("a walk over the default window keeps its first page's window when the clinic's midnight passes", async () => {
    const { rec, api } = client();
    const pages = api.citas.pages({ limit: 500 });
    const first = (await pages.next()).value!;
    expect(first.rango).toEqual({ desde: '2026-03-28', hasta: '2026-04-27' });
    // the clinic's next day begins between two pages
    t.clock.now += 24 * 3600_000;
    const rest: number[] = [];
    for await (const page of pages) rest.push(page.citas.length);
    const walked = first.citas.length + rest.reduce((a, b) => a + b, 0);
    expect(walked).toBe(first.total);
    expect(rec.requests.slice(1).map((r) => pathOf(r.url))).toEqual(
      rest.map((_, i) => `/api/v1/citas?limit=500&offset=${500 * (i + 1)}&desde=2026-03-28&hasta=2026-04-27`),
    );
    // A new walk starts in the new window.
    expect((await api.citas.list({ limit: 1 })).rango).toEqual({ desde: '2026-03-29', hasta: '2026-04-28' });

    // llamadas: the default first day (today - 7) is kept the same way
    rec.requests.length = 0;
    const calls = api.llamadas.pages({ limit: 1 });
    const firstCall = (await calls.next()).value!;
    t.clock.now += 24 * 3600_000;
    let count = firstCall.llamadas.length;
    for await (const page of calls) count += page.llamadas.length;
    expect(count).toBe(firstCall.total);
    expect(rec.requests.slice(1).every((r) => pathOf(r.url).endsWith(`&desde=${firstCall.desde}`))).toBe(true);
    expect(rec.requests.length).toBe(firstCall.total);
  });
});
