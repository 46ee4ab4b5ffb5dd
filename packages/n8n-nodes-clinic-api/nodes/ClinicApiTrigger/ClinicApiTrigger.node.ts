import type {
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';

import { EVENT_TYPES } from '../ClinicApi/shared/vocabulary';
import {
	type FeedEvent,
	type FeedState,
	followFromNow,
	readFeed,
	RESYNC_TYPE,
	sampleEvents,
} from './feed';

/**
 * Polls the clinic's change feed (GET /api/v1/eventos). The feed's cursor lives in the workflow's
 * static data, which n8n keeps between polls and saves with each execution: the first poll
 * takes the present (cursor=now) and emits nothing, each later poll emits the events since the
 * last one, one item per event, oldest first. A cursor the feed no longer has (410
 * cursor_expired, after about 30 days without a poll) restarts from the present and emits one
 * item of type "cursor_expired", so the workflow can re-read the collections.
 */
export class ClinicApiTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Clinic API Trigger',
		name: 'clinicApiTrigger',
		icon: { light: 'file:../../icons/clinicApi.svg', dark: 'file:../../icons/clinicApi.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle:
			'={{$parameter["eventTypes"].length ? $parameter["eventTypes"].join(", ") : "All events"}}',
		description:
			'Starts the workflow when appointments, clients or calls are created, updated or deleted',
		defaults: { name: 'Clinic API Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'clinicApiApi', required: true }],
		properties: [
			{
				displayName: 'Event Types',
				name: 'eventTypes',
				type: 'multiOptions',
				options: EVENT_TYPES,
				default: [],
				description: 'The changes to start the workflow for. None selected: every change.',
			},
			{
				displayName: 'Max Events per Poll',
				name: 'maxEvents',
				type: 'number',
				typeOptions: { minValue: 1 },
				default: 1000,
				description: 'Events one poll emits at most; the rest come with the next poll',
			},
		],
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const types = this.getNodeParameter('eventTypes', []) as string[];
		const tipo = types.length ? [...types].sort().join(',') : undefined;
		const max = this.getNodeParameter('maxEvents', 1000) as number;
		if (!(max >= 1))
			throw new NodeOperationError(
				this.getNode(),
				`Max Events per Poll must be 1 or more, got ${max}`,
			);

		// "Fetch Test Event" in the editor: a sample, and the saved position stays as it was.
		if (this.getMode() === 'manual') {
			const sample = await sampleEvents(this, tipo);
			return sample.length ? [this.helpers.returnJsonArray(sample)] : null;
		}

		const state = this.getWorkflowStaticData('node') as FeedState;
		if (!state.cursor) {
			await followFromNow(this, state, tipo);
			return null;
		}

		const read = await readFeed(this, state, tipo, max);
		const items: FeedEvent[] = [...read.events];
		if (read.kind === 'expired') {
			items.push({
				id: `${RESYNC_TYPE}:${state.since}`,
				tipo: RESYNC_TYPE,
				ocurrido_at: String(state.since),
				datos: {
					since: read.since,
					message:
						'The feed no longer has the changes since this moment (it keeps at least 30 days). Read citas, clientas and llamadas again (Get Many, Return All); the events after this item follow on from now.',
				},
			});
		}
		return items.length ? [this.helpers.returnJsonArray(items)] : null;
	}
}
