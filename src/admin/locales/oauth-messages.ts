// The texts of the OAuth pages (the consent page and Settings > API > Connected apps), in each
// language, kept apart from messages.ts as the webhook texts are kept in their namespace: one
// `OAuthMessages` per language, checked with `satisfies`. The scopes' own words (a label and what
// each lets an app read) are domain/scopes.ts's, shared with the key forms.
import type { Lang } from './messages.js';

type Text = string;

export interface OAuthMessages {
  tabApps: Text;
  consentTitle: (app: string) => Text;
  consentLead: Text;
  consentApp: Text;
  consentAppUnverified: Text;
  /** an app known by its metadata document (its client_id is that URL): the host that publishes it */
  consentAppDocument: (host: string) => Text;
  consentRedirect: Text;
  consentRedirectHelp: Text;
  consentClinic: Text;
  consentClinicHelp: Text;
  consentScopes: Text;
  consentScopesHelp: Text;
  consentNoScope: Text;
  consentAllow: Text;
  consentDeny: Text;
  consentFoot: Text;
  consentStaff: Text;
  consentNoClinic: Text;
  /** the app is connected to the clinic already: the page changes that connection (incremental consent) */
  consentConnected: (clinic: string, scopes: string) => Text;
  appsTitle: Text;
  appsLead: Text;
  appsNone: Text;
  colApp: Text;
  colScopes: Text;
  colGrantedBy: Text;
  colGranted: Text;
  colLastUsed: Text;
  colState: Text;
  neverUsed: Text;
  stateActive: Text;
  stateEnded: Record<'disconnected' | 'revoked' | 'reuse', Text>;
  disconnect: Text;
  disconnectTitle: (app: string) => Text;
  disconnectText: Text;
  disconnectConfirm: Text;
  disconnected: (app: string) => Text;
  cancel: Text;
  errorTitle: Text;
  errorText: Text;
  errorDetail: Text;
  oauthOff: Text;
}

const es = {
  tabApps: 'Apps conectadas',
  consentTitle: (app) => `«${app}» quiere acceder a los datos de tu clínica`,
  consentLead: 'Revisa qué podrá leer esta aplicación. Solo podrá leer, nunca cambiar nada, y puedes desconectarla cuando quieras.',
  consentApp: 'Aplicación',
  consentAppUnverified: 'Es el nombre que la aplicación se ha dado a sí misma; nadie lo ha verificado.',
  consentAppDocument: (host) => `Su descripción la publica ${host}.`,
  consentRedirect: 'Volverás a',
  consentRedirectHelp: 'Si no reconoces esta dirección, no permitas el acceso.',
  consentClinic: 'Clínica',
  consentClinicHelp: 'La aplicación solo verá los datos de esta clínica.',
  consentScopes: 'Permisos',
  consentScopesHelp: 'La aplicación pidió estos permisos. Desmarca los que no quieras darle.',
  consentNoScope: 'Marca al menos un permiso, o deniega el acceso.',
  consentAllow: 'Permitir',
  consentDeny: 'Denegar',
  consentFoot: 'Podrás ver y desconectar esta aplicación en Ajustes > API > Apps conectadas.',
  consentStaff: 'Solo la dueña de la clínica (o un superadministrador) puede conectar aplicaciones. Pídeselo a ella.',
  consentNoClinic: 'Ninguna clínica de tu cuenta tiene un plan con acceso a la API.',
  consentConnected: (clinic, scopes) =>
    `Ya conectaste esta aplicación a ${clinic} con estos permisos: ${scopes}. Al permitir, esa misma conexión tendrá los que marques ` +
    'aquí; no se crea otra.',
  appsTitle: 'Apps conectadas',
  appsLead:
    'Aplicaciones a las que se dio acceso a esta clínica con el botón «Conectar» (por ejemplo un asistente de IA o un CRM). Al ' +
    'desconectar una, deja de funcionar al momento.',
  appsNone: 'Ninguna aplicación está conectada.',
  colApp: 'Aplicación',
  colScopes: 'Permisos',
  colGrantedBy: 'Conectada por',
  colGranted: 'Conectada',
  colLastUsed: 'Último uso',
  colState: 'Estado',
  neverUsed: 'Nunca',
  stateActive: 'Conectada',
  stateEnded: { disconnected: 'Desconectada', revoked: 'Revocada por la aplicación', reuse: 'Cortada por seguridad' },
  disconnect: 'Desconectar',
  disconnectTitle: (app) => `¿Desconectar ${app}?`,
  disconnectText:
    'La aplicación dejará de poder leer los datos de la clínica en todos los servidores en unos segundos. ' +
    'Para volver a usarla habrá que conectarla de nuevo.',
  disconnectConfirm: 'Sí, desconectar',
  disconnected: (app) => `${app} se ha desconectado.`,
  cancel: 'Cancelar',
  errorTitle: 'No se puede completar la conexión de la aplicación',
  errorText:
    'La solicitud de la aplicación no es válida, así que no se ha conectado nada y no se te envía a ninguna otra web. Vuelve a la ' +
    'aplicación e inténtalo de nuevo; si sigue fallando, pásale este error a quien la hizo.',
  errorDetail: 'Error (para quien hizo la aplicación)',
  oauthOff:
    'Las conexiones con el botón «Conectar» (OAuth) no están activadas en este servidor. Quien lo administra puede activarlas ' +
    'con la variable OAUTH_ISSUER (la dirección pública del servidor, por ejemplo https://api.example.com).',
} satisfies OAuthMessages;

const en = {
  tabApps: 'Connected apps',
  consentTitle: (app) => `“${app}” wants to access your clinic’s data`,
  consentLead: 'Check what this app will be able to read. It can only read, never change anything, and you can disconnect it at any time.',
  consentApp: 'App',
  consentAppUnverified: 'This is the name the app gave itself; no one has verified it.',
  consentAppDocument: (host) => `Its description is published by ${host}.`,
  consentRedirect: 'You will return to',
  consentRedirectHelp: 'If you do not recognise this address, do not allow access.',
  consentClinic: 'Clinic',
  consentClinicHelp: 'The app will only see this clinic’s data.',
  consentScopes: 'Permissions',
  consentScopesHelp: 'The app asked for these permissions. Untick any you do not want to give it.',
  consentNoScope: 'Tick at least one permission, or deny access.',
  consentAllow: 'Allow',
  consentDeny: 'Deny',
  consentFoot: 'You can see and disconnect this app in Settings > API > Connected apps.',
  consentStaff: 'Only the clinic’s owner (or a superadmin) can connect apps. Ask the owner to do it.',
  consentNoClinic: 'No clinic of your account has a plan with API access.',
  consentConnected: (clinic, scopes) =>
    `You already connected this app to ${clinic} with these permissions: ${scopes}. Allowing gives that same connection the ones you ` +
    'tick here; no second connection is made.',
  appsTitle: 'Connected apps',
  appsLead:
    'Apps given access to this clinic with a “Connect” button (such as an AI assistant or a CRM). Disconnecting one stops it at once.',
  appsNone: 'No app is connected.',
  colApp: 'App',
  colScopes: 'Permissions',
  colGrantedBy: 'Connected by',
  colGranted: 'Connected',
  colLastUsed: 'Last used',
  colState: 'State',
  neverUsed: 'Never',
  stateActive: 'Connected',
  stateEnded: { disconnected: 'Disconnected', revoked: 'Revoked by the app', reuse: 'Cut off for safety' },
  disconnect: 'Disconnect',
  disconnectTitle: (app) => `Disconnect ${app}?`,
  disconnectText:
    'The app will stop being able to read the clinic’s data on every server within seconds. To use it again, it has to be connected again.',
  disconnectConfirm: 'Yes, disconnect',
  disconnected: (app) => `${app} has been disconnected.`,
  cancel: 'Cancel',
  errorTitle: 'The app’s connection cannot be completed',
  errorText:
    'The app’s request is not valid, so nothing was connected and you are not being sent to any other site. Go back to the app ' +
    'and try again; if it keeps failing, give this error to whoever made it.',
  errorDetail: 'Error (for whoever made the app)',
  oauthOff:
    'Connecting apps with a “Connect” button (OAuth) is not turned on on this server. Whoever runs it can turn it on with the ' +
    'OAUTH_ISSUER variable (the server’s public address, such as https://api.example.com).',
} satisfies OAuthMessages;

const CATALOGUES = { es, en } satisfies Record<Lang, OAuthMessages>;

export function oauthMessages(lang: Lang): OAuthMessages {
  return CATALOGUES[lang];
}
