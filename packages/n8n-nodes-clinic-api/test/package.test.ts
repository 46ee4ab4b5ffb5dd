/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test code run by vitest in Node, never shipped (files: dist) */
// What holds the package to the service and to n8n without a server: the option lists are the
// API's own enumerations, dates and base URLs become what the API takes, the tests run the one
// n8n-workflow that n8n-core runs, and `npm pack` ships what n8n loads and nothing else.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NodeApiError, Workflow } from 'n8n-workflow';

import { EVENT_TYPES as SERVICE_EVENT_TYPES } from '../../../src/collections/index.js';
import { ESTADOS, RESULTADOS } from '../../../src/domain/records.js';
import { engineRequire } from './engine/engine.mjs';
import { listQuery } from '../nodes/ClinicApi/ClinicApi.node';
import { datePart, toTimestamp } from '../nodes/ClinicApi/shared/dates';
import { apiErrorDetails, apiRoot } from '../nodes/ClinicApi/shared/transport';
import {
	APPOINTMENT_STATUSES,
	CALL_RESULTS,
	EVENT_TYPES,
} from '../nodes/ClinicApi/shared/vocabulary';
import pkg from '../package.json';

const values = (options: { value: unknown }[]) => options.map((o) => o.value).sort();

describe('the option lists', () => {
	it("are the service's enumerations: statuses, call results, event types", () => {
		expect(values(APPOINTMENT_STATUSES)).toEqual([...ESTADOS].sort());
		expect(values(CALL_RESULTS)).toEqual([...RESULTADOS].sort());
		expect(values(EVENT_TYPES)).toEqual([...SERVICE_EVENT_TYPES].sort());
	});
});

describe('toTimestamp: a date picker value as RFC 3339', () => {
	it("reads a wall-clock time in the workflow's zone, across DST changes", () => {
		expect(toTimestamp('2026-03-28T13:00:00', 'Europe/Madrid')).toBe('2026-03-28T12:00:00Z');
		expect(toTimestamp('2026-03-29T13:00:00', 'Europe/Madrid')).toBe('2026-03-29T11:00:00Z');
		expect(toTimestamp('2026-03-29T02:30:00', 'Europe/Madrid')).toBe('2026-03-29T01:30:00Z');
		expect(toTimestamp('2026-11-01 08:15', 'America/Mexico_City')).toBe('2026-11-01T14:15:00Z');
		expect(toTimestamp('2026-03-28', 'Asia/Kolkata')).toBe('2026-03-27T18:30:00Z');
		expect(toTimestamp('2026-03-28T13:00:00.250', 'UTC')).toBe('2026-03-28T13:00:00Z');
	});

	it('keeps a value with an offset or Z as given; refuses what is not a time', () => {
		expect(toTimestamp('2026-03-28T07:00:00-05:00', 'Europe/Madrid')).toBe(
			'2026-03-28T07:00:00-05:00',
		);
		expect(toTimestamp(' 2026-03-28T12:00:00Z ', 'Europe/Madrid')).toBe('2026-03-28T12:00:00Z');
		expect(toTimestamp({ toISO: () => '2026-03-28T13:00:00.000+01:00' }, 'UTC')).toBe(
			'2026-03-28T13:00:00.000+01:00',
		);
		for (const bad of [
			'yesterday',
			'2026-02-30T10:00:00',
			'2026-13-01',
			'28/03/2026',
			'',
			'2026-03-28T25:00:00Z',
		]) {
			expect(toTimestamp(bad, 'Europe/Madrid'), bad).toBeNull();
		}
	});

	it('datePart: the date as written', () => {
		expect(datePart('2026-03-01T23:30:00')).toBe('2026-03-01');
		expect(datePart('2026-03-01')).toBe('2026-03-01');
		expect(datePart('March 1st')).toBeNull();
	});
});

describe('listQuery: Filters to the query string', () => {
	it('leaves empty filters out and converts dates and times', () => {
		expect(
			listQuery(
				{
					desde: '2026-03-01T00:00:00',
					hasta: '',
					estado: 'cancelada',
					updated_since: '2026-03-28T13:00:00',
				},
				'Europe/Madrid',
			),
		).toEqual({
			qs: { desde: '2026-03-01', estado: 'cancelada', updated_since: '2026-03-28T12:00:00Z' },
		});
	});
});

describe('transport', () => {
	it('apiRoot: the Base URL without trailing slashes or /api/v1', () => {
		for (const url of [
			'https://api.clinic.example',
			'https://api.clinic.example/',
			' https://api.clinic.example/api/v1/ ',
			'https://api.clinic.example//api/v1',
		]) {
			expect(apiRoot(url), url).toBe('https://api.clinic.example');
		}
		expect(apiRoot('https://example.org/clinic/')).toBe('https://example.org/clinic');
	});

	it("apiErrorDetails: the API's message, then status, code, parameter, request id and the way out", () => {
		expect(
			apiErrorDetails(400, {
				error: {
					code: 'invalid_parameter',
					message: 'limit must be an integer from 1 to 500',
					param: 'limit',
					request_id: 'r1',
				},
			}),
		).toEqual({
			message: 'limit must be an integer from 1 to 500',
			description:
				'HTTP 400, code invalid_parameter, parameter limit, request_id r1. Change the parameter the message names.',
		});
		expect(apiErrorDetails(502, {})).toEqual({
			message: 'The Clinic API answered 502',
			description: 'HTTP 502, code http_502.',
		});
	});
});

it('the nodes and the tests use the n8n-workflow n8n-core uses (one copy, as inside n8n)', () => {
	const fromCore = createRequire(engineRequire.resolve('n8n-core'))(
		'n8n-workflow',
	) as typeof import('n8n-workflow');
	expect(fromCore.NodeApiError).toBe(NodeApiError);
	expect(fromCore.Workflow).toBe(Workflow);
});

it('the engine the tests run (test/engine) pins the n8n-workflow the nodes are built and linted against', () => {
	const engine = engineRequire('./package.json') as { dependencies: Record<string, string> };
	expect(engine.dependencies['n8n-workflow']).toBe(pkg.devDependencies['n8n-workflow']);
	expect(Object.keys(engine.dependencies).sort()).toEqual(['n8n-core', 'n8n-workflow']);
});

it('npm pack ships the built nodes, credential, icons and codex files, the README and the license, and nothing else', () => {
	const [packed] = JSON.parse(
		execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
			cwd: fileURLToPath(new URL('..', import.meta.url)),
			encoding: 'utf8',
		}),
	) as [{ name: string; files: { path: string }[] }];
	const files = packed.files.map((f) => f.path).sort();
	for (const entry of [...pkg.n8n.nodes, ...pkg.n8n.credentials])
		expect(files, `${entry} (run npm run build)`).toContain(entry);
	expect(files).toEqual(
		expect.arrayContaining([
			'LICENSE.md',
			'README.md',
			'package.json',
			'dist/icons/clinicApi.svg',
			'dist/icons/clinicApi.dark.svg',
			'dist/nodes/ClinicApi/ClinicApi.node.json',
			'dist/nodes/ClinicApiTrigger/ClinicApiTrigger.node.json',
		]),
	);
	// The build's JavaScript, types, source maps, codex files and icons; no sources, tests or build state.
	const unexpected = files.filter(
		(f) =>
			!/^dist\/.+\.(js|js\.map|d\.ts|json|svg)$/.test(f) &&
			!['LICENSE.md', 'README.md', 'package.json'].includes(f),
	);
	expect(unexpected).toEqual([]);
	expect(files.filter((f) => /test|tsbuildinfo/.test(f))).toEqual([]);
	expect(pkg.peerDependencies).toEqual({ 'n8n-workflow': '*' });
	expect(pkg).not.toHaveProperty('dependencies');
});
