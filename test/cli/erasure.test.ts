// `clinic-api clientas erase` against a real server process on each database: after the erasure
// nothing the service returns (the feed from the start, every list as JSON and CSV, single records,
// a search, a real webhook receiver with deliveries pending at erase time) holds her name, phone
// or email; the other clienta and the other clinic are untouched; a re-run has nothing left; an
// unknown clinic or clienta exits 2 and changes nothing.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dialects, newPgDatabaseUrl } from '../helpers/db.js';
import { TEST_PEPPER } from '../helpers/runtime.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { until } from '../helpers/wait.js';
import { runCli, tempDirs } from './in-process.js';

const dirs = tempDirs('clinic-erasure-');
afterAll(() => dirs.cleanup());

const id = (k: number, n: number) => `0e00000${k}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const HER = { id: id(1, 1), nombre: 'Wilhelmina Erasmusdottir', telefono: '+34611000111', email: 'wilhelmina.e@example.org' };
/** Her phone before she changed it (kept in her first event). */
const HER_OLD_PHONE = '+34611000999';
const OTHER = { id: id(1, 2), nombre: 'Petronila Quintanar', telefono: '+34622000222' };
/** What must not be found anywhere after the erasure (the phones also as digits, as CSV or a search might show them). */
const NEEDLES = [HER.nombre, 'Wilhelmina', HER.telefono, HER_OLD_PHONE, HER.email, '611000111', '611000999'];

const clienta = (c: { id: string; nombre: string; telefono: string; email?: string }) => ({
  type: 'clienta',
  ...c,
  vip: false,
  cliente_desde: '2025-02-01',
  created_at: '2025-02-01T10:00:00+01:00',
});
const cita = (n: number, clientaId: string, notas: string | null = null) => ({
  type: 'cita',
  id: id(2, n),
  clienta_id: clientaId,
  fecha_hora: '2026-03-30T10:00:00+02:00',
  servicio: 'Manicura',
  duracion_min: 45,
  precio: 25,
  estado: 'confirmada',
  profesional_nombre: 'Elena Ruiz',
  sede_nombre: 'Sede Norte',
  notas,
  created_at: '2026-03-01T09:00:00+01:00',
});
const llamada = (n: number, clientaId: string | null, telefono: string) => ({
  type: 'llamada',
  id: id(3, n),
  ...(clientaId ? { clienta_id: clientaId } : {}),
  fecha_hora: '2026-03-27T18:00:00+01:00',
  telefono_caller: telefono,
  duracion_segundos: 40,
  resultado: 'info',
  idioma: 'es',
  created_at: '2026-03-27T18:00:40+01:00',
});
const jsonl = (lines: object[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';

/** Every text the API answers for the clinic's key: the feed from the start, the lists (JSON and CSV), a search, single records. */
async function everythingServed(server: ServerProcess, key: string): Promise<{ text: string; status: Record<string, number> }> {
  const get = async (p: string, accept = 'application/json') => {
    const res = await fetch(`${server.baseUrl}${p}`, { headers: { authorization: `Bearer ${key}`, accept } });
    return { status: res.status, text: await res.text() };
  };
  const texts: string[] = [];
  const status: Record<string, number> = {};
  for (let cursor: string | null = null; ;) {
    const page = await get(`/api/v1/eventos?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.status).toBe(200);
    texts.push(page.text);
    const body = JSON.parse(page.text) as { next_cursor: string; has_more: boolean };
    if (!body.has_more) break;
    cursor = body.next_cursor;
  }
  const lists = [
    '/api/v1/clientas?limit=500',
    '/api/v1/clientas?q=wilhelmina',
    '/api/v1/clientas?q=611000111',
    '/api/v1/citas?desde=2000-01-01&hasta=2100-12-31&limit=500',
    '/api/v1/llamadas?desde=2000-01-01&limit=500',
  ];
  for (const p of lists) {
    for (const accept of ['application/json', 'text/csv']) {
      const r = await get(p, accept);
      expect(r.status, p).toBe(200);
      texts.push(r.text);
    }
  }
  for (const p of ['clientas', 'citas', 'llamadas'].flatMap((t) =>
    [1, 2, 3, 4].map((n) => `/api/v1/${t}/${id(t === 'clientas' ? 1 : t === 'citas' ? 2 : 3, n)}`),
  )) {
    const r = await get(p);
    status[p] = r.status;
    texts.push(r.text);
  }
  return { text: texts.join('\n'), status };
}

/** The dashboard's pages an owner of the clinic sees (API keys, webhooks, an endpoint's deliveries), signed in through the form. */
async function dashboardPages(server: ServerProcess, email: string, password: string, endpointId: string): Promise<string> {
  const cookies = new Map<string, string>();
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
  };
  const cookie = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const signIn = await fetch(`${server.baseUrl}/dashboard/sign-in`);
  keep(signIn);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await signIn.text())![1]!;
  const posted = await fetch(`${server.baseUrl}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie() },
    body: new URLSearchParams({ _csrf: csrf, email, password }).toString(),
  });
  await posted.arrayBuffer();
  expect(posted.status).toBe(303);
  keep(posted);
  const texts: string[] = [];
  for (const p of ['/dashboard/settings/api', '/dashboard/settings/api/webhooks', `/dashboard/settings/api/webhooks/${endpointId}`]) {
    const res = await fetch(`${server.baseUrl}${p}`, { redirect: 'manual', headers: { cookie: cookie() } });
    expect(res.status, p).toBe(200);
    texts.push(await res.text());
  }
  return texts.join('\n');
}

const found = (text: string) => NEEDLES.filter((n) => text.toLowerCase().includes(n.toLowerCase()));

describe.each(dialects())('clientas erase (%s)', (dialect) => {
  let server: ServerProcess | undefined;
  let receiver: Receiver | undefined;
  afterAll(async () => {
    await server?.kill();
    await receiver?.close();
  });

  it('removes her from everything the service returns, pending webhook deliveries included; the rest stays', async () => {
    const dataDir = dirs.make();
    const env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE: 'true' };
    if (dialect === 'postgres') Object.assign(env, { DATABASE_URL: await newPgDatabaseUrl(), API_KEY_PEPPER: TEST_PEPPER });
    const cli = (argv: string[], stdin?: string) => runCli(argv, { dataDir, env, stdin });
    const ok = async (argv: string[], stdin?: string) => {
      const r = await cli(argv, stdin);
      expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
      return r.stdout.trim();
    };

    const clinicA = await ok(['clinics', 'create', '--name', 'Centro Alba', '--plan', 'premium']);
    const clinicB = await ok(['clinics', 'create', '--name', 'Centro Bruma', '--plan', 'premium']);
    const keyA = await ok(['keys', 'create', '--clinic', clinicA, '--name', 'test']);
    const keyB = await ok(['keys', 'create', '--clinic', clinicB, '--name', 'test']);
    // The first delivery is held open until the erasure is done: the worker has read the page of
    // events after it (hers among them) before the erasure, and must not send them as it read them.
    // The endpoint waits, disabled, until just before the erasure: held longer than its time limit
    // (10 s, on a busy machine), the first delivery would be cut and sent again.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    receiver = await startReceiver('/hook', (_r, n) => (n === 1 ? { status: 200, after: released } : { status: 200 }));
    const endpointId = (await ok(['webhooks', 'create', '--clinic', clinicA, '--url', receiver.url])).split('\n')[0]!;
    await ok(['webhooks', 'disable', endpointId]);
    const OWNER = { email: 'owner@alba.example', password: 'a-long-password-1234' };
    await ok(
      ['users', 'create', '--clinic', clinicA, '--email', OWNER.email, '--role', 'owner', '--password-stdin'],
      `${OWNER.password}\n`,
    );

    const file = path.join(dataDir, 'a.jsonl');
    fs.writeFileSync(
      file,
      jsonl([
        clienta({ ...HER, telefono: HER_OLD_PHONE }),
        clienta(OTHER),
        cita(1, HER.id, 'Alérgica al látex'),
        cita(2, OTHER.id),
        llamada(1, HER.id, HER_OLD_PHONE),
        llamada(2, null, HER_OLD_PHONE),
        llamada(3, OTHER.id, OTHER.telefono),
      ]),
    );
    await ok(['import', '--clinic', clinicA, file]);
    // She changes her phone: her citas' events show the new one; the old one stays in earlier events.
    await ok(['import', '--clinic', clinicA, '-'], jsonl([clienta(HER)]));
    // Clinic B has a clienta with the same name and phone: another clinic's data is not touched.
    await ok(['import', '--clinic', clinicB, '-'], jsonl([clienta(HER), cita(1, HER.id)]));

    server = await startServerProcess({
      env: { DATA_DIR: dataDir, WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_RETRY_MAX_MS: '100', WEBHOOK_POLL_MS: '50', ...env },
      key: keyA,
    });
    // Before: she is everywhere (and the lists' pages are now in the page cache).
    const before = await everythingServed(server, keyA);
    expect(found(before.text)).toEqual(NEEDLES);

    const refused = await cli(['clientas', 'erase', '--clinic', clinicA, id(1, 9)]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/has no clienta 0e000001-0000-4000-8000-000000000009.*nothing was changed/);
    const noClinic = await cli(['clientas', 'erase', '--clinic', id(9, 9), HER.id]);
    expect(noClinic.code).toBe(2);
    expect(noClinic.stderr).toMatch(/no clinic with id/);
    const withoutRequestIds = (t: string) => t.replace(/"request_id":"[^"]*"/g, '');
    expect(withoutRequestIds((await everythingServed(server, keyA)).text)).toBe(withoutRequestIds(before.text));
    await ok(['webhooks', 'enable', endpointId]);
    await until(() => receiver!.received.length > 0, 'the first delivery, held open');

    const r = await cli(['--json', 'clientas', 'erase', '--clinic', clinicA, HER.id]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ changed: true, deleted: { clientas: 1, citas: 1, llamadas: 2 } });
    // Her creation, her update, her cita's creation and its update (the new phone), her two calls' creations.
    expect(out.events_scrubbed).toBe(6);
    expect(out.pending_deliveries_scrubbed).toBeGreaterThanOrEqual(6);
    release();
    // The feed's head: every event delivered, in order, from the first pending one.
    const head = await everythingServed(server, keyA);
    const feed = JSON.parse(head.text.split('\n')[0]!) as { eventos: { id: string }[] };
    const lastId = feed.eventos[feed.eventos.length - 1]!.id;
    await until(() => receiver!.answered.some((d) => d.id === lastId), 'every event delivered after the erasure');

    expect(found(head.text)).toEqual([]);
    // The dashboard: keys, webhooks, the endpoint's recent deliveries.
    expect(found(await dashboardPages(server, OWNER.email, OWNER.password, endpointId))).toEqual([]);
    expect(head.status[`/api/v1/clientas/${HER.id}`]).toBe(404);
    expect(head.status[`/api/v1/citas/${id(2, 1)}`]).toBe(404);
    expect(head.status[`/api/v1/llamadas/${id(3, 1)}`]).toBe(404);
    expect(head.status[`/api/v1/llamadas/${id(3, 2)}`]).toBe(404);
    // Every delivery but the one on the wire during the erasure (it held her data, sent before).
    expect(receiver.received.length).toBeGreaterThan(6);
    const delivered = receiver.received.slice(1).map((d) => d.body);
    expect(delivered.length).toBeGreaterThan(0);
    expect(found(delivered.join('\n'))).toEqual([]);
    // Her events are still there, reduced to her id; the other clienta, her cita and call stay as they were.
    expect(head.text).toContain(`{"id":"${HER.id}"}`);
    for (const s of [OTHER.nombre, OTHER.telefono]) expect(head.text).toContain(s);
    expect(head.status[`/api/v1/citas/${id(2, 2)}`]).toBe(200);
    expect(head.status[`/api/v1/llamadas/${id(3, 3)}`]).toBe(200);
    // The other clinic still has its own clienta of the same name and phone.
    const b = await everythingServed(server, keyB);
    for (const s of [HER.nombre, HER.telefono, HER.email]) expect(b.text).toContain(s);

    // Again: nothing left.
    const again = await cli(['clientas', 'erase', '--clinic', clinicA, HER.id]);
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe('nothing left to erase');
  }, 120_000);
});
