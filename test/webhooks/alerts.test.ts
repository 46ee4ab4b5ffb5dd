// Delivery alerts, in process on both databases, with a real SMTP server (smtp-server) and a real
// receiver on 127.0.0.1: an endpoint failing for WEBHOOK_ALERT_AFTER_MIN sends one e-mail to each
// owner in their dashboard language (and nothing more while the incident lasts), disabling sends
// one more, the recovery one; the dashboard shows a banner on every page meanwhile. A mail server
// that refuses is retried, and never holds a delivery.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/services/accounts.js';
import { DISABLE_AFTER_MS } from '../../src/services/webhooks/backoff.js';
import { buildTestApp, seedRecords, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { clientaRecord } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { until } from '../helpers/wait.js';

interface Mail {
  from: string;
  to: string[];
  user: string | undefined;
  data: string;
}

/** A real SMTP server on 127.0.0.1 that takes mail with a user and password, or refuses all while `refuse` is set. */
async function startSmtp(): Promise<{ port: number; mails: Mail[]; refuse: { on: boolean }; close(): Promise<void> }> {
  const mails: Mail[] = [];
  const refuse = { on: false };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === 'alerts' && auth.password === 's3cret') cb(null, { user: 'alerts' });
      else cb(new Error('bad credentials'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (refuse.on) return cb(Object.assign(new Error('mailbox unavailable'), { responseCode: 451 }));
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: session.user,
          data: Buffer.concat(chunks).toString('utf8'),
        });
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, refuse, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const subjectOf = (m: Mail) => /^Subject: (.*)$/m.exec(m.data)?.[1] ?? '';

let n = 0;

describe.each(dialects())('delivery alerts on %s', (dialect) => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let receiver: Receiver;
  let accept = false;
  let es: { id: string };
  let en: { id: string };
  beforeAll(async () => {
    smtp = await startSmtp();
    receiver = await startReceiver('/hook', () => (accept ? { status: 200 } : { status: 503 }));
    t = await buildTestApp(dialect, {
      env: {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_POLL_MS: '10',
        WEBHOOK_TIMEOUT_MS: '400',
        WEBHOOK_LEASE_MS: '1400',
        WEBHOOK_RETRY_BASE_MS: '1000',
        WEBHOOK_RETRY_MAX_MS: '3600000',
        WEBHOOK_ALERT_AFTER_MIN: '30',
        SMTP_URL: `smtp://alerts:s3cret@127.0.0.1:${smtp.port}`,
        SMTP_FROM: 'Clinic API <alerts@clinic.test>',
      },
      admin: {},
    });
    es = await createUser(t.database.db, { clinicId: t.clinicA.id, email: 'duena@clinic.test', role: 'owner', password: 'x'.repeat(12) });
    en = await createUser(t.database.db, { clinicId: t.clinicA.id, email: 'owner@clinic.test', role: 'owner', password: 'x'.repeat(12) });
    await createUser(t.database.db, { clinicId: t.clinicA.id, email: 'staff@clinic.test', role: 'staff', password: 'x'.repeat(12) });
    await t.rt.sessions.create(es.id, 'es');
    await t.rt.sessions.create(en.id, 'en');
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
    await smtp.close();
  });

  async function newClienta() {
    const id = `0c00000d-0000-4000-8000-${String(++n).padStart(12, '0')}`;
    await seedRecords(t.database, t.clinicA, [clientaRecord(id, `Alert ${n}`, `+3463000${String(n).padStart(4, '0')}`)], t.clock.now);
  }

  /**
   * Lets the worker make the attempt `makeDue` makes due. Counted from before it: the worker's own
   * poll (and PostgreSQL's NOTIFY) may make that attempt while `makeDue` is still running, and
   * the next one is not due until the test moves the clock.
   */
  async function attempt(makeDue: () => unknown) {
    const before = receiver.received.length;
    await makeDue();
    t.app.webhookWorker.kick();
    await until(() => receiver.received.length > before, 'an attempt');
    await t.app.webhookWorker.idle();
  }

  it('mails the owners once when failing, once when disabled, once on recovery; the banner meanwhile', async () => {
    const { endpoint: e } = await t.app.webhooks.create({ clinicId: t.clinicA.id, url: receiver.url, eventTypes: null, createdBy: null });
    await t.app.webhookWorker.start();
    await attempt(newClienta);
    const pass = () => t.rt.webhookMaintenance.pass();
    // Failing, but not yet for 30 minutes: nothing.
    expect((await pass()).alerts).toEqual([]);
    expect(await t.app.webhooks.incidents(t.clinicA.id)).toEqual([]);

    await attempt(() => (t.clock.now += 31 * 60_000));
    const failing = await pass();
    expect(failing.alerts.map((a) => [a.id, a.kind])).toEqual([[e.id, 'failing']]);
    expect(failing.mailsSent).toBe(1);
    expect(smtp.mails).toHaveLength(2);
    const byTo = Object.fromEntries(smtp.mails.map((m) => [m.to[0], m]));
    expect(Object.keys(byTo).sort()).toEqual(['duena@clinic.test', 'owner@clinic.test']);
    expect(subjectOf(byTo['owner@clinic.test']!)).toBe(`Webhook deliveries are failing: ${receiver.url}`);
    expect(subjectOf(byTo['duena@clinic.test']!)).toMatch(/^=\?UTF-8\?|^Fallan los env/);
    expect(byTo['duena@clinic.test']!.data).toMatch(/Cl=C3=ADnica Uno|Clínica Uno/);
    expect(smtp.mails.every((m) => m.user === 'alerts' && m.from === 'alerts@clinic.test')).toBe(true);
    // The banner, on every page of the dashboard, for the clinic's users.
    const token = await t.rt.sessions.create(
      (await t.database.db.selectFrom('users').select('id').where('email', '=', 'staff@clinic.test').executeTakeFirstOrThrow()).id,
      'en',
    );
    const page = async (path: string) => (await t.app.inject({ method: 'GET', url: path, cookies: { clinic_session: token } })).body;
    for (const path of ['/dashboard/settings/api', '/dashboard/settings/api/webhooks', `/dashboard/settings/api/webhooks/${e.id}`])
      expect(await page(path), path).toContain('id="webhook-incident"');

    // Still failing: no second e-mail.
    await attempt(() => (t.clock.now += 60 * 60_000));
    expect((await pass()).alerts).toEqual([]);
    expect(smtp.mails).toHaveLength(2);

    // Disabled at the end of the retry window: one more each (the owners' sessions of days ago
    // have ended: they used the dashboard since, each in their language).
    await attempt(async () => {
      t.clock.now += DISABLE_AFTER_MS;
      await t.rt.sessions.create(es.id, 'es');
      await t.rt.sessions.create(en.id, 'en');
    });
    expect((await t.app.webhooks.get(t.clinicA.id, e.id))!.enabled).toBe(0);
    expect((await pass()).alerts.map((a) => a.kind)).toEqual(['disabled']);
    expect(smtp.mails.map(subjectOf).filter((s) => s.startsWith('Webhook endpoint disabled'))).toHaveLength(1);
    expect(smtp.mails).toHaveLength(4);

    // Enabled again, and delivered: recovery, once; the banner goes.
    accept = true;
    await attempt(() => t.app.webhooks.setEnabled(t.clinicA.id, e.id, true));
    expect((await pass()).alerts.map((a) => a.kind)).toEqual(['recovered']);
    expect(smtp.mails).toHaveLength(6);
    expect(smtp.mails.map(subjectOf).filter((s) => s.startsWith('Webhook deliveries work again'))).toHaveLength(1);
    expect(await t.app.webhooks.incidents(t.clinicA.id)).toEqual([]);
    expect(await page('/dashboard/settings/api')).not.toContain('id="webhook-incident"');
    expect((await pass()).alerts).toEqual([]);
    await t.app.webhooks.delete(t.clinicA.id, e.id);
  });

  it('retries an e-mail the mail server refused, and deliveries go on meanwhile', async () => {
    accept = false;
    const { endpoint: e } = await t.app.webhooks.create({ clinicId: t.clinicA.id, url: receiver.url, eventTypes: null, createdBy: null });
    await attempt(newClienta);
    await attempt(() => (t.clock.now += 31 * 60_000));
    smtp.refuse.on = true;
    const before = smtp.mails.length;
    const refused = await t.rt.webhookMaintenance.pass();
    expect(refused.alerts.map((a) => a.kind)).toEqual(['failing']);
    expect(refused.mailsSent).toBe(0);
    const [queued] = await t.database.db.selectFrom('webhook_alert_mails').selectAll().where('sent_ms', 'is', null).execute();
    expect(queued).toMatchObject({ attempts: expect.anything(), last_error: expect.stringMatching(/451|mailbox unavailable/) });
    // Deliveries are not held by the mail server.
    accept = true;
    await attempt(() => (t.clock.now += 3_600_000));
    expect(receiver.received.at(-1)!.tipo).toBe('clienta.creada');
    // The next pass after its back-off sends it.
    smtp.refuse.on = false;
    t.clock.now += 120_000;
    const retried = await t.rt.webhookMaintenance.pass();
    expect(retried.mailsSent).toBeGreaterThanOrEqual(1);
    expect(smtp.mails.length).toBeGreaterThan(before);
    await t.app.webhooks.delete(t.clinicA.id, e.id);
  });

  it("a test endpoint failing as long alerts no one: its receiver is an integrator's, not the clinic's", async () => {
    accept = false;
    const sandboxId = await t.rt.sandboxes.ensure(t.clinicA.id);
    const { endpoint: e } = await t.app.webhooks.create({ clinicId: sandboxId, url: receiver.url, eventTypes: null, createdBy: null });
    const mails = smtp.mails.length;
    await attempt(() => t.rt.sandboxes.moveAll());
    await attempt(() => (t.clock.now += 31 * 60_000));
    const passed = await t.rt.webhookMaintenance.pass();
    expect(passed.alerts).toEqual([]);
    expect(smtp.mails).toHaveLength(mails);
    expect(await t.app.webhooks.incidents(t.clinicA.id)).toEqual([]);
    // Its failures are in its delivery log, as every attempt is.
    expect((await t.app.webhooks.get(sandboxId, e.id))!.failing_since_ms).not.toBeNull();
    await t.app.webhooks.delete(sandboxId, e.id);
  });
});
