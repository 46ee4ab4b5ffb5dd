// Alerts when webhook deliveries fail: an endpoint failing without a break for
// WEBHOOK_ALERT_AFTER_MIN minutes, then disabled at the end of its retry window, is one incident;
// the clinic's owners get one e-mail at each of those two moments and one when deliveries succeed
// again, each in the language of their last dashboard session, through SMTP_URL (unset: no
// e-mail; the dashboard's banner shows the incident either way). The e-mails go through an
// outbox, sent by the maintenance pass (never by the delivery worker, so a failing mail server
// never holds a delivery): a failed send is logged and retried with back-off for about a day.
import { randomUUID } from 'node:crypto';
import type { Transporter } from 'nodemailer';
import { whenWritable, type Database } from '../../db/connect.js';
import { getClinic } from '../../repos/clinics.js';
import {
  advanceAlertStages,
  claimAlertMail,
  dueAlertMails,
  endpointsInIncident,
  finishAlertMail,
  ownersWithLanguage,
  pruneAlertMails,
  queueAlertMails,
  type AlertChange,
} from '../../repos/webhook-alerts.js';
import { getWebhookEndpoint } from '../../repos/webhooks.js';
import { formatTimestamp } from '../../time.js';
import { BACKGROUND_WRITE_WAIT_MS } from '../write-lock.js';
import { backoffCeiling, type BackoffPolicy } from './backoff.js';

/** An attempt's send may take this long before it counts as failed. */
const SEND_TIMEOUT_MS = 20_000;
/** A refused e-mail is tried again after 1, 2, 4 ... minutes, at most an hour apart (no jitter: one outbox per clinic). */
const MAIL_RETRY: BackoffPolicy = { baseMs: 60_000, maxMs: 3_600_000 };
/** About a day of retries, then the e-mail is given up (and logged). */
const MAX_ATTEMPTS = 30;
const KEEP_SENT_MS = 30 * 86_400_000;

export type AlertKind = AlertChange['kind'];
type Lang = 'es' | 'en';

export interface AlertOptions {
  /** WEBHOOK_ALERT_AFTER_MIN */
  alertAfterMin: number;
  smtpUrl: string | null;
  smtpFrom: string | null;
  now: () => number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** One e-mail's subject and text: pure, per language. */
export function alertMail(
  kind: AlertKind,
  lang: Lang,
  m: { clinic: string; url: string; since: string | null; lastError: string | null },
): { subject: string; text: string } {
  const error = m.lastError ?? '?';
  if (lang === 'en') {
    const where = 'Dashboard: Settings > API > Webhooks, where each attempt is logged.';
    if (kind === 'failing')
      return {
        subject: `Webhook deliveries are failing: ${m.url}`,
        text:
          `Deliveries of ${m.clinic}'s events to ${m.url} have failed since ${m.since ?? '?'} (last: ${error}). ` +
          `They are retried for 3 days; then the endpoint is disabled.\n\n${where}`,
      };
    if (kind === 'disabled')
      return {
        subject: `Webhook endpoint disabled: ${m.url}`,
        text:
          `Deliveries of ${m.clinic}'s events to ${m.url} failed for 3 days (last: ${error}), so the endpoint was disabled. ` +
          `Events wait: fix the receiver and enable it to resume where it stopped.\n\n${where}`,
      };
    return {
      subject: `Webhook deliveries work again: ${m.url}`,
      text: `${m.url} accepts ${m.clinic}'s events again.\n\n${where}`,
    };
  }
  const where = 'Panel: Ajustes > API > Webhooks, donde consta cada intento.';
  if (kind === 'failing')
    return {
      subject: `Fallan los envíos del webhook: ${m.url}`,
      text:
        `Los envíos de los eventos de ${m.clinic} a ${m.url} fallan desde ${m.since ?? '?'} (último: ${error}). ` +
        `Se reintentan durante 3 días; después el webhook se desactiva.\n\n${where}`,
    };
  if (kind === 'disabled')
    return {
      subject: `Webhook desactivado: ${m.url}`,
      text:
        `Los envíos de los eventos de ${m.clinic} a ${m.url} fallaron durante 3 días (último: ${error}) y el webhook se desactivó. ` +
        `Los eventos esperan: arregla el programa que recibe y actívalo para seguir donde se quedó.\n\n${where}`,
    };
  return {
    subject: `Los envíos del webhook funcionan de nuevo: ${m.url}`,
    text: `${m.url} vuelve a aceptar los eventos de ${m.clinic}.\n\n${where}`,
  };
}

export class WebhookAlerts {
  private transport: Promise<Transporter> | null = null;

  constructor(
    private readonly database: Database,
    private readonly opts: AlertOptions,
  ) {}

  /** The clinic's endpoints in an incident, for the dashboard's banner. */
  incidents(clinicId: string) {
    return endpointsInIncident(this.database.db, clinicId);
  }

  /** Moves the endpoints' incident stages, and queues the e-mails they call for (with SMTP_URL set). */
  async detect(): Promise<AlertChange[]> {
    const nowMs = this.opts.now();
    const mail = this.opts.smtpUrl !== null;
    return whenWritable(
      () =>
        this.database.writeTransaction(async (trx) => {
          const changes = await advanceAlertStages(trx, nowMs, nowMs - this.opts.alertAfterMin * 60_000);
          if (mail)
            await queueAlertMails(
              trx,
              changes.map((c) => ({ id: randomUUID(), clinic_id: c.clinic_id, endpoint_id: c.id, kind: c.kind })),
              nowMs,
            );
          return changes;
        }),
      BACKGROUND_WRITE_WAIT_MS,
    );
  }

  /** Sends the due e-mails; returns how many went. */
  async send(): Promise<number> {
    if (this.opts.smtpUrl === null) return 0;
    const db = this.database.db;
    const nowMs = this.opts.now();
    const write = <T>(f: () => Promise<T>) => whenWritable(f, BACKGROUND_WRITE_WAIT_MS);
    let sent = 0;
    for (const m of await dueAlertMails(db, nowMs, 20)) {
      if (!(await write(() => claimAlertMail(db, m.id, nowMs, nowMs + 2 * SEND_TIMEOUT_MS)))) continue;
      const attempts = m.attempts + 1;
      try {
        await this.deliver(m);
        await write(() => finishAlertMail(db, m.id, { sentMs: this.opts.now(), attempts, nextMs: nowMs, lastError: null }));
        sent++;
      } catch (err) {
        const lastError = err instanceof Error ? err.message.slice(0, 300) : String(err);
        const giveUp = attempts >= MAX_ATTEMPTS;
        const nextMs = nowMs + backoffCeiling(MAIL_RETRY, attempts);
        (giveUp ? this.opts.log.error : this.opts.log.warn).call(
          this.opts.log,
          { err, clinic: m.clinic_id, endpoint: m.endpoint_id, kind: m.kind, attempts },
          giveUp ? 'webhooks: an alert e-mail could not be sent; given up' : 'webhooks: an alert e-mail could not be sent; retried later',
        );
        await write(() => finishAlertMail(db, m.id, { sentMs: giveUp ? nowMs : null, attempts, nextMs, lastError }));
      }
    }
    await write(() => pruneAlertMails(db, nowMs - KEEP_SENT_MS));
    return sent;
  }

  /** One e-mail per owner, each in their language. */
  private async deliver(m: { clinic_id: string; endpoint_id: string; kind: string; created_ms: number }): Promise<void> {
    const db = this.database.db;
    const [clinic, endpoint, owners] = await Promise.all([
      getClinic(db, m.clinic_id),
      getWebhookEndpoint(db, m.clinic_id, m.endpoint_id),
      ownersWithLanguage(db, m.clinic_id),
    ]);
    if (!clinic || owners.length === 0) return;
    const since = endpoint?.failing_since_ms ?? null;
    const transport = await this.transporter();
    for (const o of owners) {
      const lang: Lang = o.lang === 'en' ? 'en' : o.lang === 'es' ? 'es' : clinic.language === 'en' ? 'en' : 'es';
      const { subject, text } = alertMail(m.kind as AlertKind, lang, {
        clinic: clinic.name,
        url: endpoint?.url ?? m.endpoint_id,
        since: since === null ? null : formatTimestamp(Math.floor(since / 1000), clinic.timezone),
        lastError: endpoint?.last_error ?? null,
      });
      await transport.sendMail({ from: this.from(), to: o.email, subject, text });
    }
  }

  private from(): string {
    if (this.opts.smtpFrom !== null) return this.opts.smtpFrom;
    return `Clinic API <clinic-api@${new URL(this.opts.smtpUrl!).hostname}>`;
  }

  private transporter(): Promise<Transporter> {
    // nodemailer is loaded only when there is mail to send.
    this.transport ??= import('nodemailer').then((nodemailer) =>
      nodemailer.default.createTransport({
        url: this.opts.smtpUrl!,
        connectionTimeout: SEND_TIMEOUT_MS / 2,
        greetingTimeout: SEND_TIMEOUT_MS / 2,
        socketTimeout: SEND_TIMEOUT_MS,
      } as Parameters<typeof nodemailer.default.createTransport>[0]),
    );
    return this.transport;
  }

  close(): void {
    void this.transport?.then((t) => t.close()).catch(() => {});
  }
}
