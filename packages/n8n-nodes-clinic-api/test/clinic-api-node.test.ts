// The Clinic API node run by n8n's WorkflowExecute against a real clinic-api on each database:
// Get Many with Return All and with a Limit over more records than a page holds (500), the
// filters of each list, Get by ID, and the errors n8n shows (404, a malformed ID, a bad filter).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { A, citaRecord, dialects, startClinic, uid, type Clinic } from './harness/clinic';
import { outputOf, runError, runWorkflow, type Harness } from './harness/n8n';
import { clinicNode, harnessFor } from './nodes';

/** Citas seeded in Q1 2027, far from the fixtures' (2026): 1,203 of them, every third cancelled. */
const EXTRA = 1_203;
const ESTADOS = ['confirmada', 'cancelada', 'completada'] as const;
const extraCitas = () =>
	Array.from({ length: EXTRA }, (_, n) => {
		// 4 January to 20 March 2027, 09:00 to 17:59 Madrid time (+01:00 all along).
		const day = new Date(Date.UTC(2027, 0, 4 + (n % 76))).toISOString().slice(0, 10);
		const time = `${String(9 + (n % 9)).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}`;
		return citaRecord(uid('a', 2, 10_000 + n), A.maria, `${day}T${time}:00+01:00`, {
			estado: ESTADOS[n % 3],
		});
	});
const Q1 = { desde: '2027-01-01', hasta: '2027-03-31' };

describe.each(dialects())('Clinic API node on %s', (dialect) => {
	let clinic: Clinic;
	let h: Harness;
	/** Every Q1 2027 cita in the API's order, read straight from the API. */
	let q1Ids: string[];

	beforeAll(async () => {
		clinic = await startClinic(dialect);
		await clinic.seedA(extraCitas());
		h = harnessFor(`${clinic.baseUrl}/`, clinic.key);
		q1Ids = [];
		for (let offset = 0; offset < EXTRA; offset += 500) {
			const page = await clinic.get<{ citas: { id: string }[] }>(
				`/api/v1/citas?desde=${Q1.desde}&hasta=${Q1.hasta}&limit=500&offset=${offset}`,
			);
			q1Ids.push(...page.citas.map((c) => c.id));
		}
	});
	afterAll(async () => {
		await clinic.close();
	});
	beforeEach(() => clinic.tick());

	const run = (parameters: Parameters<typeof clinicNode>[0], timezone?: string) =>
		runWorkflow(h, [clinicNode(parameters)], timezone ? { settings: { timezone } } : {});

	it('Get Many with Return All: every record of a list longer than a page, 500 a request, each once, in the API order', async () => {
		expect(q1Ids).toHaveLength(EXTRA);
		const from = clinic.requests.length;
		const out = await run({ resource: 'citas', operation: 'getAll', returnAll: true, filters: Q1 });
		expect(out.status).toBe('success');
		expect(outputOf(out, 'Clinic').map((i) => i.json.id)).toEqual(q1Ids);
		const pages = clinic
			.requestsTo('/api/v1/citas', from)
			.map((u) => Object.fromEntries(u.searchParams));
		expect(pages).toEqual(
			[0, 500, 1000].map((offset) => ({ ...Q1, limit: '500', offset: String(offset) })),
		);
	});

	it('Get Many with a Limit: that many records (the first of the list), in pages of at most 500', async () => {
		const from = clinic.requests.length;
		const out = await run({
			resource: 'citas',
			operation: 'getAll',
			returnAll: false,
			limit: 750,
			filters: Q1,
		});
		expect(outputOf(out, 'Clinic').map((i) => i.json.id)).toEqual(q1Ids.slice(0, 750));
		const pages = clinic
			.requestsTo('/api/v1/citas', from)
			.map((u) => [u.searchParams.get('limit'), u.searchParams.get('offset')]);
		expect(pages).toEqual([
			['500', '0'],
			['250', '500'],
		]);
		const small = await run({
			resource: 'citas',
			operation: 'getAll',
			returnAll: false,
			limit: 3,
			filters: Q1,
		});
		expect(outputOf(small, 'Clinic').map((i) => i.json.id)).toEqual(q1Ids.slice(0, 3));
	});

	it('Get Many of a short list with Return All: one request, every record', async () => {
		const from = clinic.requests.length;
		const out = await run({
			resource: 'clientas',
			operation: 'getAll',
			returnAll: true,
			filters: {},
		});
		expect(outputOf(out, 'Clinic').map((i) => i.json.nombre)).toEqual([
			'Ana 100%_Ruiz',
			'Ángela Ibáñez',
			'María José Núñez',
			'maria lopez',
			'Mario Pérez',
		]);
		expect(clinic.requestsTo('/api/v1/clientas', from)).toHaveLength(1);
	});

	it("filters: the list endpoint's own parameters, so the API's answer is the node's output", async () => {
		const cancelled = await run({
			resource: 'citas',
			operation: 'getAll',
			returnAll: true,
			filters: { ...Q1, estado: 'cancelada' },
		});
		const items = outputOf(cancelled, 'Clinic').map((i) => i.json);
		expect(items).toHaveLength(EXTRA / 3);
		expect(items.every((c) => c.estado === 'cancelada')).toBe(true);

		const vipMarias = await run({
			resource: 'clientas',
			operation: 'getAll',
			returnAll: true,
			filters: { q: 'maria', vip: 'true' },
		});
		expect(outputOf(vipMarias, 'Clinic').map((i) => i.json.nombre)).toEqual([
			'María José Núñez',
			'maria lopez',
		]);

		const from = clinic.requests.length;
		const booked = await run({
			resource: 'llamadas',
			operation: 'getAll',
			returnAll: true,
			filters: { desde: '2026-03-01T00:00:00', hasta: '2026-03-31', resultado: 'agendada' },
		});
		expect(outputOf(booked, 'Clinic').map((i) => [i.json.resultado, i.json.fecha_hora])).toEqual([
			['agendada', '2026-03-28T12:30:00+01:00'],
		]);
		// A date picker's date and time: its date part.
		expect(clinic.requestsTo('/api/v1/llamadas', from)[0]?.searchParams.get('desde')).toBe(
			'2026-03-01',
		);
	});

	it("Updated Since: a date picker's wall-clock time is read in the workflow's time zone", async () => {
		// Every fixture and seeded record last changed at 2026-03-28 12:00 UTC, 13:00 in Madrid.
		const from = clinic.requests.length;
		const at = await run(
			{
				resource: 'clientas',
				operation: 'getAll',
				returnAll: true,
				filters: { updated_since: '2026-03-28T13:00:00' },
			},
			'Europe/Madrid',
		);
		expect(outputOf(at, 'Clinic')).toHaveLength(5);
		const after = await run(
			{
				resource: 'clientas',
				operation: 'getAll',
				returnAll: true,
				filters: { updated_since: '2026-03-28T13:00:01' },
			},
			'Europe/Madrid',
		);
		expect(after.status).toBe('success');
		expect(outputOf(after, 'Clinic')).toHaveLength(0);
		expect(
			clinic.requestsTo('/api/v1/clientas', from).map((u) => u.searchParams.get('updated_since')),
		).toEqual(['2026-03-28T12:00:00Z', '2026-03-28T12:00:01Z']);
		// With an offset it is sent as given.
		const withOffset = await run({
			resource: 'clientas',
			operation: 'getAll',
			returnAll: true,
			filters: { updated_since: '2026-03-28T07:00:00-05:00' },
		});
		expect(outputOf(withOffset, 'Clinic')).toHaveLength(5);
	});

	it('Get by ID: the record exactly as its list shows it, for each resource', async () => {
		const lists = {
			citas: (
				await clinic.get<{ citas: Record<string, unknown>[] }>(
					`/api/v1/citas?desde=${Q1.desde}&hasta=${Q1.hasta}&limit=1`,
				)
			).citas[0],
			clientas: (
				await clinic.get<{ clientas: Record<string, unknown>[] }>('/api/v1/clientas?q=mario')
			).clientas[0],
			llamadas: (
				await clinic.get<{ llamadas: Record<string, unknown>[] }>(
					'/api/v1/llamadas?resultado=agendada',
				)
			).llamadas[0],
		};
		for (const [resource, record] of Object.entries(lists)) {
			const out = await run({ resource, operation: 'get', id: ` ${String(record?.id)} ` });
			expect(outputOf(out, 'Clinic').map((i) => i.json)).toEqual([record]);
		}
	});

	it("404: the run fails with the API's message, its code and what to do", async () => {
		const missing = uid('a', 2, 999_999);
		const out = await run({ resource: 'citas', operation: 'get', id: missing });
		expect(out.status).toBe('error');
		const error = runError(out);
		expect(error.message).toBe(`No cita with id ${missing} in this API key's clinic`);
		expect(error.description).toMatch(
			/^HTTP 404, code not_found, request_id \S+\. No record with this ID/,
		);
		// Another clinic's record is not found either.
		const theirs = await run({ resource: 'clientas', operation: 'get', id: uid('b', 1, 1) });
		expect(runError(theirs).description).toMatch(/^HTTP 404, code not_found/);
	});

	it("a malformed ID is the API's 400 naming the parameter", async () => {
		const out = await run({ resource: 'llamadas', operation: 'get', id: 'not-a-uuid' });
		expect(out.status).toBe('error');
		expect(runError(out).description).toMatch(
			/^HTTP 400, code invalid_parameter, parameter id, request_id \S+\. Change the parameter/,
		);
	});

	it('a filter that is not a date is refused before any request, naming the filter', async () => {
		const from = clinic.requests.length;
		const badDate = await run({
			resource: 'citas',
			operation: 'getAll',
			returnAll: true,
			filters: { desde: 'next monday' },
		});
		expect(runError(badDate).message).toBe(
			'From Date must be a date (YYYY-MM-DD), got "next monday"',
		);
		const badTime = await run({
			resource: 'llamadas',
			operation: 'getAll',
			returnAll: true,
			filters: { updated_since: 'yesterday' },
		});
		expect(runError(badTime).message).toBe(
			'Updated Since must be a date and time (e.g. 2026-03-28T09:00:00), got "yesterday"',
		);
		const empty = await run({ resource: 'citas', operation: 'get', id: '  ' });
		expect(runError(empty).message).toBe('ID is empty: give the ID of the record to get');
		expect(clinic.requests.length).toBe(from);
	});

	it("a key without the resource's scope fails the run naming the scope and who can add it", async () => {
		const scoped = await clinic.t.keys.create({
			clinicId: clinic.t.clinicA.id,
			name: 'clients only',
			expiresAt: null,
			createdBy: null,
			scopes: ['clientas:read'],
		});
		const out = await runWorkflow(harnessFor(clinic.baseUrl, scoped.key), [
			clinicNode({ resource: 'citas', operation: 'getAll', returnAll: true }),
		]);
		expect(out.status).toBe('error');
		const error = runError(out);
		expect(error.message).toMatch(/needs the scope citas:read.*dashboard \(Settings > API\)/);
		expect(error.description).toMatch(
			/^HTTP 403, code insufficient_scope, scope citas:read, request_id \S+\.$/,
		);
	});

	it('a wrong key fails the run with the way out', async () => {
		const out = await runWorkflow(harnessFor(clinic.baseUrl, 'ck_wrong'), [
			clinicNode({ resource: 'clientas', operation: 'getAll', returnAll: true }),
		]);
		expect(out.status).toBe('error');
		expect(runError(out).description).toMatch(
			/^HTTP 401, code invalid_api_key.*make a new one in the clinic dashboard/,
		);
	});
});
