// The change feed's follower against the real service, on both databases: from 'now', batches of
// events with the cursor to save, has_more followed at once, idle polls that are 304s (If-None-Match),
// `tipo`, a signal that ends the loop, and 410 cursor_expired: a typed error, or, with a handler,
// a restart from the present taken before the handler re-reads, so that a change made while it
// re-reads still comes through the feed.
import { ClinicApi, ClinicApiError, CursorExpiredError, type FeedBatch } from '@clinic-api/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireEvents } from '../../../src/repos/events.js';
import { seedRecords } from '../../../test/helpers/app.js';
import { dialects } from '../../../test/helpers/db.js';
import { A, citaRecord, clientaRecord, uid } from '../../../test/helpers/fixtures.js';
import { until } from '../../../test/helpers/wait.js';
import { listeningApp, pathOf, recordingFetch, type ListeningApp } from './helpers.js';

describe.each(dialects())('eventos.follow() on %s', (dialect) => {
  let t: ListeningApp;
  let n = 0;
  beforeAll(async () => {
    t = await listeningApp(dialect, { env: { RATE_LIMIT_RPS: '10000', RATE_LIMIT_BURST: '10000' } });
  });
  afterAll(async () => {
    await t.close();
  });

  /** `count` new citas of clinic A, committed as an import commits them. */
  const change = async (count: number) => {
    t.clock.now += 1_000;
    const rows = Array.from({ length: count }, () => citaRecord(uid('a', 2, 5_000 + ++n), A.maria, '2026-04-02T10:00:00+02:00'));
    await seedRecords(t.database, t.clinicA, rows, t.clock.now);
    return rows.map((r) => r.id);
  };

  it("from 'now': the changes that follow, in batches with their cursor; idle polls are 304s; the signal ends it", async () => {
    const rec = recordingFetch();
    const api = new ClinicApi({ baseUrl: t.baseUrl, apiKey: t.keyA, fetch: rec.fetch });
    const ac = new AbortController();
    const feed = api.eventos.follow({ cursor: 'now', limit: 2, pollIntervalMs: 10, signal: ac.signal });

    // the present's cursor first, with no events: saved, it resumes here
    const start = (await feed.next()).value as FeedBatch;
    expect(start).toMatchObject({ eventos: [], hasMore: false });
    expect(start.cursor).not.toBe('now');

    const ids = await change(5);
    const batches: FeedBatch[] = [];
    while (batches.flatMap((b) => b.eventos).length < 5) batches.push((await feed.next()).value as FeedBatch);
    expect(batches.map((b) => [b.eventos.length, b.hasMore])).toEqual([
      [2, true],
      [2, true],
      [1, false],
    ]);
    expect(batches.flatMap((b) => b.eventos.map((e) => [e.tipo, e.datos.id]))).toEqual(ids.map((id) => ['cita.creada', id]));
    // each batch's cursor is the next request's
    const cursors = rec.requests.map((r) => new URL(r.url).searchParams.get('cursor'));
    expect(cursors).toEqual(['now', start.cursor, batches[0]!.cursor, batches[1]!.cursor]);

    // Idle: the same cursor again with its ETag, answered 304 without a body.
    const pending = feed.next();
    await until(() => rec.requests.filter((r) => r.status === 304).length >= 2, 'two 304 polls');
    expect(
      rec.requests.filter((r) => r.status === 304).every((r) => r.headers['if-none-match'] && r.url.includes(batches[2]!.cursor)),
    ).toBe(true);
    const [late] = await change(1);
    expect(((await pending).value as FeedBatch).eventos.map((e) => e.datos.id)).toEqual([late]);

    const stopped = feed.next();
    await until(() => rec.requests.at(-1)!.status === 304, 'a poll after the last batch');
    ac.abort();
    expect(await stopped).toEqual({ done: true, value: undefined });
  });

  it('tipo as a list of event types', async () => {
    const rec = recordingFetch();
    const api = new ClinicApi({ baseUrl: t.baseUrl, apiKey: t.keyA, fetch: rec.fetch });
    const cursor = await api.eventos.now();
    t.clock.now += 1_000;
    await seedRecords(t.database, t.clinicA, [clientaRecord(uid('a', 1, 900), 'Nueva', '+34600900900')], t.clock.now);
    await change(1);
    const ac = new AbortController();
    const tipos: string[] = [];
    for await (const batch of api.eventos.follow({
      cursor,
      tipo: ['clienta.creada', 'clienta.eliminada'],
      pollIntervalMs: 10,
      signal: ac.signal,
    })) {
      tipos.push(...batch.eventos.map((e) => e.tipo));
      if (!batch.hasMore) ac.abort();
    }
    expect(tipos).toEqual(['clienta.creada']);
    expect(pathOf(rec.requests.at(-1)!.url)).toContain('tipo=clienta.creada%2Cclienta.eliminada');
  });

  it('410 cursor_expired without a handler: a CursorExpiredError', async () => {
    const api = new ClinicApi({ baseUrl: t.baseUrl, apiKey: t.keyA });
    const old = (await api.eventos.list({ limit: 1 })).next_cursor;
    await t.database.writeTransaction((trx) => expireEvents(trx, t.clinicA.id, 3));
    const err = await (async () => {
      for await (const _ of api.eventos.follow({ cursor: old, pollIntervalMs: 10 })) throw new Error('no batch expected');
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CursorExpiredError);
    expect(err).toBeInstanceOf(ClinicApiError);
    expect(err).toMatchObject({ status: 410, code: 'cursor_expired' });
  });

  it("410 cursor_expired with onCursorExpired: the present's cursor is taken before the re-read, so a change made during it is followed", async () => {
    const rec = recordingFetch();
    const api = new ClinicApi({ baseUrl: t.baseUrl, apiKey: t.keyA, fetch: rec.fetch });
    const old = (await api.eventos.list({ limit: 1 })).next_cursor;
    await t.database.writeTransaction((trx) => expireEvents(trx, t.clinicA.id, 5));
    const calls: string[] = [];
    let during: string[] = [];
    const ac = new AbortController();
    const seen: string[] = [];
    for await (const batch of api.eventos.follow({
      cursor: old,
      pollIntervalMs: 10,
      signal: ac.signal,
      onCursorExpired: async ({ cursor, error }) => {
        expect(error.code).toBe('cursor_expired');
        calls.push(cursor);
        // the re-read of the collections, while the clinic goes on changing
        await api.clientas.list({ limit: 500 });
        during = await change(2);
      },
    })) {
      seen.push(...batch.eventos.map((e) => e.datos.id));
      if (!batch.hasMore && seen.length >= 2) ac.abort();
    }
    expect(calls).toHaveLength(1);
    expect(seen).toEqual(during);
    // in this order: the expired cursor, the present, the re-read, then the feed from the present
    expect(rec.requests.slice(1, 5).map((r) => [new URL(r.url).pathname, new URL(r.url).searchParams.get('cursor'), r.status])).toEqual([
      ['/api/v1/eventos', old, 410],
      ['/api/v1/eventos', 'now', 200],
      ['/api/v1/clientas', null, 200],
      ['/api/v1/eventos', calls[0], 200],
    ]);
  });

  it('a cursor is required', async () => {
    const api = new ClinicApi({ baseUrl: t.baseUrl, apiKey: t.keyA });
    await expect(api.eventos.follow({} as never).next()).rejects.toThrow(/needs a cursor: one saved from a batch, or 'now'/);
  });
});
