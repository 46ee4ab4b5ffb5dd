// The three list use-cases: defaults from the clinic's "today", ranges as whole local days,
// rows shaped exactly as the API fields. Input and output are the types of the API's schemas
// (domain/api-schemas.ts), so the use-case, the validator and the serializer cannot drift apart.
// Never imports Fastify.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import {
  CITAS_DEFAULT_DAYS, DEFAULT_LIMITS, LLAMADAS_DEFAULT_DAYS_BACK,
  type CitasQuery, type CitasResponse, type ClientasQuery, type ClientasResponse, type LlamadasQuery, type LlamadasResponse,
} from '../domain/api-schemas.js';
import { DomainError } from '../errors.js';
import { countCitas, listCitas } from '../repos/citas.js';
import { countLlamadas, listLlamadas } from '../repos/llamadas.js';
import { addDays, dayRange, formatTimestamp, localDate, todayIn } from '../time.js';
import type { ClientasSearch } from './clientas-search/search.js';
import { looksLikePhone, normalizeName, phoneDigits } from './normalize.js';

/** The tenant, bound once from the API key. */
export interface ClinicContext {
  clinicId: string;
  timezone: string;
  currency: string;
}

/** A query parameter the schema accepts but the use-case cannot (the API answers 400 invalid_parameter). */
const invalidParam = (param: string, message: string) => new DomainError('invalid_input', message, { field: param });

export async function citasPage(db: Kysely<DB>, ctx: ClinicContext, q: CitasQuery, nowMs: number): Promise<CitasResponse> {
  const today = todayIn(ctx.timezone, nowMs);
  const desde = q.desde ?? today;
  const hasta = q.hasta ?? addDays(today, CITAS_DEFAULT_DAYS);
  if (desde > hasta) {
    const why = q.hasta === undefined ? ` (hasta defaults to today + ${CITAS_DEFAULT_DAYS} days, ${hasta}; send hasta as well)` : '';
    throw invalidParam(q.desde !== undefined ? 'desde' : 'hasta', `desde (${desde}) must not be after hasta (${hasta})${why}`);
  }
  const limit = q.limit ?? DEFAULT_LIMITS.citas;
  const offset = q.offset ?? 0;
  const filter = { ...dayRange(desde, hasta, ctx.timezone), desde, hasta, estado: q.estado ?? null };
  const [rows, total] = await Promise.all([
    listCitas(db, ctx.clinicId, filter, limit, offset),
    countCitas(db, ctx.clinicId, filter),
  ]);
  const tz = ctx.timezone;
  return {
    citas: rows.map((r) => ({
      id: r.id, fecha_hora: formatTimestamp(r.fecha_hora, tz), cliente_nombre: r.cliente_nombre, telefono: r.telefono,
      servicio: r.servicio, duracion_min: r.duracion_min, precio: r.precio_cents / 100, moneda: ctx.currency,
      estado: r.estado, profesional_nombre: r.profesional_nombre, sede_nombre: r.sede_nombre, notas: r.notas,
      created_at: formatTimestamp(r.created_at, tz),
    })),
    total,
    rango: { desde, hasta },
    limit,
    offset,
  };
}

/** `clientas`: the app's client search (it keeps the counts of searches; see clientas-search/search.ts). */
export async function clientasPage(
  db: Kysely<DB>, ctx: ClinicContext, q: ClientasQuery, nowMs: number, clientas: ClientasSearch,
): Promise<ClientasResponse> {
  const limit = q.limit ?? DEFAULT_LIMITS.clientas;
  const offset = q.offset ?? 0;
  const search = q.q?.trim() ?? '';
  // A blank q is malformed, not "no filter": the contract never ignores a parameter silently.
  if (q.q !== undefined && search === '') throw invalidParam('q', 'q must hold a name or phone to search for (leave it out to apply no filter)');
  const nameLike = search === '' ? null : normalizeName(search);
  const digits = search !== '' && looksLikePhone(search) ? phoneDigits(search) : null;
  const filter = { nameLike, digitsLike: digits, vip: q.vip === undefined ? null : q.vip === 'true' };
  const { rows, total } = await clientas.page(db, ctx.clinicId, filter, limit, offset, Math.floor(nowMs / 1000));
  const tz = ctx.timezone;
  return {
    clientas: rows.map((r) => ({
      id: r.id, nombre: r.nombre, telefono: r.telefono, email: r.email, idioma: r.idioma, vip: r.vip === 1,
      total_citas: Number(r.total_citas), total_llamadas: Number(r.total_llamadas),
      ultima_cita: r.ultima_cita === null ? null : localDate(Number(r.ultima_cita), tz),
      ultima_llamada: r.ultima_llamada === null ? null : formatTimestamp(Number(r.ultima_llamada), tz),
      cliente_desde: r.cliente_desde, created_at: formatTimestamp(r.created_at, tz),
    })),
    total,
    limit,
    offset,
  };
}

export async function llamadasPage(db: Kysely<DB>, ctx: ClinicContext, q: LlamadasQuery, nowMs: number): Promise<LlamadasResponse> {
  const today = todayIn(ctx.timezone, nowMs);
  const desde = q.desde ?? addDays(today, -LLAMADAS_DEFAULT_DAYS_BACK);
  const hasta = q.hasta ?? null;
  if (hasta !== null && desde > hasta) {
    throw invalidParam(q.desde !== undefined ? 'desde' : 'hasta', `desde (${desde}) must not be after hasta (${hasta})`);
  }
  const limit = q.limit ?? DEFAULT_LIMITS.llamadas;
  const offset = q.offset ?? 0;
  const filter = { ...dayRange(desde, hasta, ctx.timezone), desde, hasta, resultado: q.resultado ?? null };
  const [rows, total] = await Promise.all([
    listLlamadas(db, ctx.clinicId, filter, limit, offset),
    countLlamadas(db, ctx.clinicId, filter),
  ]);
  const tz = ctx.timezone;
  return {
    llamadas: rows.map((r) => ({
      id: r.id, fecha_hora: formatTimestamp(r.fecha_hora, tz), cliente_nombre: r.cliente_nombre,
      telefono_caller: r.telefono_caller, duracion_segundos: r.duracion_segundos, resultado: r.resultado,
      idioma: r.idioma, created_at: formatTimestamp(r.created_at, tz),
    })),
    total,
    desde,
    hasta,
    limit,
    offset,
  };
}
