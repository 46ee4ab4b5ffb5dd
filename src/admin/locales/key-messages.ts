// The texts of a key's permissions, addresses, expiry date, editing and rolling: the `keys`
// section of Messages (messages.ts), written in es-keys.ts and en-keys.ts.
import type { AddressProblem } from '../../domain/allowed-ips.js';
import type { Scope, ScopeWords } from '../../domain/scopes.js';
import type { OverlapChoice, Plural } from './messages.js';

type Text = string;
type Texts<K extends string> = Readonly<Record<K, Text>>;

export interface KeyMessages {
  scopesLabel: Text;
  scopesHelp: Text;
  /** every scope's short name and what it lets a program read (from domain/scopes.ts) */
  scopes: Readonly<Record<Scope, ScopeWords>>;
  scopesExamples: Text;
  scopesInvalid: Text;
  ipsLabel: Text;
  ipsHelp: Text;
  /** why an entry of the addresses cannot be used */
  ipsProblem: { [K in AddressProblem['kind']]: (p: Extract<AddressProblem, { kind: K }>) => Text };
  dateLabel: Text;
  dateHelp: Text;
  /** `value`: what was typed */
  dateInvalid: (value: string) => Text;
  datePast: (value: string) => Text;
  /** the list's one chip for a key with every scope */
  allScopes: Text;
  colAccess: Text;
  anyAddress: Text;
  /** `list`: the entries, joined */
  onlyFrom: (list: string) => Text;
  expiresSoon: Plural;
  expiresToday: Text;
  /** the status badge of a rolled key still in its overlap */
  replacedBadge: Text;
  /** on a rolled key still in its overlap: `when` its end, formatted */
  replaced: (when: string) => Text;
  /** on the key that replaced one still in its overlap: `when` that one's end, formatted */
  replaces: (when: string) => Text;
  /** on the edit page of such a key: the old one follows the change until `when` */
  editFollows: (when: string) => Text;
  /** on the revoke page of such a key: the old one (ending at `when`) is revoked with it */
  revokeFollows: (when: string) => Text;
  /** on the revoke page of a rolled key in its overlap: only it ends now, not its replacement */
  revokeOldOnly: (when: string) => Text;
  edit: Text;
  editKeyNamed: (name: string) => Text;
  editTitle: (name: string) => Text;
  editLead: Text;
  saveButton: Text;
  editHasErrors: Text;
  updatedNotice: (name: string) => Text;
  notActive: Text;
  roll: Text;
  rollKeyNamed: (name: string) => Text;
  rollTitle: (name: string) => Text;
  rollText: Text;
  rollKeeps: Text;
  /** while the old key keeps working, it follows the new one's changes and revocation */
  rollFollows: Text;
  overlapLabel: Text;
  overlapOptions: Texts<OverlapChoice>;
  overlapInvalid: Text;
  rollConfirm: Text;
  /** on the new key's panel after a roll: `when` the old key's end, formatted */
  rolledOldUntil: (when: string) => Text;
  rolledOldEnded: Text;
}
