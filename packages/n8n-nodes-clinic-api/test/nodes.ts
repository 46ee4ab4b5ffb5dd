// The package's node and credential types and the n8n nodes (workflow steps) the tests run.
import type { INode, INodeParameters } from 'n8n-workflow';

import { ClinicApiApi } from '../credentials/ClinicApiApi.credentials';
import { ClinicApi } from '../nodes/ClinicApi/ClinicApi.node';
import { ClinicApiTrigger } from '../nodes/ClinicApiTrigger/ClinicApiTrigger.node';
import type { Harness } from './harness/n8n';

/** The types as n8n registers them from package.json's "n8n" entry: `<package>.<node name>`. */
export function harnessFor(baseUrl: string, apiKey: string): Harness {
	return {
		nodeTypes: {
			'n8n-nodes-clinic-api.clinicApi': new ClinicApi(),
			'n8n-nodes-clinic-api.clinicApiTrigger': new ClinicApiTrigger(),
		},
		credentialTypes: { clinicApiApi: new ClinicApiApi() },
		credentials: { clinicApiApi: { baseUrl, apiKey } },
	};
}

const credentials = { clinicApiApi: { id: '1', name: 'Clinic account' } };

/** A Clinic API node (the action node) with these parameters. */
export function clinicNode(parameters: INodeParameters, name = 'Clinic'): INode {
	return {
		id: name,
		name,
		type: 'n8n-nodes-clinic-api.clinicApi',
		typeVersion: 1,
		position: [0, 0],
		parameters,
		credentials,
	};
}

/** A Clinic API Trigger node with these parameters. */
export function triggerNode(parameters: INodeParameters = {}): INode {
	return {
		id: 'trigger',
		name: 'Clinic Trigger',
		type: 'n8n-nodes-clinic-api.clinicApiTrigger',
		typeVersion: 1,
		position: [0, 0],
		parameters,
		credentials,
	};
}
