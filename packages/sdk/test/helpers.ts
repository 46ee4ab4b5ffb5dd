// Shared by the SDK's tests (not a test file itself): the real app (test/helpers/app.ts, both
// databases) listening on 127.0.0.1, so the SDK talks HTTP to it as to a deployed service, and a
// fetch that records the requests the SDK makes.
import { buildTestApp, type TestApp, type TestAppOptions } from '../../../test/helpers/app.js';
import type { Dialect } from '../../../src/db/dialect.js';

export interface ListeningApp extends TestApp {
  baseUrl: string;
}

/** The test app (two clinics, fixtures, a key each) on a real port. */
export async function listeningApp(dialect: Dialect, opts: TestAppOptions = {}): Promise<ListeningApp> {
  const t = await buildTestApp(dialect, opts);
  return Object.assign(t, { baseUrl: await t.app.listen({ port: 0, host: '127.0.0.1' }) });
}

export interface Recorded {
  url: string;
  headers: Record<string, string>;
  status: number | 'error';
}

/** The global fetch, recording each request (its URL with query, its headers) and what came back. */
export function recordingFetch(): { fetch: typeof fetch; requests: Recorded[] } {
  const requests: Recorded[] = [];
  return {
    requests,
    fetch: async (input, init) => {
      const entry: Recorded = { url: String(input), headers: Object.fromEntries(new Headers(init?.headers).entries()), status: 'error' };
      requests.push(entry);
      const res = await fetch(input, init);
      entry.status = res.status;
      return res;
    },
  };
}

/** The path and query of a recorded URL, e.g. /api/v1/citas?limit=500&offset=0. */
export const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};
