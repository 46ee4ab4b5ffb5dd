// A real clinic-api on 127.0.0.1 for the integration to call, and Zapier's own app tester
// (zapier-platform-core's createAppTester, which runs a method as Zapier's runtime does: the
// app's middlewares, Zapier's request client, its error handling). The server is the service's
// own app on a fresh SQLite database with the two fixture clinics; nothing is faked. One database
// is enough here: what the integration does does not depend on it, and the server's own tests run
// every endpoint on both.
import { Readable } from 'node:stream';

import { createAppTester } from 'zapier-platform-core';

import { importJsonLines } from '../../../src/services/import.js';
import { buildTestApp, type TestApp, type TestAppOptions } from '../../../test/helpers/app.js';
import { createApp } from '../src/app';

export { A, citaRecord, clientaRecord, llamadaRecord, uid } from '../../../test/helpers/fixtures.js';

export interface Clinic {
  t: TestApp;
  baseUrl: string;
  /** Clinic A's key (every scope but webhooks:write, as keys are made by default). */
  key: string;
  /** Lets the rate limiter's clock move on, as time passes between a Zap's steps. */
  tick(ms?: number): void;
  /** Clinic A's data changes through the service's import (JSON lines), at the clock's now. */
  importA(lines: object[]): Promise<void>;
  /** A request to the API with `key` (default clinic A's), straight, for expected values. */
  api(pathAndQuery: string, init?: RequestInit & { key?: string }): Promise<Response>;
  get<T>(pathAndQuery: string, key?: string): Promise<T>;
  close(): Promise<void>;
}

export async function startClinic(opts: TestAppOptions = {}): Promise<Clinic> {
  const t = await buildTestApp('sqlite', opts);
  const baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const api: Clinic['api'] = (pathAndQuery, init = {}) =>
    fetch(`${baseUrl}${pathAndQuery}`, { ...init, headers: { authorization: `Bearer ${init.key ?? t.keyA}`, ...init.headers } });
  return {
    t,
    baseUrl,
    key: t.keyA,
    tick(ms = 2_000) {
      t.clock.now += ms;
    },
    async importA(lines) {
      const input = Readable.from([lines.map((l) => JSON.stringify(l)).join('\n')]);
      const res = await importJsonLines(t.database, t.clinicA.id, input, { now: () => t.clock.now });
      if (!res.ok) throw new Error(`import failed: ${JSON.stringify(res.errors)}`);
    },
    api,
    async get<T>(pathAndQuery: string, key?: string) {
      const res = await api(pathAndQuery, { key });
      if (!res.ok) throw new Error(`GET ${pathAndQuery}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    },
    close: () => t.close(),
  };
}

/**
 * Zapier's app tester on the integration as published for `baseUrl` (CLINIC_API_URL) with the
 * given authentication (CLINIC_API_AUTH), as `zapier env:set` would configure it.
 */
export function zapierFor(baseUrl: string, auth: 'api_key' | 'oauth2' = 'api_key') {
  process.env.CLINIC_API_URL = baseUrl;
  process.env.CLINIC_API_AUTH = auth;
  const app = createApp();
  // One signature for every method the tests run (the tester's own types are per operation).
  const run = createAppTester(app) as unknown as (method: unknown, bundle?: object) => Promise<unknown>;
  return { app, run };
}

/** What Zapier's runtime throws carries the app's message inside a JSON envelope: the message alone. */
export function messageOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  try {
    return (JSON.parse(text) as { message: string }).message;
  } catch {
    return text;
  }
}
