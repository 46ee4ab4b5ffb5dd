/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code run by vitest in Node, never shipped (files: dist) */
// n8n's test of a credential, as the n8n server runs it when a credential is saved.
import { ExecuteContext, ExecutionLifecycleHooks, RoutingNode } from 'n8n-core';
import { createEmptyRunExecutionData, Workflow } from 'n8n-workflow';
import type { ICredentialDataDecryptedObject, INode, INodeType } from 'n8n-workflow';

import { additionalData, TestNodeTypes, type Harness } from './n8n';

/**
 * n8n's credential test (the CLI's CredentialsTester for a credential with `test.request`): a
 * throwaway node whose one parameter routes to the test request, run by RoutingNode with the
 * values to test. "OK" or "Error" with the message n8n shows.
 */
export async function testCredential(
	h: Harness,
	credentialType: string,
	data: ICredentialDataDecryptedObject,
): Promise<{ status: 'OK' | 'Error'; message: string }> {
	const testRequest = h.credentialTypes[credentialType]?.test;
	if (!testRequest) throw new Error(`${credentialType} has no test request`);
	const probe: INodeType = {
		description: {
			displayName: 'Temp',
			name: 'temp',
			group: ['input'],
			version: 1,
			description: '',
			defaults: {},
			inputs: ['main'],
			outputs: ['main'],
			credentials: [{ name: credentialType, required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					routing: { request: testRequest.request },
					default: '',
				},
			],
		},
	};
	const node: INode = {
		id: 'temp',
		parameters: {},
		name: 'Temp-Node',
		type: 'temp',
		typeVersion: 1,
		position: [0, 0],
		credentials: { [credentialType]: { id: 'test', name: 'test' } },
	};
	const workflow = new Workflow({
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: new TestNodeTypes({ temp: probe }),
	});
	const tested: Harness = { ...h, credentials: { ...h.credentials, [credentialType]: data } };
	const context = new ExecuteContext(
		workflow,
		node,
		additionalData(tested, new ExecutionLifecycleHooks('internal', '1', {} as never)),
		'internal',
		createEmptyRunExecutionData(),
		0,
		[],
		{ main: [[{ json: {} }]] },
		{ node, data: {}, source: null },
		[],
	);
	try {
		await new RoutingNode(context, probe, {
			id: 'test',
			name: 'test',
			type: credentialType,
			data,
		}).runNode();
	} catch (error) {
		const cause = (
			error as { cause?: { response?: { status: number; statusText?: string }; code?: string } }
		).cause;
		if (cause?.response) {
			return {
				status: 'Error',
				message: cause.response.statusText || `Received HTTP status code: ${cause.response.status}`,
			};
		}
		if (cause?.code) return { status: 'Error', message: cause.code };
		return { status: 'Error', message: String((error as Error).message) };
	}
	return { status: 'OK', message: 'Connection successful!' };
}
