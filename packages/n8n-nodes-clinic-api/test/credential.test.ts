/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code run by vitest in Node, never shipped (files: dist) */
// The credential's test (what n8n runs when the credential is saved), as n8n's CredentialsTester
// runs it, against a real clinic-api on each database: GET /api/v1/me with the key.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { dialects, startClinic, type Clinic } from './harness/clinic';
import { testCredential } from './harness/credential-test';
import { harnessFor } from './nodes';

describe.each(dialects())('Clinic API credential test on %s', (dialect) => {
	let clinic: Clinic;
	beforeAll(async () => {
		clinic = await startClinic(dialect);
	});
	afterAll(async () => {
		await clinic.close();
	});
	beforeEach(() => clinic.tick());

	const test = (baseUrl: string, apiKey: string) =>
		testCredential(harnessFor(baseUrl, apiKey), 'clinicApiApi', { baseUrl, apiKey });

	it('a valid key: "Connection successful", after one GET /api/v1/me with the key as a bearer token', async () => {
		const from = clinic.requests.length;
		expect(await test(clinic.baseUrl, clinic.key)).toEqual({
			status: 'OK',
			message: 'Connection successful!',
		});
		expect(clinic.requests.slice(from).map((u) => u.pathname)).toEqual(['/api/v1/me']);
	});

	it('a Base URL with a trailing slash, spaces or /api/v1 pasted in still reaches /api/v1/me', async () => {
		for (const baseUrl of [
			`${clinic.baseUrl}/`,
			` ${clinic.baseUrl}/api/v1/ `,
			`${clinic.baseUrl}//api/v1`,
		]) {
			const from = clinic.requests.length;
			expect(await test(baseUrl, clinic.key), baseUrl).toMatchObject({ status: 'OK' });
			expect(clinic.requests.slice(from).map((u) => u.pathname)).toEqual(['/api/v1/me']);
		}
	});

	it('a wrong or mangled key is refused with the 401 the API answered', async () => {
		expect(await test(clinic.baseUrl, 'ck_wrong')).toEqual({
			status: 'Error',
			message: 'Unauthorized',
		});
		const mangled = `${clinic.key.slice(0, -1)}${clinic.key.endsWith('A') ? 'B' : 'A'}`;
		expect(await test(clinic.baseUrl, mangled)).toEqual({
			status: 'Error',
			message: 'Unauthorized',
		});
		// The other clinic's key is valid: it connects, to that clinic.
		expect(await test(clinic.baseUrl, clinic.t.keyB)).toMatchObject({ status: 'OK' });
	});

	it('a Base URL where nothing listens: the connection error', async () => {
		const server = createServer();
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const port = (server.address() as AddressInfo).port;
		await new Promise((resolve) => server.close(resolve));
		expect(await test(`http://127.0.0.1:${port}`, clinic.key)).toEqual({
			status: 'Error',
			message: 'ECONNREFUSED',
		});
	});
});
