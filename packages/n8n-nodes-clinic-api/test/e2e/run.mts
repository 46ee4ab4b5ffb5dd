// The package inside a real n8n (npm run test:n8n; needs Node 24, as n8n 2.41 does):
//  1. n8n 2.41.1 from the committed lockfile (test/e2e/n8n/) into a cache folder outside the
//     repository, once: `npm ci --ignore-scripts` (one dependency's install script would build a
//     C library from sources outside the registry) and `npm rebuild sqlite3` (n8n's database);
//  2. a real clinic-api (`clinic-api serve` on a fresh SQLite database with its demo clinic);
//  3. this package built with n8n's node CLI, packed with npm pack, and installed into a fresh n8n
//     user folder the way n8n installs a community package (unpacked into ~/.n8n/nodes/node_modules
//     without its dev and peer dependencies, then `npm install` there);
//  4. `n8n import:credentials`, `n8n import:workflow`, `n8n execute --id` of the lists workflow
//     of workflows.json, its run data checked against what the API answers directly;
//  5. the trigger workflow published and `n8n start`ed: its activation's poll takes cursor=now, a
//     client added with `clinic-api import` comes with a later poll (n8n polls once a minute at
//     most often), and the workflow reads her by the event's id, which the API's log shows.
// N8N_E2E_CACHE overrides the cache folder (default ~/.cache/clinic-api/n8n-<version>).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import { startServerProcess, type ServerProcess } from '../../../../test/helpers/server-process.js';
import { installN8n, installPackage, N8N_VERSION, ROOT, run, say, timed } from './install.mjs';
import { items, n8n, n8nEnv, parseRun } from './n8n-cli.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

/** Asks `found()` every half second until it gives something or `ms` passed (then null). */
async function waitFor<T>(ms: number, found: () => T | undefined): Promise<T | null> {
	for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(500)) {
		const value = found();
		if (value !== undefined) return value;
	}
	return found() ?? null;
}

/** The requests clinic-api answered, from its access log, oldest first. */
const answered = (server: ServerProcess) =>
	server
		.logs()
		.filter((l) => l.msg === 'request')
		.map((l) => ({
			url: String((l.req as { url?: string } | undefined)?.url),
			status: Number(l.status),
		}));

async function main(): Promise<number> {
	const [major] = process.versions.node.split('.').map(Number);
	if (major < 24) {
		process.stderr.write(
			`n8n ${N8N_VERSION} needs Node.js 24 or later; this is ${process.versions.node}\n`,
		);
		return 2;
	}
	const bin = await installN8n();
	const work = mkdtempSync(join(tmpdir(), 'clinic-n8n-e2e-'));
	const home = join(work, 'home');
	const dataDir = join(work, 'clinic-data');
	let server: ServerProcess | undefined;
	let n8nServer: ChildProcess | undefined;
	const checks: [string, boolean, string?][] = [];
	const check = (name: string, ok: boolean, detail?: string) => checks.push([name, ok, detail]);
	try {
		server = await timed('clinic-api serve (SQLite, demo clinic)', () =>
			startServerProcess({ env: { DATA_DIR: dataDir } }),
		);
		const api = async <T,>(path: string): Promise<T> => {
			const res = await fetch(`${server!.baseUrl}${path}`, {
				headers: { authorization: `Bearer ${server!.key}` },
			});
			if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
			return (await res.json()) as T;
		};
		await installPackage(home, work);

		const credentials = [
			{
				id: 'clinicCred0000001',
				name: 'Clinic e2e',
				type: 'clinicApiApi',
				data: { baseUrl: `${server.baseUrl}/`, apiKey: server.key },
			},
		];
		writeFileSync(join(work, 'credentials.json'), JSON.stringify(credentials));
		const day = (offset: number) =>
			new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
		const window = { desde: day(-400), hasta: day(400) };
		const workflows = readFileSync(join(HERE, 'workflows.json'), 'utf8')
			.replaceAll('"__DESDE__"', JSON.stringify(window.desde))
			.replaceAll('"__HASTA__"', JSON.stringify(window.hasta));
		writeFileSync(join(work, 'workflows.json'), workflows);
		await timed('n8n import:credentials', () =>
			n8n(bin, home, ['import:credentials', `--input=${join(work, 'credentials.json')}`]),
		);
		await timed('n8n import:workflow', () =>
			n8n(bin, home, ['import:workflow', `--input=${join(work, 'workflows.json')}`]),
		);

		const lists = parseRun(
			await timed('n8n execute --id clinicWfLists00001', () =>
				n8n(bin, home, ['execute', '--id=clinicWfLists00001', '--rawOutput'], 'info'),
			),
		);
		check(
			'workflow "lists and records" succeeded',
			lists.status === 'success',
			lists.data.resultData.error?.message,
		);
		const citas: { id: string }[] = [];
		for (let offset = 0; ; offset += 500) {
			const page = await api<{ citas: { id: string }[]; total: number }>(
				`/api/v1/citas?desde=${window.desde}&hasta=${window.hasta}&limit=500&offset=${offset}`,
			);
			citas.push(...page.citas);
			if (citas.length >= page.total || page.citas.length === 0) break;
		}
		const got = items(lists, 'All appointments').map((c) => c.id);
		check(
			`Get Many, Return All: the ${citas.length} appointments of the window, in order`,
			got.length === citas.length && got.every((id, i) => id === citas[i]?.id),
			`${got.length} items`,
		);
		check('... more than one page of 500', citas.length > 500, `${citas.length}`);
		const clientas = (
			await api<{ clientas: Record<string, unknown>[] }>('/api/v1/clientas?vip=true&limit=5')
		).clientas;
		const listed = items(lists, 'Five VIP clients');
		check(
			"Get Many with a Limit and a filter: the API's first 5 VIP clients",
			JSON.stringify(listed) === JSON.stringify(clientas),
		);
		check(
			'Get by ID ({{ $json.id }} of each): the same 5 records',
			JSON.stringify(items(lists, 'Each client by ID')) === JSON.stringify(clientas),
		);
		const missing = items(lists, 'A missing call')[0];
		check(
			'a 404 with "On Error: Continue": the API\'s message as the item',
			/^No llamada with id .* in this API key's clinic$/.test(String(missing?.error)),
			JSON.stringify(missing),
		);

		// The trigger, active in a running n8n.
		await timed('n8n publish:workflow --id clinicWfTrigger0001', () =>
			n8n(bin, home, ['publish:workflow', '--id=clinicWfTrigger0001']),
		);
		let n8nOutput = '';
		const started = Date.now();
		n8nServer = spawn(process.execPath, [bin, 'start'], {
			env: await n8nEnv(home, 'warn'),
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		n8nServer.stdout?.on('data', (b) => (n8nOutput += b));
		n8nServer.stderr?.on('data', (b) => (n8nOutput += b));
		// The access log masks query values: the activation's poll is the one request for the
		// present (cursor=now and the types, no limit); every later poll sends a limit.
		const firstPoll = await waitFor(300_000, () =>
			answered(server!).find((r) => {
				const url = new URL(r.url, server!.baseUrl);
				return (
					url.pathname === '/api/v1/eventos' &&
					[...url.searchParams.keys()].join() === 'cursor,tipo'
				);
			}),
		);
		say(
			`n8n start: the trigger's first poll ${((Date.now() - started) / 1000).toFixed(1)} s after the start`,
		);
		check(
			'n8n start: activating the workflow polls once, for the present (cursor=now, with the types)',
			firstPoll?.status === 200,
			JSON.stringify(answered(server).filter((r) => r.url.startsWith('/api/v1/eventos'))) +
				n8nOutput.slice(-3000),
		);

		const me = await api<{ clinica: { id: string } }>('/api/v1/me');
		const newId = '0e2e0000-0000-4000-8000-000000000001';
		const client = {
			type: 'clienta',
			id: newId,
			nombre: 'Nueva Clienta E2E',
			telefono: '+34600999888',
			email: null,
			idioma: 'es',
			vip: false,
			cliente_desde: day(0),
			created_at: `${new Date().toISOString().slice(0, 19)}Z`,
		};
		writeFileSync(join(work, 'new-client.jsonl'), `${JSON.stringify(client)}\n`);
		await timed('clinic-api import (one new client)', () =>
			run(
				process.execPath,
				[
					'--import',
					'tsx',
					'test/cli/run-cli.ts',
					'import',
					'--clinic',
					me.clinica.id,
					join(work, 'new-client.jsonl'),
				],
				{ cwd: ROOT, env: { PATH: process.env.PATH, TZ: 'UTC', DATA_DIR: dataDir } },
			),
		);
		const imported = Date.now();
		const read = await waitFor(150_000, () =>
			answered(server!).find((r) => r.url === `/api/v1/clientas/${newId}`),
		);
		say(
			`n8n: the workflow read the new client ${((Date.now() - imported) / 1000).toFixed(1)} s after the import`,
		);
		check(
			'a later poll emitted the clienta.creada event, and the workflow read her by its datos.id',
			read?.status === 200,
			read ? JSON.stringify(read) : n8nOutput.slice(-3000),
		);
	} finally {
		if (n8nServer && n8nServer.exitCode === null) {
			const exited = new Promise((done) => n8nServer!.once('exit', done));
			n8nServer.kill('SIGTERM');
			await Promise.race([exited, sleep(20_000).then(() => n8nServer!.kill('SIGKILL'))]);
		}
		await server?.kill();
		if (!process.env.KEEP_E2E) rmSync(work, { recursive: true, force: true });
	}
	for (const [name, ok, detail] of checks)
		say(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok || !detail ? '' : `: ${detail}`}`);
	const failed = checks.filter(([, ok]) => !ok).length;
	say(`${checks.length - failed} passed, ${failed} failed`);
	return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
