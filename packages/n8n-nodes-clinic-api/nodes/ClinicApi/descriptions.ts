import type { INodeProperties } from 'n8n-workflow';

import { APPOINTMENT_STATUSES, CALL_RESULTS } from './shared/vocabulary';

export type Resource = 'citas' | 'clientas' | 'llamadas';

/** The three collections: the API's path segment as the value, English names in the UI. */
export const RESOURCES: {
	name: string;
	value: Resource;
	description: string;
	singular: string;
	plural: string;
}[] = [
	{
		name: 'Appointment',
		value: 'citas',
		description: 'Appointments (citas)',
		singular: 'appointment',
		plural: 'appointments',
	},
	{
		name: 'Call',
		value: 'llamadas',
		description: "Calls the clinic's voice assistant answered (llamadas)",
		singular: 'call',
		plural: 'calls',
	},
	{
		name: 'Client',
		value: 'clientas',
		description: 'Clients (clientas)',
		singular: 'client',
		plural: 'clients',
	},
];

const date = (name: 'desde' | 'hasta', description: string): INodeProperties => ({
	displayName: name === 'desde' ? 'From Date' : 'To Date',
	name,
	type: 'dateTime',
	default: '',
	description,
});

const updatedSince: INodeProperties = {
	displayName: 'Updated Since',
	name: 'updated_since',
	type: 'dateTime',
	default: '',
	description:
		"Only records changed at or after this moment (in the workflow's time zone unless it has an offset), oldest change first; the default date range then does not apply",
};

const filters = (resource: Resource, options: INodeProperties[]): INodeProperties => ({
	displayName: 'Filters',
	name: 'filters',
	type: 'collection',
	placeholder: 'Add Filter',
	default: {},
	displayOptions: { show: { resource: [resource], operation: ['getAll'] } },
	options,
});

/** The Filters of each Get Many: the list endpoint's query parameters, by their API names. */
export const listFilters: INodeProperties[] = [
	filters('citas', [
		date('desde', "First day, inclusive (the clinic's local date). Default: today."),
		{
			displayName: 'Status',
			name: 'estado',
			type: 'options',
			options: APPOINTMENT_STATUSES,
			default: 'confirmada',
			description: 'Only appointments in this status',
		},
		date('hasta', 'Last day, inclusive. Default: 30 days from today.'),
		updatedSince,
	]),
	filters('clientas', [
		{
			displayName: 'Search',
			name: 'q',
			type: 'string',
			default: '',
			placeholder: 'maria',
			description: 'Part of the name (any case or accents) or digits of the phone number',
		},
		updatedSince,
		{
			displayName: 'VIP',
			name: 'vip',
			type: 'options',
			options: [
				{ name: 'Non-VIP Only', value: 'false' },
				{ name: 'VIP Only', value: 'true' },
			],
			default: 'true',
			description: 'Whether to return only VIP clients or only the others',
		},
	]),
	filters('llamadas', [
		date('desde', 'First day, inclusive. Default: 7 days ago.'),
		{
			displayName: 'Result',
			name: 'resultado',
			type: 'options',
			options: CALL_RESULTS,
			default: 'agendada',
			description: 'Only calls with this outcome',
		},
		date('hasta', 'Last day, inclusive. Default: no end.'),
		updatedSince,
	]),
];
