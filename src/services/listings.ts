// The three list use-cases: defaults from the clinic's "today", ranges as whole local days,
// rows shaped exactly as the API fields. Input and output are the types of the API's schemas
// (domain/api-schemas.ts), so the use-case, the validator and the serializer cannot drift apart.
// Never imports Fastify.
//
// Each list is planned first (plan*: pure; the parameters with their defaults resolved against
// "now"), so that its ETag (conditional.ts) is made from the same resolved parameters as its page
// and a conditional request that matches costs no page at all.
//
// The plan also carries the view (`contact`: whether the key has contacto:read): it is part of the
// plan's key, so the two views of a page have different ETags and are kept apart by the page
// cache; without it the records' contact fields are null (contact-view.ts) and a search never
// matches phone digits.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { CITAS_DEFAULT_DAYS, type CitasQuery, type CitasResponse } from '../collections/citas.js';
import type { ClientasQuery, ClientasResponse } from '../collections/clientas.js';
import { DEFAULT_LIMITS } from '../collections/index.js';
import { LLAMADAS_DEFAULT_DAYS_BACK, type LlamadasQuery, type LlamadasResponse } from '../collections/llamadas.js';
import { DomainError } from '../errors.js';
import { countChangedCitas, countCitas, listChangedCitas, listCitas, type CitasChangedFilter, type CitasFilter } from '../repos/citas.js';
import { countChangedClientas, listChangedClientas } from '../repos/clientas-changed.js';
import type { ClientasFilter } from '../repos/clientas.js';
import {
  countChangedLlamadas,
  countLlamadas,
  listChangedLlamadas,
  listLlamadas,
  type LlamadasChangedFilter,
  type LlamadasFilter,
} from '../repos/llamadas.js';
import { addDays, dayRange, dayStart, parseTimestamp, todayIn } from '../time.js';
import type { ClientasSearch } from './clientas-search/search.js';
import { withoutContact } from './contact-view.js';
import { looksLikePhone, normalizeName, phoneDigits } from '../domain/normalize.js';
import { citaOut, clientaOut, llamadaOut, type ClinicContext } from './shape.js';

export type { ClinicContext };

/** A query parameter the schema accepts but the use-case cannot (the API answers 400 invalid_parameter). */
const invalidParam = (param: string, message: string) => new DomainError('invalid_input', message, { field: param });

/** updated_since as epoch seconds (the validator checked its form; this is the one parse). */
function since(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const t = parseTimestamp(raw);
  if (t === null)
    throw invalidParam('updated_since', 'updated_since must be an RFC 3339 timestamp with an offset or Z, e.g. 2026-03-01T10:30:00+01:00');
  return t;
}

/**
 * The days of an updated_since list: only those asked for (no default window), as the instants
 * that bound them in the clinic's zone; null where a side is open.
 */
function changedDays(desde: string | null, hasta: string | null, timezone: string): { start: number | null; end: number | null } {
  if (desde !== null && hasta !== null && desde > hasta) throw invalidParam('desde', `desde (${desde}) must not be after hasta (${hasta})`);
  return {
    start: desde === null ? null : dayStart(desde, timezone),
    end: hasta === null ? null : dayStart(addDays(hasta, 1), timezone),
  };
}

/**
 * A list's parameters with every default resolved: what its page depends on besides the data.
 * `key` is their canonical form, for the ETag.
 */
interface Planned {
  limit: number;
  offset: number;
  /** the key's view: with contact details (contacto:read) or without */
  contact: boolean;
  key: string;
}

export type CitasPlan = Planned &
  (
    | { changed: null; desde: string; hasta: string; filter: CitasFilter }
    | { changed: CitasChangedFilter; desde: string | null; hasta: string | null }
  );

export function planCitas(ctx: ClinicContext, q: CitasQuery, nowMs: number, contact: boolean): CitasPlan {
  const limit = q.limit ?? DEFAULT_LIMITS.citas;
  const offset = q.offset ?? 0;
  const estado = q.estado ?? null;
  const updatedSince = since(q.updated_since);
  if (updatedSince !== null) {
    const desde = q.desde ?? null;
    const hasta = q.hasta ?? null;
    const changed = { since: updatedSince, estado, ...changedDays(desde, hasta, ctx.timezone) };
    return {
      changed,
      desde,
      hasta,
      limit,
      offset,
      contact,
      key: JSON.stringify(['citas~', updatedSince, desde, hasta, estado, limit, offset, contact]),
    };
  }
  const today = todayIn(ctx.timezone, nowMs);
  const desde = q.desde ?? today;
  const hasta = q.hasta ?? addDays(today, CITAS_DEFAULT_DAYS);
  if (desde > hasta) {
    const why = q.hasta === undefined ? ` (hasta defaults to today + ${CITAS_DEFAULT_DAYS} days, ${hasta}; send hasta as well)` : '';
    throw invalidParam(q.desde !== undefined ? 'desde' : 'hasta', `desde (${desde}) must not be after hasta (${hasta})${why}`);
  }
  const filter = { ...dayRange(desde, hasta, ctx.timezone), desde, hasta, estado };
  // The resolved days are in the key: a default window moves with the clinic's today.
  return {
    changed: null,
    desde,
    hasta,
    filter,
    limit,
    offset,
    contact,
    key: JSON.stringify(['citas', desde, hasta, estado, limit, offset, contact]),
  };
}

/** Told the ids of the clientas whose data a page holds (the request log's access record), one per record that has one. */
export type DisclosedClientas = (clientaIds: string[]) => void;

export async function plannedCitasPage(
  db: Kysely<DB>,
  ctx: ClinicContext,
  p: CitasPlan,
  disclosed?: DisclosedClientas,
): Promise<CitasResponse> {
  const [rows, total] =
    p.changed === null
      ? await Promise.all([listCitas(db, ctx.clinicId, p.filter, p.limit, p.offset), countCitas(db, ctx.clinicId, p.filter)])
      : await Promise.all([
          listChangedCitas(db, ctx.clinicId, p.changed, p.limit, p.offset),
          countChangedCitas(db, ctx.clinicId, p.changed),
        ]);
  disclosed?.(rows.map((r) => r.clienta_id));
  const citas = p.contact ? rows.map((r) => citaOut(r, ctx)) : rows.map((r) => withoutContact('citas', citaOut(r, ctx)));
  return { citas, total, rango: { desde: p.desde, hasta: p.hasta }, limit: p.limit, offset: p.offset };
}

export type ClientasPlan = Planned & { filter: ClientasFilter; changedSince: number | null };

/**
 * Without contact details (`contact` false) `q` matches names only: a phone-like q is then a name
 * search like any other, so no search can tell whether a phone number is a client's.
 */
export function planClientas(q: ClientasQuery, contact: boolean): ClientasPlan {
  const limit = q.limit ?? DEFAULT_LIMITS.clientas;
  const offset = q.offset ?? 0;
  const search = q.q?.trim() ?? '';
  // A blank q is malformed, not "no filter": the contract never ignores a parameter silently.
  if (q.q !== undefined && search === '')
    throw invalidParam('q', 'q must hold a name or phone to search for (leave it out to apply no filter)');
  const nameLike = search === '' ? null : normalizeName(search);
  const digits = contact && search !== '' && looksLikePhone(search) ? phoneDigits(search) : null;
  const filter = { nameLike, digitsLike: digits, vip: q.vip === undefined ? null : q.vip === 'true' };
  const changedSince = since(q.updated_since);
  return {
    filter,
    changedSince,
    limit,
    offset,
    contact,
    key: JSON.stringify(['clientas', nameLike, digits, filter.vip, changedSince, limit, offset, contact]),
  };
}

/** `clientas`: the app's client search (it keeps the counts of searches; see clientas-search/search.ts). */
export async function plannedClientasPage(
  db: Kysely<DB>,
  ctx: ClinicContext,
  p: ClientasPlan,
  nowMs: number,
  clientas: ClientasSearch,
  disclosed?: DisclosedClientas,
): Promise<ClientasResponse> {
  const nowSeconds = Math.floor(nowMs / 1000);
  const { rows, total } =
    p.changedSince === null
      ? await clientas.page(db, ctx.clinicId, p.filter, p.limit, p.offset, nowSeconds)
      : await Promise.all([
          listChangedClientas(db, ctx.clinicId, p.filter, p.changedSince, p.limit, p.offset, nowSeconds),
          countChangedClientas(db, ctx.clinicId, p.filter, p.changedSince),
        ]).then(([r, t]) => ({ rows: r, total: t }));
  disclosed?.(rows.map((r) => r.id));
  const shaped = p.contact ? rows.map((r) => clientaOut(r, ctx)) : rows.map((r) => withoutContact('clientas', clientaOut(r, ctx)));
  return { clientas: shaped, total, limit: p.limit, offset: p.offset };
}

export type LlamadasPlan = Planned &
  (
    | { changed: null; desde: string; hasta: string | null; filter: LlamadasFilter }
    | { changed: LlamadasChangedFilter; desde: string | null; hasta: string | null }
  );

export function planLlamadas(ctx: ClinicContext, q: LlamadasQuery, nowMs: number, contact: boolean): LlamadasPlan {
  const limit = q.limit ?? DEFAULT_LIMITS.llamadas;
  const offset = q.offset ?? 0;
  const resultado = q.resultado ?? null;
  const hasta = q.hasta ?? null;
  const updatedSince = since(q.updated_since);
  if (updatedSince !== null) {
    const desde = q.desde ?? null;
    const changed = { since: updatedSince, resultado, ...changedDays(desde, hasta, ctx.timezone) };
    return {
      changed,
      desde,
      hasta,
      limit,
      offset,
      contact,
      key: JSON.stringify(['llamadas~', updatedSince, desde, hasta, resultado, limit, offset, contact]),
    };
  }
  const desde = q.desde ?? addDays(todayIn(ctx.timezone, nowMs), -LLAMADAS_DEFAULT_DAYS_BACK);
  if (hasta !== null && desde > hasta) {
    throw invalidParam(q.desde !== undefined ? 'desde' : 'hasta', `desde (${desde}) must not be after hasta (${hasta})`);
  }
  const filter = { ...dayRange(desde, hasta, ctx.timezone), desde, hasta, resultado };
  return {
    changed: null,
    desde,
    hasta,
    filter,
    limit,
    offset,
    contact,
    key: JSON.stringify(['llamadas', desde, hasta, resultado, limit, offset, contact]),
  };
}

export async function plannedLlamadasPage(
  db: Kysely<DB>,
  ctx: ClinicContext,
  p: LlamadasPlan,
  disclosed?: DisclosedClientas,
): Promise<LlamadasResponse> {
  const [rows, total] =
    p.changed === null
      ? await Promise.all([listLlamadas(db, ctx.clinicId, p.filter, p.limit, p.offset), countLlamadas(db, ctx.clinicId, p.filter)])
      : await Promise.all([
          listChangedLlamadas(db, ctx.clinicId, p.changed, p.limit, p.offset),
          countChangedLlamadas(db, ctx.clinicId, p.changed),
        ]);
  disclosed?.(rows.flatMap((r) => (r.clienta_id === null ? [] : [r.clienta_id])));
  const llamadas = p.contact ? rows.map((r) => llamadaOut(r, ctx)) : rows.map((r) => withoutContact('llamadas', llamadaOut(r, ctx)));
  return { llamadas, total, desde: p.desde, hasta: p.hasta, limit: p.limit, offset: p.offset };
}

// Plan and page in one call, with contact details (scripts, tests, the plan checks).

export function citasPage(db: Kysely<DB>, ctx: ClinicContext, q: CitasQuery, nowMs: number): Promise<CitasResponse> {
  return plannedCitasPage(db, ctx, planCitas(ctx, q, nowMs, true));
}

export function clientasPage(
  db: Kysely<DB>,
  ctx: ClinicContext,
  q: ClientasQuery,
  nowMs: number,
  clientas: ClientasSearch,
): Promise<ClientasResponse> {
  return plannedClientasPage(db, ctx, planClientas(q, true), nowMs, clientas);
}

export function llamadasPage(db: Kysely<DB>, ctx: ClinicContext, q: LlamadasQuery, nowMs: number): Promise<LlamadasResponse> {
  return plannedLlamadasPage(db, ctx, planLlamadas(ctx, q, nowMs, true));
}
