// Searches, for a Zap's later steps: find a client by phone or name (the list's `q`, which
// matches a name ignoring accents and case, or a phone's digits), find an appointment by its id.
// Nothing found is an empty answer, which Zapier shows as "no results" (or stops the Zap, as the
// user chose), not an error.
import type { Bundle, ZObject } from 'zapier-platform-core';

import { CITA_FIELDS, CITA_SAMPLE, CLIENTA_FIELDS, CLIENTA_SAMPLE } from './fields';

/** The most clients one search returns: Zapier uses the first, the rest help in the editor's test. */
const CLIENTS_PER_SEARCH = 10;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const findClient = {
  key: 'find_client',
  noun: 'Client',
  display: {
    label: 'Find Client',
    description: 'Finds a client by phone number or name (accents and capitals do not matter).',
  },
  operation: {
    inputFields: [
      {
        key: 'buscar',
        label: 'Phone or name',
        required: true,
        helpText:
          'A phone number in any format (+34 600 12 34 56, 600123456) or part of a name (maria lopez). ' +
          'Searching by phone needs the key\'s "contacto:read" permission.',
      },
    ],
    perform: async (z: ZObject, bundle: Bundle<{ buscar?: string }>) => {
      const q = String(bundle.inputData.buscar ?? '').trim();
      if (!q) throw new z.errors.Error('Type a phone number or a name to look for.', 'InvalidInput', 400);
      const res = await z.request({ url: '/api/v1/clientas', params: { q, limit: String(CLIENTS_PER_SEARCH) } });
      return (res.data as { clientas: object[] }).clientas;
    },
    sample: CLIENTA_SAMPLE,
    outputFields: CLIENTA_FIELDS,
  },
};

export const findAppointment = {
  key: 'find_appointment',
  noun: 'Appointment',
  display: {
    label: 'Find Appointment',
    description: 'Finds an appointment by its ID (from a trigger or an earlier step).',
  },
  operation: {
    inputFields: [
      {
        key: 'id',
        label: 'Appointment ID',
        required: true,
        helpText: "The appointment's ID, as a trigger gives it: for example 24858e88-d2f1-40a6-9fc9-91500bc9b3cd.",
      },
    ],
    perform: async (z: ZObject, bundle: Bundle<{ id?: string }>) => {
      const id = String(bundle.inputData.id ?? '').trim();
      if (!UUID.test(id)) {
        throw new z.errors.Error(
          `"${id}" is not an appointment ID: an ID looks like 24858e88-d2f1-40a6-9fc9-91500bc9b3cd. ` +
            'Map the ID field of an appointment here.',
          'InvalidInput',
          400,
        );
      }
      const res = await z.request({ url: `/api/v1/citas/${id}`, skipThrowForStatus: true });
      if (res.status === 404) return [];
      res.throwForStatus();
      return [res.data];
    },
    sample: CITA_SAMPLE,
    outputFields: CITA_FIELDS,
  },
};
