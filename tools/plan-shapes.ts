// The query shapes of the endpoints whose plans must be served by indexes, shared by
// test/db/plans.test.ts (which asserts them) and scripts/explain.ts (which prints them).
import { ALL_SCOPE_BITS } from '../src/domain/scopes.js';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../src/db/connect.js';
import type { DB } from '../src/db/schema.js';
import { SEARCH_TUNING, type SearchTuning } from '../src/services/clientas-search/plan.js';
import { ClientasSearch } from '../src/services/clientas-search/search.js';
import { dataVersions } from '../src/repos/clinics.js';
import { listEtag, recordEtag } from '../src/services/conditional.js';
import { feedPage, planFeed } from '../src/services/feed.js';
import { importJsonLines } from '../src/services/import.js';
import { citasPage, clientasPage, llamadasPage, type ClinicContext } from '../src/services/listings.js';
import { citaById, clientaById, llamadaById } from '../src/services/records.js';

export interface PlanShape {
  name: string;
  /** `clientas`: a client search with the shape's tuning and no kept counts yet (searchFor). */
  run(db: Kysely<DB>, ctx: ClinicContext, nowMs: number, clientas: ClientasSearch): Promise<unknown>;
  /** Search thresholds for this shape (the substring-index path needs a walk that gives up). */
  tuning?: Partial<SearchTuning>;
}

/** The client search a shape runs with: its tuning over the defaults, nothing kept yet. */
export function searchFor(shape: PlanShape): ClientasSearch {
  return new ClientasSearch({ tuning: { ...SEARCH_TUNING, ...shape.tuning } });
}

/** Events for the feed's shapes (a demo clinic has none): 20 changes of the clinic's records, made by an import. */
export async function seedFeedEvents(database: Database, ctx: ClinicContext, nowMs: number): Promise<void> {
  const some = await citasPage(database.db, ctx, { desde: '2000-01-01', hasta: '2199-12-31', limit: 20 }, nowMs);
  const lines = some.citas.map((c, i) =>
    JSON.stringify(
      i % 2
        ? { type: 'cita', id: c.id, deleted: true }
        : {
            type: 'llamada',
            id: randomUUID(),
            fecha_hora: c.fecha_hora,
            telefono_caller: c.telefono,
            duracion_segundos: 30,
            resultado: 'info',
            idioma: 'es',
            created_at: c.fecha_hora,
          },
    ),
  );
  const res = await importJsonLines(database, ctx.clinicId, Readable.from([lines.join('\n')]), { now: () => nowMs });
  if (!res.ok) throw new Error(`seedFeedEvents: ${JSON.stringify(res.errors.slice(0, 3))}`);
}

/** The id of one of the clinic's records of `table` (a primary-key prefix read), for the single-record shapes. */
async function someId(db: Kysely<DB>, ctx: ClinicContext, table: 'citas' | 'clientas' | 'llamadas'): Promise<string> {
  const row = await db.selectFrom(table).select('id').where('clinic_id', '=', ctx.clinicId).limit(1).executeTakeFirstOrThrow();
  return row.id;
}

export const PLAN_SHAPES: PlanShape[] = [
  { name: 'citas (default range)', run: (db, ctx, now) => citasPage(db, ctx, {}, now) },
  { name: 'citas estado=confirmada', run: (db, ctx, now) => citasPage(db, ctx, { estado: 'confirmada' }, now) },
  { name: 'citas page 3', run: (db, ctx, now) => citasPage(db, ctx, { limit: 50, offset: 100 }, now) },
  { name: 'llamadas (default: last 7 days)', run: (db, ctx, now) => llamadasPage(db, ctx, {}, now) },
  { name: 'llamadas resultado=agendada', run: (db, ctx, now) => llamadasPage(db, ctx, { resultado: 'agendada' }, now) },
  {
    name: 'llamadas desde+hasta',
    run: (db, ctx, now) => {
      const today = new Date(now).toISOString().slice(0, 10);
      const month = new Date(now - 30 * 86_400_000).toISOString().slice(0, 10);
      return llamadasPage(db, ctx, { desde: month, hasta: today }, now);
    },
  },
  { name: 'clientas (default)', run: (db, ctx, now, s) => clientasPage(db, ctx, {}, now, s) },
  { name: 'clientas vip=true', run: (db, ctx, now, s) => clientasPage(db, ctx, { vip: 'true' }, now, s) },
  {
    name: 'clientas q=mar (common: name walk)',
    run: (db, ctx, now, s) => clientasPage(db, ctx, { q: 'mar' }, now, s),
    // On a demo clinic of hundreds, even "mar" is rare enough for SQLite to read its FTS5 matches.
    tuning: { ftsPageCost: 1e6, ftsCountCost: 1e6 },
  },
  {
    name: 'clientas q=garcia lopez (rare: substring index)',
    run: (db, ctx, now, s) => clientasPage(db, ctx, { q: 'garcia lopez' }, now, s),
    tuning: { walkMinBudget: 50, pgWalkMinBudget: 50, walkBudgetPerRow: 1 },
  },
  {
    name: 'clientas q=600 12 (phone digits: substring index)',
    run: (db, ctx, now, s) => clientasPage(db, ctx, { q: '600 12' }, now, s),
    tuning: { walkMinBudget: 50, pgWalkMinBudget: 50, walkBudgetPerRow: 1 },
  },
  {
    // The first request counts (and keeps) where the matches lie; the second is a range seek.
    name: 'clientas q=maria, kept counts (names that start with it: range seek)',
    run: async (db, ctx, now, s) => {
      await clientasPage(db, ctx, { q: 'maria' }, now, s);
      return clientasPage(db, ctx, { q: 'maria', limit: 5 }, now, s);
    },
    // On a demo clinic of hundreds the term is rare enough for its candidates: no counts are kept.
    tuning: { walkMinBudget: 50, pgWalkMinBudget: 50 },
  },
  { name: 'clientas q=ez vip=true (short: name walk)', run: (db, ctx, now, s) => clientasPage(db, ctx, { q: 'ez', vip: 'true' }, now, s) },
  // updated_since: the (clinic_id, updated_at, id) index in its order, the other filters on its rows.
  { name: 'citas updated_since', run: (db, ctx, now) => citasPage(db, ctx, { updated_since: '2000-01-01T00:00:00Z' }, now) },
  {
    name: 'citas updated_since desde estado',
    run: (db, ctx, now) => citasPage(db, ctx, { updated_since: '2000-01-01T00:00:00Z', desde: '2026-03-01', estado: 'pendiente' }, now),
  },
  {
    name: 'clientas updated_since vip',
    run: (db, ctx, now, s) => clientasPage(db, ctx, { updated_since: '2000-01-01T00:00:00Z', vip: 'true' }, now, s),
  },
  { name: 'llamadas updated_since', run: (db, ctx, now) => llamadasPage(db, ctx, { updated_since: '2000-01-01T00:00:00Z' }, now) },
  // The change feed (the clinic needs events: the plan test and npm run explain import some first).
  {
    name: 'eventos page',
    run: async (db, ctx) => feedPage(db, ctx, planFeed({ limit: 500 }, ctx.clinicId, ALL_SCOPE_BITS), await dataVersions(db, ctx.clinicId)),
  },
  {
    name: 'eventos tipo',
    run: async (db, ctx) =>
      feedPage(
        db,
        ctx,
        planFeed({ tipo: 'cita.actualizada,cita.eliminada' }, ctx.clinicId, ALL_SCOPE_BITS),
        await dataVersions(db, ctx.clinicId),
      ),
  },
  // What a conditional request reads: the clinic's versions, and for clientas the next cita start.
  { name: 'ETag of clientas', run: (db, ctx, now) => listEtag(db, ctx, 'clientas', '', now) },
  // One record by its id (GET /api/v1/citas/{id} ...): primary-key reads; a clienta's tag seeks her next cita.
  { name: 'cita by id', run: async (db, ctx) => citaById(db, ctx, await someId(db, ctx, 'citas'), true) },
  { name: 'clienta by id', run: async (db, ctx, now) => clientaById(db, ctx, await someId(db, ctx, 'clientas'), now, true) },
  { name: 'llamada by id', run: async (db, ctx) => llamadaById(db, ctx, await someId(db, ctx, 'llamadas'), true) },
  { name: 'ETag of a clienta', run: async (db, ctx, now) => recordEtag(db, ctx, 'clientas', await someId(db, ctx, 'clientas'), now, true) },
];
