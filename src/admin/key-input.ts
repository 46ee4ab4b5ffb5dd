// A key's form (create and edit), read and checked: its name, permissions (checkboxes), allowed
// addresses and, when creating, its expiry. Each refusal is a text in the page's language for its
// field; what was typed is kept to show again. Nothing here writes: the route acts only on a form
// without errors, so a refused form changes nothing.
import { checkAllowedIps, type AddressProblem } from '../domain/allowed-ips.js';
import { canonicalScopes, DEFAULT_SCOPES, isScope, type Scope } from '../domain/scopes.js';
import type { KeyMode } from '../services/api-keys.js';
import { addDays, dayStart, isValidDate, todayIn } from '../time.js';
import { field, fields } from './context.js';
import { EXPIRY_CHOICES, type ExpiryChoice, type Messages } from './locales/messages.js';

const DAY_S = 86_400;

export interface KeyForm {
  name: string;
  /** as ticked */
  scopes: string[];
  /** as typed */
  ips: string;
  expires: string;
  /** the date field, as typed */
  expiresOn: string;
  /** creating: "Test key" ticked (a key that reads the clinic's sandbox) */
  test?: boolean;
  errors: { name?: string; scopes?: string; ips?: string[]; expires?: string };
}

export interface KeyInput {
  name: string;
  scopes: Scope[];
  allowedIps: string[] | null;
  expiresAt: number | null;
  /** creating: 'test' for a test key */
  mode?: KeyMode;
}

/** A new key's form before anything was typed: every permission ticked, any address, no expiry. */
export function blankKeyForm(): KeyForm {
  return { name: '', scopes: [...DEFAULT_SCOPES], ips: '', expires: 'never', expiresOn: '', errors: {} };
}

export function hasErrors(form: KeyForm): boolean {
  return Object.keys(form.errors).length > 0;
}

/**
 * The form as posted, with every refusal; `input` is null when any field is refused. `expiry`:
 * read the expiry too (creating), in the clinic's time zone at `nowMs`.
 */
export function readKeyForm(
  body: unknown,
  t: Messages,
  expiry: { timezone: string; nowMs: number } | null,
): { form: KeyForm; input: KeyInput | null } {
  const name = field(body, 'name').trim();
  const ticked = fields(body, 'scopes');
  const ips = field(body, 'allowed_ips');
  const form: KeyForm = {
    name,
    scopes: ticked,
    ips,
    expires: field(body, 'expires'),
    expiresOn: field(body, 'expires_on').trim(),
    test: expiry !== null && field(body, 'mode') === 'test',
    errors: {},
  };
  // Control characters would only make a name that cannot be told apart from another.
  if (name.length < 1 || name.length > 100 || /\p{Cc}/u.test(name)) form.errors.name = t.nameInvalid;
  const scopes = ticked.every(isScope) ? canonicalScopes(ticked) : [];
  if (scopes.length === 0) form.errors.scopes = t.keys.scopesInvalid;
  const checked = checkAllowedIps(ips);
  if ('problems' in checked) form.errors.ips = checked.problems.map((p) => describe(t, p));
  const expiresAt = expiry ? readExpiry(form, t, expiry.timezone, expiry.nowMs) : null;
  if (hasErrors(form)) return { form, input: null };
  const mode: KeyMode = form.test ? 'test' : 'live';
  return { form, input: { name, scopes, allowedIps: 'ips' in checked ? checked.ips : null, expiresAt, mode } };
}

function describe(t: Messages, p: AddressProblem): string {
  switch (p.kind) {
    case 'malformed':
      return t.keys.ipsProblem.malformed(p);
    case 'host_bits':
      return t.keys.ipsProblem.host_bits(p);
    case 'too_many':
      return t.keys.ipsProblem.too_many(p);
  }
}

/** The expiry chosen, as epoch seconds (null: never); a refusal goes into form.errors.expires. */
function readExpiry(form: KeyForm, t: Messages, timezone: string, nowMs: number): number | null {
  const choice = form.expires;
  if (!(EXPIRY_CHOICES as readonly string[]).includes(choice)) {
    form.errors.expires = t.expiryInvalid;
    return null;
  }
  const nowS = Math.floor(nowMs / 1000);
  switch (choice as ExpiryChoice) {
    case 'never':
      return null;
    case 'date': {
      const day = form.expiresOn;
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || !isValidDate(day)) {
        form.errors.expires = t.keys.dateInvalid(day);
        return null;
      }
      if (day < todayIn(timezone, nowMs)) {
        form.errors.expires = t.keys.datePast(day);
        return null;
      }
      // Through the end of that day in the clinic's time zone.
      return dayStart(addDays(day, 1), timezone);
    }
    default:
      return nowS + Number(choice) * DAY_S;
  }
}
