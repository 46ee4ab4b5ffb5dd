// What a dashboard catalogue holds: every text of every page, one `Messages` object per language
// (es.ts, en.ts), each checked with `satisfies Messages`, so a text missing from a language, or one
// a language has that the type does not, is a compile error. Labels for a closed set of values are
// records over that set (roles, plans, key and endpoint states, API error codes...): a new value
// without its label in every language does not compile. Texts with parameters are functions.
// How to add a text: docs/dashboard.md, "Adding a text".
import type { ErrorCode } from '../../errors.js';
import type { Plan, Role } from '../../domain/records.js';
import type { KeyStatus } from '../../services/api-keys.js';
import type { Refusal } from '../../services/webhooks/destination.js';
import type { EndpointStatus } from '../../services/webhooks/endpoints.js';
import type { KeyMessages } from './key-messages.js';
import type { LogMessages } from './log-messages.js';
import type { SandboxMessages } from './sandbox-messages.js';

export type { KeyMessages, LogMessages };

/** Every language the dashboard speaks, in the order the language switch lists them. */
export const LANGS = ['es', 'en'] as const;
export type Lang = (typeof LANGS)[number];

/**
 * A counted phrase by CLDR plural category (Intl.PluralRules, format.ts); `{n}` is the count
 * formatted with the locale's grouping. A category a language does not list falls back to `other`.
 */
export type Plural = { readonly other: string } & { readonly [K in Intl.LDMLPluralRule]?: string };

/** The choices of the "Expires" field of the create-key form (their values are the form's); `date`: the date field's. */
export const EXPIRY_CHOICES = ['never', '30', '90', '365', 'date'] as const;
export type ExpiryChoice = (typeof EXPIRY_CHOICES)[number];

/** How long a rolled key keeps working, in seconds (the roll form's values); the default is 24 hours. */
export const OVERLAP_CHOICES = ['0', '3600', '86400', '259200', '604800'] as const;
export type OverlapChoice = (typeof OVERLAP_CHOICES)[number];
export const DEFAULT_OVERLAP: OverlapChoice = '86400';

/** Why an endpoint was not added: the destination's refusals, a bad event type, the endpoint limit. */
export type WebhookFormError = Refusal | 'events' | 'limit';

/** How a delivery was made (webhook_deliveries.kind) and how it ended (outcome). */
export type DeliveryKind = 'auto' | 'test' | 'resend' | 'replay';
export type DeliveryOutcome = 'delivered' | 'failed';
/** Why a delivery failed without an HTTP status (services/webhooks/send.ts, Attempt.error). */
export type DeliveryError = 'timeout' | 'connection' | 'tls' | 'dns' | 'refused_address' | 'redirect';

type Text = string;
type Texts<K extends string> = Readonly<Record<K, Text>>;

export interface Messages {
  /** the `<html lang>` of the page, and which entry of the language switch is current */
  htmlLang: Lang;
  /** the BCP 47 locale of dates, numbers, plurals and lists */
  locale: string;

  // The page shell
  appName: Text;
  skipToContent: Text;
  signOut: Text;
  signedInAs: Text;
  roles: Texts<Role>;
  plans: Texts<Plan>;
  settings: Text;
  api: Text;
  languageLabel: Text;

  // Sign-in
  signInTitle: Text;
  signInLead: Text;
  email: Text;
  password: Text;
  signInButton: Text;
  signInHelp: Text;
  badCredentials: Text;
  throttled: Plural;
  signInBusy: Text;
  signedOut: Text;
  sessionExpired: Text;

  // Settings > API: the keys page
  pageTitle: Text;
  pageLead: Text;
  planLabel: Text;
  howToTitle: Text;
  howToText: Text;
  howToMore: Text;
  /** the MCP server's address for AI assistants, beside the keys */
  mcpTitle: Text;
  mcpText: Text;
  /** `contact`: the contacto:read scope's label in this language */
  mcpMore: (contact: string) => Text;

  createTitle: Text;
  nameLabel: Text;
  nameHelp: Text;
  expiryLabel: Text;
  expiryOptions: Texts<ExpiryChoice>;
  createButton: Text;
  nameInvalid: Text;
  expiryInvalid: Text;
  formHasErrors: Text;

  newKeyTitle: (name: string) => Text;
  newKeyWarning: Text;
  newKeyLabel: Text;
  copy: Text;
  copied: Text;
  copyFailed: Text;
  newKeyDone: Text;
  /** `when`: the expiry date, formatted */
  newKeyExpires: (when: string) => Text;
  newKeyNoExpiry: Text;

  keysTitle: Text;
  colName: Text;
  colKey: Text;
  colCreatedBy: Text;
  colCreated: Text;
  colLastUsed: Text;
  colExpires: Text;
  colStatus: Text;
  colActions: Text;
  neverUsed: Text;
  noExpiry: Text;
  createdByCli: Text;
  status: Texts<KeyStatus>;
  revoke: Text;
  revokeKeyNamed: (name: string) => Text;
  noKeys: Text;
  noKeysCreateHint: Text;

  staffCannotTitle: Text;
  /** `owners`: the owners' e-mails joined with "or", or null when the clinic has none */
  staffCannotText: (owners: string | null) => Text;
  planTitle: (plan: string) => Text;
  /** `plans`: the plans that include the API, joined with "or" */
  planText: (plans: string) => Text;
  revokedNotice: (name: string) => Text;

  // Usage at a glance
  usageTitle: Plural;
  /** `tz`: the clinic's IANA time zone */
  usageLead: (tz: string) => Text;
  legendOk: Text;
  legendErrors: Text;
  requests: Plural;
  errorsCount: Plural;
  okRequests: Plural;
  /** `day`: a long date; `ok` and `err`: okRequests and errorsCount, already counted */
  dayBar: (day: string, ok: string, err: string) => Text;
  lastErrors: Text;
  noErrors: Text;
  noUsageAtAll: Plural;
  idleKeys: Plural;
  errorTimes: Plural;
  /** what each API error code a key received means, after its code: "404 not_found: a request asked for..." */
  errorHelp: Texts<ErrorCode>;

  // Superadmin
  superadminBar: Text;
  clinicLabel: Text;
  switchClinic: Text;
  chooseClinicTitle: Text;
  chooseClinicLead: Text;
  noClinics: Text;

  // Revoke confirmation
  revokeTitle: (name: string) => Text;
  revokeText: Text;
  revokeUndo: Text;
  revokeConfirm: Text;
  cancel: Text;
  alreadyRevoked: Text;

  // Error pages (admin/errors.ts)
  notFoundTitle: Text;
  notFoundText: Text;
  forbiddenTitle: Text;
  forbiddenRole: Text;
  forbiddenPlan: Text;
  csrfTitle: Text;
  csrfText: Text;
  apiKeyTitle: Text;
  apiKeyText: Text;
  errorTitle: Text;
  errorText: Text;
  badRequestTitle: Text;
  badRequestText: Text;
  unusableTextTitle: Text;
  unusableTextText: Text;
  overloadedTitle: Text;
  overloadedText: Text;
  writeBusyTitle: Text;
  writeBusyText: Text;
  backToDashboard: Text;
  goToSignIn: Text;
  timesIn: (tz: string) => Text;

  /** Settings > API > Webhooks */
  wh: WebhookMessages;

  /** a key's permissions, addresses, expiry date, editing and rolling (locales/<lang>-keys.ts) */
  keys: KeyMessages;

  /** Settings > API > Logs (locales/<lang>-logs.ts) */
  logs: LogMessages;

  /** test mode: test keys, the sandbox, test entries apart (locales/sandbox-messages.ts) */
  sandbox: SandboxMessages;
}

export interface WebhookMessages {
  tabKeys: Text;
  tabWebhooks: Text;
  pageTitle: Text;
  pageLead: Text;
  createTitle: Text;
  urlLabel: Text;
  urlHelp: Text;
  /** urlHelp when the operator allows http:// and private addresses (WEBHOOK_ALLOW_PRIVATE=true) */
  urlHelpPrivate: Text;
  eventsLabel: Text;
  eventsHelp: Text;
  createButton: Text;
  formHasErrors: Text;
  refusals: Texts<WebhookFormError>;
  newTitle: Text;
  newWarning: Text;
  secretLabel: Text;
  newDone: Text;
  endpointsTitle: Text;
  noEndpoints: Text;
  colUrl: Text;
  colEvents: Text;
  colStatus: Text;
  colCreated: Text;
  allEvents: Text;
  status: Texts<EndpointStatus>;
  details: Text;
  detailsOf: (url: string) => Text;
  /** `error`: errors[...] or "HTTP 503" */
  failingSince: (when: string, error: string) => Text;
  disabledFailing: (when: string, error: string) => Text;
  disabledManual: (when: string) => Text;
  /** disabled because the credential that subscribed it by API ended */
  disabledCredential: Record<'key_revoked' | 'key_expired' | 'grant_revoked', (when: string) => Text>;
  subscribedBy: Text;
  incidentTitle: Text;
  incidentFailing: Text;
  incidentDisabled: Text;
  subscriber: Record<'key' | 'app', (name: string) => Text>;
  description: Text;
  staffCannotTitle: Text;
  staffCannotText: Text;
  planText: (plans: string) => Text;
  sendTest: Text;
  disable: Text;
  enable: Text;
  delete: Text;
  resend: Text;
  resendOf: (tipo: string, when: string) => Text;
  deliveriesTitle: Text;
  /** the delivery log's filters and one attempt's page */
  log: {
    outcome: Text;
    any: Text;
    type: Text;
    since: Text;
    until: Text;
    apply: Text;
    older: Text;
    details: Text;
    detailsOf: (tipo: string, when: string) => Text;
    attemptTitle: Text;
    eventId: Text;
    kind: Text;
    nextRetry: Text;
    body: Text;
    noBody: Text;
    kept: (days: number) => Text;
  };
  noDeliveries: Text;
  colTime: Text;
  colEvent: Text;
  colAttempt: Text;
  colResult: Text;
  colResponse: Text;
  colDuration: Text;
  outcome: Texts<DeliveryOutcome>;
  /** shown in brackets after the event type; '' for none */
  kinds: Texts<DeliveryKind>;
  errors: Texts<DeliveryError>;
  testDelivered: (code: string) => Text;
  testFailed: (what: string) => Text;
  resent: (what: string) => Text;
  enabledNotice: Text;
  disabledNotice: Text;
  deletedNotice: (url: string) => Text;
  deleteTitle: Text;
  deleteText: Text;
  deleteUndo: Text;
  deleteConfirm: Text;
  back: Text;
  docsHint: Text;
}

/**
 * `labels[key]` for a key read from outside the type system (a database column, a form field),
 * or undefined when the set has no such key. Own keys only: "constructor" is no label.
 */
export function labelOf<K extends string>(labels: Texts<K>, key: string): Text | undefined {
  return isKeyOf(labels, key) ? labels[key] : undefined;
}

function isKeyOf<K extends string>(labels: Texts<K>, key: string): key is K {
  return Object.hasOwn(labels, key);
}
