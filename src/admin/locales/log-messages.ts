// The texts of Settings > API > Logs (the request log, one request, the client access record): the
// `logs` section of Messages (messages.ts), written in es-logs.ts and en-logs.ts.
import type { Plural } from './messages.js';

type Text = string;

/** The status classes the log's filter offers (its values are the form's). */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

export interface LogMessages {
  tab: Text;
  pageTitle: Text;
  pageLead: Text;
  /** `days`: REQUEST_LOG_DAYS */
  kept: (days: string) => Text;
  /** the server runs with REQUEST_LOG_DAYS=0 */
  off: Text;
  staffCannot: Text;
  filtersTitle: Text;
  filterKey: Text;
  anyKey: Text;
  /** the OAuth apps the clinic connected (shown when there is one) */
  filterApp: Text;
  anyApp: Text;
  filterStatus: Text;
  anyStatus: Text;
  statusClasses: Readonly<Record<StatusClass, Text>>;
  filterEndpoint: Text;
  endpointHelp: Text;
  /** one request found by the id an integrator quotes */
  filterRequestId: Text;
  requestIdHelp: Text;
  filterSince: Text;
  filterUntil: Text;
  datesHelp: Text;
  apply: Text;
  clear: Text;
  /** a filter that cannot be used (a crafted address): the list shown unfiltered by it */
  badFilter: Text;
  requestsTitle: Text;
  noRequests: Text;
  colTime: Text;
  colKey: Text;
  colRequest: Text;
  colStatus: Text;
  colDuration: Text;
  colRecords: Text;
  /** a key deleted since (its clinic's key list no longer has it) */
  unknownKey: Text;
  /** a grant the clinic no longer has (not expected: grants are kept when disconnected) */
  unknownApp: Text;
  /** beside an app's name in the log, to tell it from a key of the same name */
  appBadge: Text;
  older: Text;
  newest: Text;
  details: Text;
  detailsOf: (what: string) => Text;
  detailTitle: Text;
  /** the detail of a request id that several requests carry (a client reused its own X-Request-Id) */
  sameRequestId: Plural;
  /** the link from that detail to the list filtered by the id */
  seeInList: Text;
  fieldTime: Text;
  fieldRequestId: Text;
  fieldKey: Text;
  fieldGrant: Text;
  fieldMethod: Text;
  fieldPath: Text;
  fieldQuery: Text;
  fieldStatus: Text;
  fieldErrorCode: Text;
  fieldDuration: Text;
  fieldRecords: Text;
  fieldClientIp: Text;
  fieldUserAgent: Text;
  none: Text;
  errorBodyTitle: Text;
  disclosedTitle: Text;
  disclosed: Plural;
  noneDisclosed: Text;
  back: Text;
  accessTitle: Text;
  accessLead: Text;
  searchLabel: Text;
  searchHelp: Text;
  searchButton: Text;
  matches: Plural;
  noMatches: (name: string) => Text;
  /** more matches than shown */
  narrow: Text;
  seeAccess: Text;
  accessOf: (name: string) => Text;
  /** a clienta no longer in the clinic's data (erased): her record stays, by id */
  erased: Text;
  noAccess: Text;
  colEndpoint: Text;
  olderAccess: Text;
  otherClienta: Text;
}
