// The texts of a key's permissions, addresses, expiry date, editing and rolling, in English (the
// `keys` section of en.ts). Each permission's words come from domain/scopes.ts, the one list of
// them. Keep the keys in the same order as es-keys.ts.
import { SCOPE_TEXTS, SCOPES } from '../../domain/scopes.js';
import type { KeyMessages } from './messages.js';

export const enKeys = {
  scopesLabel: 'Permissions',
  scopesHelp: 'Tick only what the program needs. You can change it later without changing the key.',
  scopes: Object.fromEntries(SCOPES.map((s) => [s, SCOPE_TEXTS[s].en])) as KeyMessages['scopes'],
  scopesExamples:
    'For example: a booking dashboard needs Appointments only; an AI assistant, Appointments, Clients and Calls, without Contact details.',
  scopesInvalid: 'Tick at least one permission from the list.',
  ipsLabel: 'Allowed addresses (optional)',
  ipsHelp:
    'IPv4 or IPv6 addresses, or CIDR ranges, the key may be used from, separated by commas or on separate lines (for example ' +
    '203.0.113.7, 203.0.113.0/24). Empty: from any address.',
  ipsProblem: {
    malformed: (p) => `“${p.entry}” is not an IPv4 or IPv6 address or a CIDR range (such as 203.0.113.7 or 203.0.113.0/24).`,
    host_bits: (p) => `“${p.entry}” has bits set after its prefix: the range is ${p.network}.`,
    too_many: (p) => `That is ${p.count} entries; a key takes at most 50.`,
  },
  dateLabel: 'Expiry date',
  dateHelp: 'With “On a date”: the key works until the end of that day (the clinic’s time).',
  dateInvalid: (value) => `“${value}” is not a date. Write it as 2026-12-31.`,
  datePast: (value) => `${value} has passed. Choose today or a later date.`,
  allScopes: 'All permissions',
  colAccess: 'Access',
  anyAddress: 'From any address',
  onlyFrom: (list) => `Only from ${list}`,
  expiresSoon: { one: 'Expires in {n} day', other: 'Expires in {n} days' },
  expiresToday: 'Expires today',
  replacedBadge: 'Replaced',
  replaced: (when) => `Ends at ${when}; until then it follows the key that replaced it`,
  replaces: (when) => `Replaces a key that ends at ${when}`,
  editFollows: (when) =>
    `The old key this one replaced works until ${when}: until then it gets these changes too (name, permissions, addresses).`,
  revokeFollows: (when) => `The old key this one replaced, which would have worked until ${when}, is revoked too.`,
  revokeOldOnly: (when) =>
    `This key was replaced by a new one and would have worked until ${when}. Only this old key is revoked; the new one keeps working.`,
  edit: 'Edit',
  editKeyNamed: (name) => `Edit the key “${name}”`,
  editTitle: (name) => `Edit the key “${name}”`,
  editLead:
    'Changes apply to requests with this key within a few seconds. The key itself stays the same: the program that uses it has nothing ' +
    'to do.',
  saveButton: 'Save changes',
  editHasErrors: 'Nothing was saved. Check the field marked below.',
  updatedNotice: (name) => `The changes to the key “${name}” are saved.`,
  notActive: 'This key is no longer active: it cannot be changed or rolled.',
  roll: 'Roll',
  rollKeyNamed: (name) => `Roll the key “${name}”`,
  rollTitle: (name) => `Roll the key “${name}”?`,
  rollText:
    'A new key is made with the same name, permissions and addresses, and shown once. Put the new one in the program before the old one ' +
    'stops working.',
  rollKeeps: 'If the key expires, the new one lasts as long from today.',
  rollFollows:
    'While the old key keeps working, it follows the new one: changing the new key’s permissions or addresses changes it too, and ' +
    'revoking the new key revokes it too. It can also be revoked on its own.',
  overlapLabel: 'The old key keeps working',
  overlapOptions: {
    '0': 'No: it stops working now',
    '3600': 'For 1 hour',
    '86400': 'For 24 hours',
    '259200': 'For 3 days',
    '604800': 'For 7 days',
  },
  overlapInvalid: 'Choose how long the old key keeps working.',
  rollConfirm: 'Make the new key',
  rolledOldUntil: (when) => `The old key works until ${when}; then it stops working.`,
  rolledOldEnded: 'The old key no longer works.',
} satisfies KeyMessages;
