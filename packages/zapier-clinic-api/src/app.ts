// The Zapier integration's definition (what `zapier validate` checks and `zapier push` uploads):
// a clinic connects by key or OAuth, Zaps start instantly on its appointments, calls and clients,
// and later steps look clients and appointments up.
import { version as platformVersion } from 'zapier-platform-core';

import { authentication } from './authentication';
import { addServerAndCredential, explainErrors } from './client';
import { findAppointment, findClient } from './searches';
import { appointmentChanged, clientChanged, newAppointment, newCall, newClient } from './triggers';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the version Zapier shows is the package's
const { version } = require('../package.json') as { version: string };

/** The definition, with the authentication that CLINIC_API_AUTH selects now. */
export function createApp() {
  return {
    version,
    platformVersion,
    authentication: authentication(),
    beforeRequest: [addServerAndCredential],
    afterResponse: [explainErrors],
    // Every request goes through z.request, which Zapier logs itself. Zapier's patch of node:http
    // (to log other libraries' requests) would add nothing, and it drops the options of
    // http.request(url, options, callback) in the process it runs in: the tests' server would then
    // send its webhooks as bare GETs.
    flags: { skipHttpPatch: true },
    // Each under its own key (definition.test.ts checks they match).
    triggers: {
      new_appointment: newAppointment,
      appointment_changed: appointmentChanged,
      new_call: newCall,
      new_client: newClient,
      client_changed: clientChanged,
    },
    searches: { find_client: findClient, find_appointment: findAppointment },
  };
}
