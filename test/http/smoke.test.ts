import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';

describe.each(dialects())('smoke on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => { t = await buildTestApp(dialect); });
  afterAll(async () => { await t.close(); });

  it('lists citas of the key clinic only', async () => {
    const res = await t.app.inject({ url: '/api/v1/citas', headers: bearer(t.keyA) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.rango).toEqual({ desde: '2026-03-28', hasta: '2026-04-27' });
    expect(body.citas.map((c: { fecha_hora: string }) => c.fecha_hora)).toEqual([
      '2026-03-28T09:00:00+01:00', '2026-03-28T09:00:00+01:00', '2026-03-29T00:30:00+01:00',
      '2026-03-29T03:00:00+02:00', '2026-03-29T23:30:00+02:00', '2026-03-30T00:00:00+02:00', '2026-04-27T20:00:00+02:00',
    ]);
    expect(body.total).toBe(7);
  });
});
