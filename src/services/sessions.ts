// Dashboard sessions. The cookie carries a random 256-bit token; the database keeps only its
// SHA-256, so a copy of the table cannot be turned into working cookies. A session ends after
// `idleSeconds` without a request or `absoluteSeconds` after sign-in, whichever comes first,
// and at sign-out. last_seen_at is written at most once per `touchEverySeconds`, not per page.
// Writes wait for SQLite's write lock asynchronously (services/write-lock.ts): signing in and out
// and the one-time messages wait for it, last_seen_at and the removal of expired sessions are
// skipped while it is taken (a page view never fails for them).
// (The cookies themselves are the dashboard's: admin/session.ts.)
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { whenWritable, WriterBusy } from '../db/connect.js';
import type { DB } from '../db/schema.js';
import type { IssuedKey } from './key-rules.js';
import {
  deleteExpiredSessions,
  deleteSession,
  getSessionWithUser,
  insertSession,
  setSessionFlash,
  takeSessionFlash,
  touchSession,
  type SessionWithUser,
} from '../repos/sessions.js';
import { BACKGROUND_WRITE_WAIT_MS, FOLLOW_UP_WRITE_WAIT_MS, INTERACTIVE_WRITE_WAIT_MS } from './write-lock.js';

/** Housekeeping a page can do without: skipped while another process holds SQLite's write lock. */
async function unlessBusy(write: () => Promise<unknown>): Promise<void> {
  try {
    await whenWritable(write, BACKGROUND_WRITE_WAIT_MS);
  } catch (err) {
    if (!(err instanceof WriterBusy)) throw err;
  }
}

export interface SessionTuning {
  idleSeconds: number;
  absoluteSeconds: number;
  touchEverySeconds: number;
}

export const DEFAULT_SESSION: SessionTuning = { idleSeconds: 30 * 60, absoluteSeconds: 12 * 3600, touchEverySeconds: 60 };

const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

/** 32 bytes from the CSPRNG, base64url (43 characters). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export function isToken(value: unknown): value is string {
  return typeof value === 'string' && TOKEN_RE.test(value);
}

export function sessionId(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** One-time messages shown on the next page, e.g. the key that was just created. */
export type Flash =
  | {
      kind: 'created';
      clinicId: string;
      keyId: string;
      name: string;
      key: string;
      expiresAt: number | null;
      /** a key made by rolling another: when the old one stops working */
      oldExpiresAt?: number;
    }
  | { kind: 'revoked'; clinicId: string; keyId: string; name: string }
  /** a key's name, permissions or addresses changed */
  | { kind: 'updated'; clinicId: string; keyId: string; name: string }
  /** a webhook endpoint just added: its signing secret, shown once */
  | { kind: 'webhook-created'; clinicId: string; endpointId: string; url: string; secret: string }
  /** the outcome of a webhook action (a test event, a resend, enable, disable, delete), already in the page's language */
  | { kind: 'webhook-notice'; clinicId: string; tone: 'success' | 'danger'; text: string }
  /** an app just disconnected (Settings > API > Connected apps) */
  | { kind: 'app-disconnected'; clinicId: string; grantId: string; name: string };

/** The flash that shows a new key once (made in the dashboard, or by rolling `oldExpiresAt`'s key). */
export function createdFlash(issued: IssuedKey, oldExpiresAt?: number): Flash {
  return {
    kind: 'created',
    clinicId: issued.clinicId,
    keyId: issued.id,
    name: issued.name,
    key: issued.key,
    expiresAt: issued.expiresAt,
    ...(oldExpiresAt === undefined ? {} : { oldExpiresAt }),
  };
}

export type Resolved = { status: 'ok'; session: SessionWithUser } | { status: 'expired' } | { status: 'none' };

// The flash is encrypted under a key derived from the cookie token, which the server does not
// keep: a just-created API key is therefore never readable from the database, and the redirect
// that shows it works on any instance.
function flashKey(token: string): Buffer {
  return createHmac('sha256', token).update('clinic-dashboard flash v1').digest();
}

export function sealFlash(token: string, flash: Flash): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', flashKey(token), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(flash), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

export function openFlash(token: string, sealed: string): Flash | null {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', flashKey(token), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as Flash;
  } catch {
    return null;
  }
}

export class Sessions {
  constructor(
    private readonly db: Kysely<DB>,
    readonly tuning: SessionTuning,
    private readonly now: () => number,
  ) {}

  private nowS(): number {
    return Math.floor(this.now() / 1000);
  }

  /**
   * Starts a session for `userId`; returns the token for the cookie (never stored). `lang`: the
   * dashboard language to keep for the session (the sign-in page's), or null.
   */
  async create(userId: string, lang: string | null = null): Promise<string> {
    const nowS = this.nowS();
    // Housekeeping at sign-in, which is rare, rather than on a timer.
    await unlessBusy(() => deleteExpiredSessions(this.db, nowS, this.tuning.idleSeconds));
    const token = newToken();
    const row = {
      id: sessionId(token),
      user_id: userId,
      created_at: nowS,
      last_seen_at: nowS,
      expires_at: nowS + this.tuning.absoluteSeconds,
      flash: null,
      lang,
    };
    await whenWritable(() => insertSession(this.db, row), INTERACTIVE_WRITE_WAIT_MS);
    return token;
  }

  async resolve(token: unknown): Promise<Resolved> {
    if (!isToken(token)) return { status: 'none' };
    const id = sessionId(token);
    const row = await getSessionWithUser(this.db, id);
    if (!row) return { status: 'none' };
    const nowS = this.nowS();
    if (row.expires_at <= nowS || row.last_seen_at + this.tuning.idleSeconds <= nowS) {
      await unlessBusy(() => deleteSession(this.db, id));
      return { status: 'expired' };
    }
    if (nowS - row.last_seen_at >= this.tuning.touchEverySeconds) {
      await unlessBusy(() => touchSession(this.db, id, nowS));
      row.last_seen_at = nowS;
    }
    return { status: 'ok', session: row };
  }

  async destroy(token: string): Promise<void> {
    await whenWritable(() => deleteSession(this.db, sessionId(token)), INTERACTIVE_WRITE_WAIT_MS);
  }

  /** Follows the action it reports (a key created...): waits longer for the lock than the action did. */
  async setFlash(token: string, flash: Flash): Promise<void> {
    const sealed = sealFlash(token, flash);
    await whenWritable(() => setSessionFlash(this.db, sessionId(token), sealed), FOLLOW_UP_WRITE_WAIT_MS);
  }

  /**
   * Reads the flash and, if it belongs to `clinicId`, clears it and returns it: only one request
   * ever gets it. A flash for another clinic (a superadmin looking elsewhere first) is left in
   * place for that clinic's page; one that cannot be opened is cleared.
   */
  async takeFlash(token: string, sealed: string | null, clinicId: string): Promise<Flash | null> {
    if (!sealed) return null;
    const flash = openFlash(token, sealed);
    if (flash && flash.clinicId !== clinicId) return null;
    // Busy: the page is not shown and the message stays for the next try.
    if (!(await whenWritable(() => takeSessionFlash(this.db, sessionId(token), sealed), INTERACTIVE_WRITE_WAIT_MS))) return null;
    return flash;
  }
}
