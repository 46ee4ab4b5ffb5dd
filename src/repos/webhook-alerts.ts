// The webhooks' alerts (migration 015): each endpoint's incident stage, the outbox of e-mails to
// the clinic's owners, and who those are. Run by the maintenance pass, across clinics; the
// banner's read names the clinic.
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { DB } from '../db/schema.js';

/**
 * Live endpoints only: a test endpoint (its clinic row a sandbox) has no incident. Its receiver is
 * an integrator's work in progress; an e-mail to the clinic's owners, or a banner on their pages,
 * would alarm them about nothing of theirs. Its failures are in its delivery log.
 */
const live = ({ not, exists, selectFrom }: ExpressionBuilder<DB, 'webhook_endpoints'>) =>
  not(
    exists(
      selectFrom('clinics as c').select('c.id').whereRef('c.id', '=', 'webhook_endpoints.clinic_id').where('c.sandbox_of', 'is not', null),
    ),
  );

export interface AlertChange {
  id: string;
  clinic_id: string;
  url: string;
  kind: 'failing' | 'disabled' | 'recovered';
}

/**
 * Every live clinic (the maintenance pass): moves each endpoint's alert stage and returns what changed:
 * failing continuously since `failingBeforeMs` (stage 0 -> 1), disabled after its retry window
 * (-> 2), delivering again after an incident (-> 0). Each is one conditional statement, so of two
 * processes running it at once only one sees a change.
 */
export async function advanceAlertStages(db: Kysely<DB>, nowMs: number, failingBeforeMs: number): Promise<AlertChange[]> {
  const failing = await db
    .updateTable('webhook_endpoints')
    .set({ alert_stage: 1, alert_since_ms: nowMs })
    .where('enabled', '=', 1)
    .where('alert_stage', '=', 0)
    .where('failing_since_ms', 'is not', null)
    .where('failing_since_ms', '<=', failingBeforeMs)
    .where(live)
    .returning(['id', 'clinic_id', 'url'])
    .execute();
  const disabled = await db
    .updateTable('webhook_endpoints')
    .set((eb) => ({ alert_stage: 2, alert_since_ms: eb.fn.coalesce('alert_since_ms', eb.val(nowMs)) }))
    .where('enabled', '=', 0)
    .where('disabled_reason', '=', 'failing')
    .where('alert_stage', '<', 2)
    .where(live)
    .returning(['id', 'clinic_id', 'url'])
    .execute();
  const recovered = await db
    .updateTable('webhook_endpoints')
    .set({ alert_stage: 0, alert_since_ms: null })
    .where('enabled', '=', 1)
    .where('alert_stage', '>', 0)
    .where('failing_since_ms', 'is', null)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('webhook_deliveries as d')
          .select('d.id')
          .whereRef('d.endpoint_id', '=', 'webhook_endpoints.id')
          .where('d.kind', '=', 'auto')
          .where('d.outcome', '=', 'delivered')
          .whereRef('d.at_ms', '>=', 'webhook_endpoints.alert_since_ms'),
      ),
    )
    .returning(['id', 'clinic_id', 'url'])
    .execute();
  return [
    ...failing.map((r) => ({ ...r, kind: 'failing' as const })),
    ...disabled.map((r) => ({ ...r, kind: 'disabled' as const })),
    ...recovered.map((r) => ({ ...r, kind: 'recovered' as const })),
  ];
}

/** The clinic's endpoints in an incident (alert stage above 0): the dashboard's banner. */
export async function endpointsInIncident(db: Kysely<DB>, clinicId: string) {
  return db
    .selectFrom('webhook_endpoints')
    .select(['id', 'url', 'alert_stage', 'alert_since_ms'])
    .where('clinic_id', '=', clinicId)
    .where('alert_stage', '>', 0)
    .orderBy('created_at')
    .execute();
}

export async function queueAlertMails(
  db: Kysely<DB>,
  rows: { id: string; clinic_id: string; endpoint_id: string; kind: string }[],
  nowMs: number,
) {
  if (rows.length === 0) return;
  await db
    .insertInto('webhook_alert_mails')
    .values(rows.map((r) => ({ ...r, created_ms: nowMs, attempts: 0, next_ms: nowMs, sent_ms: null, last_error: null })))
    .execute();
}

/** Every clinic: e-mails due to be (re)tried, oldest first. */
export async function dueAlertMails(db: Kysely<DB>, nowMs: number, limit: number) {
  const rows = await db
    .selectFrom('webhook_alert_mails')
    .selectAll()
    .where('sent_ms', 'is', null)
    .where('next_ms', '<=', nowMs)
    .orderBy('created_ms')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, attempts: Number(r.attempts), created_ms: Number(r.created_ms), next_ms: Number(r.next_ms) }));
}

/** Takes a due e-mail for this attempt (pushing it to `untilMs`); false when another process took it. */
export async function claimAlertMail(db: Kysely<DB>, id: string, nowMs: number, untilMs: number): Promise<boolean> {
  const res = await db
    .updateTable('webhook_alert_mails')
    .set({ next_ms: untilMs })
    .where('id', '=', id)
    .where('sent_ms', 'is', null)
    .where('next_ms', '<=', nowMs)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function finishAlertMail(
  db: Kysely<DB>,
  id: string,
  f: { sentMs: number | null; attempts: number; nextMs: number; lastError: string | null },
): Promise<void> {
  await db
    .updateTable('webhook_alert_mails')
    .set({ sent_ms: f.sentMs, attempts: f.attempts, next_ms: f.nextMs, last_error: f.lastError })
    .where('id', '=', id)
    .execute();
}

/** Every clinic (retention): e-mails done (sent or given up) before `beforeMs`. */
export async function pruneAlertMails(db: Kysely<DB>, beforeMs: number): Promise<void> {
  await db.deleteFrom('webhook_alert_mails').where('sent_ms', 'is not', null).where('sent_ms', '<', beforeMs).execute();
}

/** The clinic's owners, each with the language of the dashboard session they used last (null: none). */
export async function ownersWithLanguage(db: Kysely<DB>, clinicId: string): Promise<{ email: string; lang: string | null }[]> {
  const rows = await db
    .selectFrom('users as u')
    .select((eb) => [
      'u.email',
      eb
        .selectFrom('dashboard_sessions as s')
        .select('s.lang')
        .whereRef('s.user_id', '=', 'u.id')
        .where('s.lang', 'is not', null)
        .orderBy('s.last_seen_at', 'desc')
        .limit(1)
        .as('lang'),
    ])
    .where('u.clinic_id', '=', clinicId)
    .where('u.role', '=', 'owner')
    .orderBy('u.email')
    .execute();
  return rows.map((r) => ({ email: r.email, lang: r.lang ?? null }));
}
