// A real app (same factory as the server) on a fresh database, with the people and clinics the
// dashboard tests need, and a tiny cookie-keeping client over app.inject().
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import type { Dialect } from '../../src/db/dialect.js';
import type { AdminTuning } from '../../src/admin/index.js';
import type { Clinic } from '../../src/repos/clinics.js';
import { SCOPES } from '../../src/domain/scopes.js';
import { createClinic, createUser } from '../../src/services/accounts.js';
import type { KeyService } from '../../src/services/api-keys.js';
import { appFor } from '../helpers/app.js';
import { testRuntime, type TestRuntime, type TestRuntimeOptions } from '../helpers/runtime.js';

export const PASSWORD = 'correct horse battery';

export const EMAILS = {
  ownerA: 'owner@uno.example',
  staffA: 'staff@uno.example',
  ownerB: 'owner@dos.example',
  ownerLow: 'owner@basica.example',
  superadmin: 'root@plataforma.example',
} as const;

export interface DashboardApp {
  app: FastifyInstance;
  rt: TestRuntime;
  database: Database;
  keys: KeyService;
  config: Config;
  clock: { now: number };
  /** premium, Spanish, Europe/Madrid */
  clinicA: Clinic;
  /** enterprise, English, America/Mexico_City */
  clinicB: Clinic;
  /** plan "pro": not API-eligible */
  clinicLow: Clinic;
  close(): Promise<void>;
}

export async function buildDashboardApp(
  dialect: Dialect,
  opts: { env?: Record<string, string>; admin?: AdminTuning; session?: TestRuntimeOptions['session']; nowMs?: number } = {},
): Promise<DashboardApp> {
  // The sessions are the runtime's (one per process, like every service).
  const rt = await testRuntime(dialect, { env: opts.env, nowMs: opts.nowMs, session: opts.session });
  const { database, keys, config, clock } = rt;
  const db = database.db;
  const clinicA = await createClinic(db, { name: 'Clínica Uno', plan: 'premium', language: 'es' }, clock.now);
  const clinicB = await createClinic(
    db,
    { name: 'Clinic Two', plan: 'enterprise', language: 'en', timezone: 'America/Mexico_City', currency: 'MXN' },
    clock.now,
  );
  const clinicLow = await createClinic(db, { name: 'Clínica Básica', plan: 'pro', language: 'es' }, clock.now);
  await Promise.all([
    createUser(db, { clinicId: clinicA.id, email: EMAILS.ownerA, role: 'owner', password: PASSWORD }),
    createUser(db, { clinicId: clinicA.id, email: EMAILS.staffA, role: 'staff', password: PASSWORD }),
    createUser(db, { clinicId: clinicB.id, email: EMAILS.ownerB, role: 'owner', password: PASSWORD }),
    createUser(db, { clinicId: clinicLow.id, email: EMAILS.ownerLow, role: 'owner', password: PASSWORD }),
    createUser(db, { clinicId: null, email: EMAILS.superadmin, role: 'superadmin', password: PASSWORD }),
  ]);
  const app = await appFor(rt, { admin: opts.admin });
  return {
    app,
    rt,
    database,
    keys,
    config,
    clock,
    clinicA,
    clinicB,
    clinicLow,
    close: async () => {
      await app.close();
      await rt.close();
    },
  };
}

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The create form's permissions as a browser posts them with every box ticked (the form's default). */
export const ALL_SCOPES = { scopes: [...SCOPES] };

/** The value of the first hidden _csrf field in a page. */
export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m?.[1]) throw new Error('no CSRF token in the page');
  return m[1];
}

/** Set-Cookie headers of a response as an array. */
export function setCookies(res: LightMyRequestResponse): string[] {
  const h = res.headers['set-cookie'];
  return h === undefined ? [] : Array.isArray(h) ? h : [String(h)];
}

export function cookieLine(res: LightMyRequestResponse, name: string): string | undefined {
  return setCookies(res).find((c) => c.startsWith(`${name}=`));
}

/** A client that keeps cookies between requests, like a browser (but without one). */
export class Client {
  readonly cookies = new Map<string, string>();
  /** the last HTML page received */
  page = '';

  constructor(
    private readonly app: FastifyInstance,
    readonly ip = '203.0.113.7',
  ) {}

  private cookieHeader(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }

  private keep(res: LightMyRequestResponse): LightMyRequestResponse {
    for (const line of setCookies(res)) {
      const [pair] = line.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    if (String(res.headers['content-type'] ?? '').startsWith('text/html')) this.page = res.body;
    return res;
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.keep(
      await this.app.inject({ method: 'GET', url, remoteAddress: this.ip, headers: { ...this.cookieHeader(), ...headers } }),
    );
  }

  /** A form post; an array value is a field repeated (checkboxes). */
  async post(url: string, form: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
    return this.keep(
      await this.app.inject({
        method: 'POST',
        url,
        remoteAddress: this.ip,
        headers: { ...FORM, ...this.cookieHeader(), ...headers },
        payload: body.toString(),
      }),
    );
  }

  /** Posts a form with the CSRF token of the page at `from` (fetched first). */
  async submit(from: string, url: string, form: Record<string, string | string[]>, headers: Record<string, string> = {}) {
    const page = await this.get(from);
    return this.post(url, { _csrf: csrfOf(page.body), ...form }, headers);
  }

  async signIn(email: string, password = PASSWORD): Promise<LightMyRequestResponse> {
    return this.submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password });
  }
}

/**
 * The owners of clinic A and of clinic B, each signed in and each from an address of its own,
 * for the tests that check one clinic's pages never show the other's data.
 */
export async function signedInOwners(app: FastifyInstance): Promise<{ owner: Client; ownerB: Client }> {
  const owner = new Client(app);
  await owner.signIn(EMAILS.ownerA);
  const ownerB = new Client(app, '203.0.113.8');
  await ownerB.signIn(EMAILS.ownerB);
  return { owner, ownerB };
}

/** The just-created key shown on the page, if any. */
export function shownKey(html: string): string | null {
  return /id="new-key" value="([^"]+)"/.exec(html)?.[1] ?? null;
}
