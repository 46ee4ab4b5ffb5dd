// The Clinic API Trigger polled through n8n-core's PollTriggerExecutor (what n8n's scheduler
// runs for an active workflow) against a real clinic-api on each database, whose data changes
// through the service's own import: the first poll takes the present, later polls emit what
// changed since (one item per event, oldest first), the type filter, the bound per poll, a
// cursor the event retention removed (410 cursor_expired), and the editor's manual test.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { RESYNC_TYPE } from '../nodes/ClinicApiTrigger/feed';
import { A, dialects, startClinic, uid, type Clinic } from './harness/clinic';
import { createPoller } from './harness/poller';
import { harnessFor, triggerNode } from './nodes';

const DAY_MS = 86_400_000;

/** Three changes, one of each kind: a new clienta, a cita changed, a llamada deleted (1 to 5: the fixtures'). */
const changes = (n: number) => [
	{
		type: 'clienta',
		id: uid('a', 1, 100 + n),
		nombre: `Lucía Gómez ${n}`,
		telefono: `+3464455${String(5000 + n)}`,
		email: null,
		idioma: 'es',
		vip: false,
		cliente_desde: '2026-03-28',
		created_at: '2026-03-28T10:00:00+01:00',
	},
	{
		type: 'cita',
		id: uid('a', 2, 1),
		clienta_id: A.maria,
		fecha_hora: '2026-03-27T23:59:59+01:00',
		servicio: `Masaje ${n}`,
		duracion_min: 60,
		precio: 55.5,
		estado: 'confirmada',
		profesional_nombre: 'Laura Martín',
		sede_nombre: 'Sede Centro',
		created_at: '2026-03-01T09:00:00+01:00',
	},
	{ type: 'llamada', id: uid('a', 3, n), deleted: true },
];

describe.each(dialects())('Clinic API Trigger on %s', (dialect) => {
	let clinic: Clinic;
	beforeAll(async () => {
		clinic = await startClinic(dialect);
	});
	afterAll(async () => {
		await clinic.close();
	});
	beforeEach(() => clinic.tick());

	const poller = (parameters = {}) =>
		createPoller(harnessFor(clinic.baseUrl, clinic.key), triggerNode(parameters));
	const emitted = (out: Awaited<ReturnType<ReturnType<typeof poller>['poll']>>) => {
		expect(out.error).toBeNull();
		return (out.emitted?.[0] ?? []).map(
			(i) =>
				i.json as { id: string; tipo: string; ocurrido_at: string; datos: Record<string, unknown> },
		);
	};

	it('first poll: takes the present (cursor=now) and emits nothing, so no past change is delivered', async () => {
		const trigger = poller();
		const from = clinic.requests.length;
		expect(await trigger.poll()).toEqual({ emitted: null, error: null });
		const now = await clinic.get<{ next_cursor: string }>('/api/v1/eventos?cursor=now');
		expect(trigger.state.cursor).toBe(now.next_cursor);
		expect(clinic.requestsTo('/api/v1/eventos', from)[0]?.search).toBe('?cursor=now');
		expect(await trigger.poll()).toEqual({ emitted: null, error: null });
	});

	it('later polls: each change since, one item per event, oldest first, as the feed has it; the cursor moves on', async () => {
		const trigger = poller();
		await trigger.poll();
		await clinic.importA(changes(1));
		const events = emitted(await trigger.poll());
		expect(events.map((e) => [e.tipo, e.datos.id])).toEqual([
			['clienta.creada', uid('a', 1, 101)],
			['cita.actualizada', uid('a', 2, 1)],
			['llamada.eliminada', uid('a', 3, 1)],
		]);
		expect(events[0]?.datos).toMatchObject({ nombre: 'Lucía Gómez 1', vip: false });
		expect(events[1]?.datos).toMatchObject({
			servicio: 'Masaje 1',
			updated_at: events[1]?.ocurrido_at,
		});
		expect(events[2]?.datos).toEqual({ id: uid('a', 3, 1) });
		const feed = await clinic.get<{ eventos: unknown[]; next_cursor: string }>(
			`/api/v1/eventos?cursor=${trigger.state.cursor}`,
		);
		expect(feed.eventos).toEqual([]);
		expect(await trigger.poll()).toEqual({ emitted: null, error: null });
	});

	it('Event Types: only those types are asked for and emitted; the others are passed over', async () => {
		const trigger = poller({ eventTypes: ['llamada.eliminada', 'cita.actualizada'] });
		await trigger.poll();
		const from = clinic.requests.length;
		await clinic.importA(changes(2));
		const events = emitted(await trigger.poll());
		expect(events.map((e) => e.tipo)).toEqual(['cita.actualizada', 'llamada.eliminada']);
		expect(
			clinic.requestsTo('/api/v1/eventos', from).map((u) => u.searchParams.get('tipo')),
		).toEqual(['cita.actualizada,llamada.eliminada']);
		expect(await trigger.poll()).toEqual({ emitted: null, error: null });
	});

	it('Max Events per Poll: a poll emits that many; the next poll goes on from there', async () => {
		const trigger = poller({ maxEvents: 2 });
		await trigger.poll();
		await clinic.importA(changes(3));
		expect(emitted(await trigger.poll()).map((e) => e.tipo)).toEqual([
			'clienta.creada',
			'cita.actualizada',
		]);
		expect(emitted(await trigger.poll()).map((e) => e.tipo)).toEqual(['llamada.eliminada']);
		expect(await trigger.poll()).toEqual({ emitted: null, error: null });
	});

	it('410 cursor_expired: one resync item, then it follows from the present', async () => {
		const trigger = poller();
		await trigger.poll();
		await clinic.importA(changes(4));
		const delivered = emitted(await trigger.poll());
		const lastSeen = delivered.at(-1)?.ocurrido_at;
		// More changes, then no poll for longer than the feed keeps events: the retention removes them.
		clinic.tick(DAY_MS);
		await clinic.importA([{ ...changes(4)[1], servicio: 'Pedicura' }]);
		clinic.tick(31 * DAY_MS);
		expect(await clinic.expireEvents()).toBeGreaterThan(0);
		const expired = await fetch(`${clinic.baseUrl}/api/v1/eventos?cursor=${trigger.state.cursor}`, {
			headers: { authorization: `Bearer ${clinic.key}` },
		});
		expect(expired.status).toBe(410);

		const from = clinic.requests.length;
		const resync = emitted(await trigger.poll());
		expect(resync).toHaveLength(1);
		expect(resync[0]).toMatchObject({ tipo: RESYNC_TYPE, datos: { since: lastSeen } });
		expect(String(resync[0]?.datos.message)).toContain('Read citas, clientas and llamadas again');
		expect(
			clinic.requestsTo('/api/v1/eventos', from).map((u) => u.searchParams.get('cursor')),
		).toEqual([expect.any(String), 'now']);
		const now = await clinic.get<{ next_cursor: string }>('/api/v1/eventos?cursor=now');
		expect(trigger.state.cursor).toBe(now.next_cursor);

		// What changes after the resync arrives as usual, and only that.
		expect(await trigger.poll()).toEqual({ emitted: null, error: null });
		await clinic.importA(changes(5));
		expect(emitted(await trigger.poll()).map((e) => e.datos.id)).toEqual([
			uid('a', 1, 105),
			uid('a', 2, 1),
			uid('a', 3, 5),
		]);
	});

	it("the editor's manual test: the oldest event the feed keeps of those types, and the saved position stays", async () => {
		const trigger = poller({ eventTypes: ['clienta.creada'] });
		await trigger.poll();
		await clinic.importA([changes(9)[0]!]);
		const saved = { ...trigger.state };
		const sample = await trigger.pollManually();
		const oldest = await clinic.get<{ eventos: unknown[] }>(
			'/api/v1/eventos?limit=1&tipo=clienta.creada',
		);
		expect(oldest.eventos).toHaveLength(1);
		expect(sample?.[0]?.map((i) => i.json)).toEqual(oldest.eventos);
		expect(trigger.state).toEqual(saved);
	});

	it('a key that stopped working: the poll reports the API error (n8n records a failed trigger) and keeps its position', async () => {
		const trigger = poller();
		await trigger.poll();
		const saved = { ...trigger.state };
		const node = triggerNode();
		const revoked = createPoller(harnessFor(clinic.baseUrl, 'ck_wrong'), node, {
			[`node:${node.name}`]: { ...saved },
		});
		await clinic.importA([{ ...changes(1)[1], servicio: 'Manicura' }]);
		const out = await revoked.poll();
		expect(out.emitted).toBeNull();
		expect(out.error?.message).toContain('The API key is not valid');
		expect(revoked.state).toEqual(saved);
	});
});
