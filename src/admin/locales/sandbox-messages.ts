// Test mode's texts in the dashboard, Spanish and English (the section `sandbox` of es.ts and
// en.ts): the test-key choice, the badges that set test keys, test log entries and apps connected
// in test mode apart from live ones, the sandbox's reset, and test webhook endpoints. Kept in one
// file of their own.
type Text = string;

export interface SandboxMessages {
  /** the create form's checkbox */
  testKeyLabel: Text;
  testKeyHelp: (prefix: string) => Text;
  /** the badge of a test key, a test log entry, an app connected in test mode */
  testBadge: Text;
  /** the badge of a live key when the clinic has test keys too */
  liveBadge: Text;
  /** the keys page's card */
  title: Text;
  lead: Text;
  none: Text;
  resetButton: Text;
  resetHelp: Text;
  resetDone: Text;
  /** the logs page's choice between live and test requests */
  modeLabel: Text;
  modeLive: Text;
  modeTest: Text;
  testLogNotice: Text;
  /** the consent screen's choice */
  consentModeLabel: Text;
  consentModeTest: Text;
  /** a grant's resource in Connected apps and the request log */
  resourceApi: Text;
  resourceMcp: Text;
  /** the webhooks page: the create form's choice, the group of test endpoints, its own limit */
  testEndpointLabel: Text;
  testEndpointHelp: Text;
  testEndpointsTitle: Text;
  noTestEndpoints: Text;
  testEndpointLimit: Text;
}

export const esSandbox: SandboxMessages = {
  testKeyLabel: 'Clave de prueba',
  testKeyHelp: (prefix) =>
    `Lee solo el entorno de pruebas de la clínica: datos inventados que cambian solos cada minuto, nunca los de tus clientas. ` +
    `Empieza por ${prefix}_test_.`,
  testBadge: 'Prueba',
  liveBadge: 'Real',
  title: 'Entorno de pruebas',
  lead:
    'Las claves de prueba leen un entorno propio de la clínica con datos inventados (nombres, teléfonos de ficción, correos en ' +
    'example.com) que se mueven solos: citas nuevas, confirmadas, canceladas, llamadas y clientas nuevas, cada cambio con su evento y ' +
    'sus webhooks. Nunca ve ni toca los datos reales.',
  none: 'Se crea con la primera clave o el primer destino de webhook de prueba.',
  resetButton: 'Empezar de nuevo el entorno de pruebas',
  resetHelp:
    'Borra sus datos y crea otros. Las claves y los webhooks de prueba siguen igual; quien siga sus cambios recibe 410 cursor_expired y ' +
    'vuelve a empezar.',
  resetDone: 'El entorno de pruebas tiene datos nuevos.',
  modeLabel: 'Modo',
  modeLive: 'Datos reales',
  modeTest: 'Pruebas',
  testLogNotice: 'Peticiones hechas con claves de prueba al entorno de pruebas.',
  consentModeLabel: 'Modo de prueba',
  consentModeTest: 'Conectar al entorno de pruebas (datos inventados) en lugar de a los datos reales',
  resourceApi: 'API',
  resourceMcp: 'MCP',
  testEndpointLabel: 'Destino de prueba',
  testEndpointHelp: 'Recibe solo los eventos del entorno de pruebas.',
  testEndpointsTitle: 'Destinos de prueba',
  noTestEndpoints: 'El entorno de pruebas no tiene destinos de webhook.',
  testEndpointLimit: 'El entorno de pruebas ya tiene 10 destinos, el máximo. Borra uno primero.',
};

export const enSandbox: SandboxMessages = {
  testKeyLabel: 'Test key',
  testKeyHelp: (prefix) =>
    `Reads only the clinic’s sandbox: made-up data that changes by itself every minute, never your clients’. ` +
    `It starts with ${prefix}_test_.`,
  testBadge: 'Test',
  liveBadge: 'Live',
  title: 'Sandbox',
  lead:
    'Test keys read a sandbox of the clinic’s own, with made-up data (names, fictional phone numbers, e-mails at example.com) that moves ' +
    'by itself: new, confirmed and cancelled appointments, calls and new clients, each change with its event and webhooks. It never sees ' +
    'or touches the real data.',
  none: 'It is made with the first test key or test webhook endpoint.',
  resetButton: 'Start the sandbox again',
  resetHelp:
    'Deletes its data and makes new data. Test keys and test webhooks stay; whoever follows its changes gets 410 cursor_expired and ' +
    'starts again.',
  resetDone: 'The sandbox has fresh data.',
  modeLabel: 'Mode',
  modeLive: 'Live data',
  modeTest: 'Test',
  testLogNotice: 'Requests made with test keys to the sandbox.',
  consentModeLabel: 'Test mode',
  consentModeTest: 'Connect to the sandbox (made-up data) instead of the real data',
  resourceApi: 'API',
  resourceMcp: 'MCP',
  testEndpointLabel: 'Test endpoint',
  testEndpointHelp: 'Receives only the sandbox’s events.',
  testEndpointsTitle: 'Test endpoints',
  noTestEndpoints: 'The sandbox has no webhook endpoints.',
  testEndpointLimit: 'The sandbox already has 10 endpoints, the most allowed. Delete one first.',
};
