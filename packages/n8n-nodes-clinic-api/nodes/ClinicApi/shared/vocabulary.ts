import type { INodePropertyOptions } from 'n8n-workflow';

// The API's enumerations with English labels for n8n's UI (the values are the API's own; a test
// holds these lists to the service's). Sorted by label, as n8n's lint rules ask.

/** `estado` of a cita. */
export const APPOINTMENT_STATUSES: INodePropertyOptions[] = [
	{ name: 'Cancelled', value: 'cancelada' },
	{ name: 'Completed', value: 'completada' },
	{ name: 'Confirmed', value: 'confirmada' },
	{ name: 'No-Show', value: 'no_asistio' },
	{ name: 'Pending', value: 'pendiente' },
];

/** `resultado` of a llamada. */
export const CALL_RESULTS: INodePropertyOptions[] = [
	{ name: 'Appointment Booked', value: 'agendada' },
	{ name: 'Appointment Cancelled', value: 'cancelada' },
	{ name: 'Information Given', value: 'info' },
	{ name: 'No Action', value: 'sin_accion' },
	{ name: 'Transferred', value: 'transferida' },
];

/** The change feed's event types (`tipo`). */
export const EVENT_TYPES: INodePropertyOptions[] = [
	{ name: 'Appointment Created (cita.creada)', value: 'cita.creada' },
	{ name: 'Appointment Deleted (cita.eliminada)', value: 'cita.eliminada' },
	{ name: 'Appointment Updated (cita.actualizada)', value: 'cita.actualizada' },
	{ name: 'Call Created (llamada.creada)', value: 'llamada.creada' },
	{ name: 'Call Deleted (llamada.eliminada)', value: 'llamada.eliminada' },
	{ name: 'Call Updated (llamada.actualizada)', value: 'llamada.actualizada' },
	{ name: 'Client Created (clienta.creada)', value: 'clienta.creada' },
	{ name: 'Client Deleted (clienta.eliminada)', value: 'clienta.eliminada' },
	{ name: 'Client Updated (clienta.actualizada)', value: 'clienta.actualizada' },
];
