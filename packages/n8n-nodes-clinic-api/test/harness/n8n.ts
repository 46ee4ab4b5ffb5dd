/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code run by vitest in Node, never shipped (files: dist) */
// Runs this package's nodes through n8n's own execution engine, in this process: n8n-core's
// WorkflowExecute for a workflow (here), its PollTriggerExecutor and PollContext for a trigger's
// poll (poller.ts), and its RoutingNode for a credential's test (credential-test.ts), as the n8n
// server wires them, minus the server, its database and its bundled nodes. What n8n's CLI would
// supply is here, smallest first: the node types (ours), a credentials helper (the credential's
// values and its `authenticate`), and the additional data the engine reads for plain HTTP nodes.
import { Credentials, ExecutionLifecycleHooks, WorkflowExecute } from 'n8n-core';
import { ICredentialsHelper, isExpression, NodeHelpers, Workflow } from 'n8n-workflow';
import type {
	ICredentialDataDecryptedObject,
	ICredentialType,
	IConnections,
	IDataObject,
	IHttpRequestOptions,
	INode,
	INodeExecutionData,
	INodeType,
	INodeTypes,
	IRun,
	IRunExecutionData,
	IWorkflowExecuteAdditionalData,
	IWorkflowSettings,
} from 'n8n-workflow';

export class TestNodeTypes implements INodeTypes {
	constructor(private readonly types: Record<string, INodeType>) {}
	getByName(type: string) {
		return this.types[type];
	}
	getByNameAndVersion(type: string, version?: number) {
		return NodeHelpers.getVersionedNodeType(this.types[type], version);
	}
	getKnownTypes() {
		return {};
	}
}

/** What n8n's CredentialsHelper does for `authenticate: { type: 'generic' }`: expressions over $credentials. */
class TestCredentialsHelper extends ICredentialsHelper {
	constructor(
		private readonly types: Record<string, ICredentialType>,
		private readonly values: Record<string, ICredentialDataDecryptedObject>,
	) {
		super();
	}
	getParentTypes() {
		return [];
	}
	isCredentialUsableByNode() {
		return true;
	}
	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions,
		workflow?: Workflow,
		node?: INode,
	): Promise<IHttpRequestOptions> {
		const auth = this.types[typeName]?.authenticate;
		if (typeof auth === 'function') return await auth(credentials, requestOptions);
		if (auth?.type !== 'generic' || !workflow || !node) return requestOptions;
		const resolve = (v: unknown) =>
			isExpression(v)
				? workflow.expression.getSimpleParameterValue(
						node,
						v as string,
						'internal',
						{ $credentials: credentials },
						undefined,
						'',
					)
				: v;
		const target = requestOptions as unknown as Record<string, IDataObject>;
		for (const [outerKey, inner] of Object.entries(auth.properties)) {
			target[outerKey] ??= {};
			for (const [key, value] of Object.entries(inner as IDataObject)) {
				target[outerKey][String(resolve(key))] = resolve(value) as IDataObject[string];
			}
		}
		return requestOptions;
	}
	async preAuthentication() {
		return undefined;
	}
	async runPreAuthentication() {
		return undefined;
	}
	async getCredentials() {
		return new Credentials({ id: null, name: '' }, '', '');
	}
	async getDecrypted(_data: unknown, _nodeCredentials: unknown, type: string) {
		return this.values[type] ?? {};
	}
	async updateCredentials() {}
	async updateCredentialsOauthTokenData() {}
	getCredentialsProperties() {
		return [];
	}
}

export interface Harness {
	nodeTypes: Record<string, INodeType>;
	credentialTypes: Record<string, ICredentialType>;
	/** The credentials' decrypted values, by credential type. */
	credentials: Record<string, ICredentialDataDecryptedObject>;
}

export function additionalData(
	h: Harness,
	hooks: ExecutionLifecycleHooks,
): IWorkflowExecuteAdditionalData {
	// What the engine reads for plain HTTP nodes; the real type is n8n's whole server context.
	return {
		hooks,
		credentialsHelper: new TestCredentialsHelper(h.credentialTypes, h.credentials),
		currentNodeParameters: undefined,
		executionId: '1',
		restApiUrl: 'http://127.0.0.1/rest',
		instanceBaseUrl: 'http://127.0.0.1/',
		webhookBaseUrl: 'http://127.0.0.1/webhook',
		webhookTestBaseUrl: 'http://127.0.0.1/webhook-test',
		webhookWaitingBaseUrl: 'http://127.0.0.1/webhook-waiting',
		formWaitingBaseUrl: 'http://127.0.0.1/form-waiting',
		variables: {},
		userId: 'test-user',
	} as unknown as IWorkflowExecuteAdditionalData;
}

/**
 * Executes `nodes` as a manual run from the first node (one empty input item), as n8n's "Execute
 * workflow"; `settings.timezone` is the workflow's time zone.
 */
export async function runWorkflow(
	h: Harness,
	nodes: INode[],
	{
		connections = {},
		settings = {},
	}: { connections?: IConnections; settings?: IWorkflowSettings } = {},
): Promise<IRun> {
	const workflow = new Workflow({
		id: 'test',
		nodes,
		connections,
		nodeTypes: new TestNodeTypes(h.nodeTypes),
		active: false,
		settings,
	});
	const hooks = new ExecutionLifecycleHooks('manual', '1', {
		id: 'test',
		name: 'test',
		nodes,
		connections,
		active: false,
		activeVersionId: null,
		isArchived: false,
		createdAt: new Date(),
		updatedAt: new Date(),
	});
	let finished!: (run: IRun) => void;
	const done = new Promise<IRun>((resolve) => (finished = resolve));
	hooks.addHandler('workflowExecuteAfter', (run) => finished(run));
	const runExecutionData = {
		startData: {},
		resultData: { runData: {} },
		executionData: {
			contextData: {},
			metadata: {},
			nodeExecutionStack: [{ node: nodes[0], data: { main: [[{ json: {} }]] }, source: null }],
			waitingExecution: {},
			waitingExecutionSource: {},
		},
	} as unknown as IRunExecutionData;
	await new WorkflowExecute(
		additionalData(h, hooks),
		'manual',
		runExecutionData,
	).processRunExecutionData(workflow);
	return await done;
}

/** The items of a node's first run (main output 0). */
export function outputOf(run: IRun, nodeName: string): INodeExecutionData[] {
	return run.data.resultData.runData[nodeName]?.[0]?.data?.main?.[0] ?? [];
}

/** The error a run stopped with: n8n's message and description. */
export function runError(run: IRun): { message: string; description: string } {
	const error = run.data.resultData.error as { message?: string; description?: string } | undefined;
	return { message: error?.message ?? '', description: error?.description ?? '' };
}
