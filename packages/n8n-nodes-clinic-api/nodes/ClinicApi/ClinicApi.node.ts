import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';

import { listFilters, RESOURCES, type Resource } from './descriptions';
import { datePart, toTimestamp } from './shared/dates';
import { clinicApiGetMany, clinicApiRequest } from './shared/transport';

const DATE_FILTERS = new Set(['desde', 'hasta']);

/**
 * The query of a Get Many from its Filters: empty ones left out, desde/hasta as dates,
 * updated_since as an RFC 3339 timestamp (a wall-clock time is read in `timeZone`). A value that
 * is not a date or a time is an error naming the filter, before any request is sent.
 */
export function listQuery(
	filters: IDataObject,
	timeZone: string,
): { qs: IDataObject } | { error: string } {
	const qs: IDataObject = {};
	for (const [key, value] of Object.entries(filters)) {
		if (value === '' || value === undefined || value === null) continue;
		if (DATE_FILTERS.has(key)) {
			const date = datePart(value);
			if (!date)
				return {
					error: `${key === 'desde' ? 'From Date' : 'To Date'} must be a date (YYYY-MM-DD), got "${String(value)}"`,
				};
			qs[key] = date;
		} else if (key === 'updated_since') {
			const at = toTimestamp(value, timeZone);
			if (!at)
				return {
					error: `Updated Since must be a date and time (e.g. 2026-03-28T09:00:00), got "${String(value)}"`,
				};
			qs[key] = at;
		} else {
			qs[key] = value;
		}
	}
	return { qs };
}

export class ClinicApi implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Clinic API',
		name: 'clinicApi',
		icon: { light: 'file:../../icons/clinicApi.svg', dark: 'file:../../icons/clinicApi.dark.svg' },
		group: ['input'],
		version: 1,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description: "Read a clinic's appointments, clients and calls",
		defaults: { name: 'Clinic API' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'clinicApiApi', required: true }],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: RESOURCES.map((r) => ({
					name: r.name,
					value: r.value,
					description: r.description,
				})),
				default: 'citas',
			},
			...RESOURCES.map((r) => ({
				displayName: 'Operation',
				name: 'operation',
				type: 'options' as const,
				noDataExpression: true,
				displayOptions: { show: { resource: [r.value] } },
				options: [
					{
						name: 'Get',
						value: 'get',
						description: `Get one ${r.singular} by ID`,
						action: `Get a ${r.singular}`,
					},
					{
						name: 'Get Many',
						value: 'getAll',
						description: `Get many ${r.plural}`,
						action: `Get many ${r.plural}`,
					},
				],
				default: 'getAll',
			})),
			{
				displayName: 'ID',
				name: 'id',
				type: 'string',
				required: true,
				default: '',
				placeholder: '24858e88-d2f1-40a6-9fc9-91500bc9b3cd',
				displayOptions: { show: { operation: ['get'] } },
				description: 'The ID of the record (a UUID)',
			},
			{
				displayName: 'Return All',
				name: 'returnAll',
				type: 'boolean',
				default: false,
				displayOptions: { show: { operation: ['getAll'] } },
				description: 'Whether to return all results or only up to a given limit',
			},
			{
				displayName: 'Limit',
				name: 'limit',
				type: 'number',
				typeOptions: { minValue: 1 },
				default: 50,
				displayOptions: { show: { operation: ['getAll'], returnAll: [false] } },
				description: 'Max number of results to return',
			},
			...listFilters,
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const returnData: INodeExecutionData[] = [];

		for (let i = 0; i < items.length; i++) {
			try {
				const resource = this.getNodeParameter('resource', i) as Resource;
				const operation = this.getNodeParameter('operation', i) as string;

				if (operation === 'get') {
					const id = String(this.getNodeParameter('id', i)).trim();
					if (!id) {
						throw new NodeOperationError(
							this.getNode(),
							'ID is empty: give the ID of the record to get',
							{ itemIndex: i },
						);
					}
					const { body } = await clinicApiRequest(this, `/${resource}/${encodeURIComponent(id)}`);
					returnData.push({ json: body, pairedItem: { item: i } });
				} else if (operation === 'getAll') {
					const returnAll = this.getNodeParameter('returnAll', i) as boolean;
					const max = returnAll ? Infinity : (this.getNodeParameter('limit', i) as number);
					if (!(max >= 1)) {
						throw new NodeOperationError(this.getNode(), `Limit must be 1 or more, got ${max}`, {
							itemIndex: i,
						});
					}
					const query = listQuery(
						this.getNodeParameter('filters', i, {}) as IDataObject,
						this.getTimezone(),
					);
					if ('error' in query)
						throw new NodeOperationError(this.getNode(), query.error, { itemIndex: i });
					const records = await clinicApiGetMany(this, resource, query.qs, max);
					for (const record of records) returnData.push({ json: record, pairedItem: { item: i } });
				} else {
					throw new NodeOperationError(this.getNode(), `Unknown operation "${operation}"`, {
						itemIndex: i,
					});
				}
			} catch (error) {
				if (this.continueOnFail()) {
					returnData.push({ json: { error: (error as Error).message }, pairedItem: { item: i } });
					continue;
				}
				// Either constructor hands an error of its own class back unchanged.
				if (error instanceof NodeApiError)
					throw new NodeApiError(this.getNode(), error as unknown as JsonObject);
				throw new NodeOperationError(this.getNode(), error as Error, { itemIndex: i });
			}
		}

		return [returnData];
	}
}
