/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code run by vitest in Node, never shipped (files: dist) */
// A poll trigger of an active workflow, polled the way n8n's scheduler polls it.
import { createRequire } from 'node:module';
import { ExecutionLifecycleHooks, PollContext, PollTriggerExecutor } from 'n8n-core';
import { Workflow } from 'n8n-workflow';
import type { IDataObject, INode, INodeExecutionData } from 'n8n-workflow';

import { engineRequire } from '../engine/engine.mjs';
import { additionalData, TestNodeTypes, type Harness } from './n8n';

// n8n-core's own dependency-injection container (its copy of @n8n/di, not whichever one is
// hoisted), which builds the PollTriggerExecutor with n8n-core's logger, tracing and error reporter.
// Typed here by the one call made: @n8n/di is n8n-core's dependency, not this package's.
const coreRequire = createRequire(engineRequire.resolve('n8n-core'));
const { Container } = coreRequire('@n8n/di') as {
	Container: { get<T>(type: abstract new (...args: never[]) => T): T };
};

export interface Poller {
	/** One poll of an active workflow: what it emitted (null: nothing), or the error n8n would record. */
	poll(): Promise<{ emitted: INodeExecutionData[][] | null; error: Error | null }>;
	/** "Fetch Test Event" in the editor: a poll in manual mode; what it emitted (errors are thrown). */
	pollManually(): Promise<INodeExecutionData[][] | null>;
	/** The node's static data, as n8n keeps it between polls of the active workflow. */
	readonly state: IDataObject;
}

/**
 * A poll trigger bound to one active workflow, so its static data lives on across polls as in
 * n8n. Each poll goes through n8n-core's PollTriggerExecutor (what n8n's scheduler calls): the
 * poll function's items are handed to __emit, a thrown error to __emitError.
 */
export function createPoller(h: Harness, node: INode, staticData: IDataObject = {}): Poller {
	const workflow = new Workflow({
		id: 'test-poll',
		nodes: [node],
		connections: {},
		nodeTypes: new TestNodeTypes(h.nodeTypes),
		active: true,
		staticData,
	});
	const data = additionalData(h, new ExecutionLifecycleHooks('trigger', '1', {} as never));
	const executor = Container.get(PollTriggerExecutor);
	return {
		async poll() {
			let emitted: INodeExecutionData[][] | null = null;
			let error: Error | null = null;
			const context = new PollContext(
				workflow,
				node,
				data,
				'trigger',
				'activate',
				(items) => (emitted = items),
				(e) => (error = e),
			);
			await executor.create(workflow, node, context, () => true)(false);
			return { emitted, error };
		},
		async pollManually() {
			let emitted: INodeExecutionData[][] | null = null;
			const context = new PollContext(
				workflow,
				node,
				data,
				'manual',
				'manual',
				(items) => (emitted = items),
			);
			await executor.create(workflow, node, context, () => true)(true);
			return emitted;
		},
		get state() {
			return workflow.getStaticData('node', node);
		},
	};
}
