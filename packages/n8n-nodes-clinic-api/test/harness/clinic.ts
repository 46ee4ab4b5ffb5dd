/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code run by vitest in Node, never shipped (files: dist) */
// A real clinic-api on 127.0.0.1 for the nodes to call: the service's own app, built by the
// repository's test helpers on a fresh SQLite or PostgreSQL database with its two fixture
// clinics, listening on a free port. Nothing of it is faked; the test owns its clock.
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';

import type { Dialect } from '../../../../src/db/dialect.js';
import type { ImportRecord } from '../../../../src/domain/records.js';
import { EventRetention } from '../../../../src/services/event-retention.js';
import { importJsonLines } from '../../../../src/services/import.js';
import { buildTestApp, seedRecords, type TestApp } from '../../../../test/helpers/app.js';

export { dialects } from '../../../../test/helpers/db.js';
export { A, citaRecord, uid } from '../../../../test/helpers/fixtures.js';

export interface Clinic {
	t: TestApp;
	baseUrl: string;
	/** Clinic A's key. */
	key: string;
	/** Every request the server received (path and query), oldest first. */
	requests: URL[];
	/** The requests to `path` (e.g. /api/v1/citas) since `from` (an index into `requests`). */
	requestsTo(path: string, from?: number): URL[];
	/** Lets the rate limiter's clock move on, as tests between calls do (it never goes back). */
	tick(ms?: number): void;
	/** Clinic A's data changes through the service's import (JSON lines), at the clock's now. */
	importA(lines: object[]): Promise<void>;
	/** Clinic A's records written as an import writes them (with their events). */
	seedA(records: ImportRecord[]): Promise<void>;
	/** The event retention's pass (EVENT_RETENTION_DAYS=30) at the clock's now. */
	expireEvents(): Promise<number>;
	/** GET on the API with clinic A's key, straight (not through n8n), for expected values. */
	get<T>(pathAndQuery: string): Promise<T>;
	close(): Promise<void>;
}

export async function startClinic(dialect: Dialect): Promise<Clinic> {
	const t = await buildTestApp(dialect);
	const baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
	const requests: URL[] = [];
	// A second listener only watches: Fastify's own handler answers every request.
	t.app.server.on('request', (req: IncomingMessage) =>
		requests.push(new URL(req.url ?? '/', baseUrl)),
	);
	return {
		t,
		baseUrl,
		key: t.keyA,
		requests,
		requestsTo: (path, from = 0) => requests.slice(from).filter((u) => u.pathname === path),
		tick(ms = 2_000) {
			t.clock.now += ms;
		},
		async importA(lines) {
			const input = Readable.from([lines.map((l) => JSON.stringify(l)).join('\n')]);
			const res = await importJsonLines(t.database, t.clinicA.id, input, {
				now: () => t.clock.now,
			});
			if (!res.ok) throw new Error(`import failed: ${JSON.stringify(res.errors)}`);
		},
		seedA: (records) => seedRecords(t.database, t.clinicA, records, t.clock.now),
		async expireEvents() {
			const retention = new EventRetention(t.database, {
				days: 30,
				now: () => t.clock.now,
				log: { info() {}, error() {} },
			});
			return (await retention.pass()).removed;
		},
		async get<T>(pathAndQuery: string) {
			const res = await fetch(`${baseUrl}${pathAndQuery}`, {
				headers: { authorization: `Bearer ${t.keyA}` },
			});
			if (!res.ok) throw new Error(`GET ${pathAndQuery}: ${res.status} ${await res.text()}`);
			return (await res.json()) as T;
		},
		close: () => t.close(),
	};
}
