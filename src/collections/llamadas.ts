// Calls (llamadas) answered by the clinic's voice assistant, newest first; a call may be linked to
// a clienta (then it shows her current name) or come from an unknown caller.
import { Type, type Static } from '@sinclair/typebox';
import * as L from '../domain/import-schemas.js';
import { RESULTADOS, type Resultado } from '../domain/records.js';
import {
  Contact,
  dateParam,
  enumParam,
  limitParam,
  named,
  Nullable,
  offsetParam,
  paging,
  Phone,
  ref,
  Text,
  Timestamp,
  updatedSinceParam,
  UpdatedAt,
  Uuid,
} from '../domain/schema-parts.js';
import { localDate } from '../time.js';
import { lineValue as v, type CollectionShape, type LineValues, type RowValues } from './parts.js';

/** `desde` defaults to today - this many days. */
export const LLAMADAS_DEFAULT_DAYS_BACK = 7;
const DEFAULT_LIMIT = 100;

/** Timestamps are epoch seconds (UTC). */
export interface LlamadaRecord {
  id: string;
  clienta_id: string | null;
  fecha_hora: number;
  cliente_nombre: string | null;
  telefono_caller: string;
  duracion_segundos: number;
  resultado: Resultado;
  idioma: string;
  created_at: number;
}

export const LlamadasQuery = Type.Object(
  {
    desde: dateParam(`First day, inclusive. Default: today - ${LLAMADAS_DEFAULT_DAYS_BACK} days (none with updated_since)`),
    hasta: dateParam('Last day, inclusive. Default: no upper bound'),
    resultado: enumParam(RESULTADOS, 'Only calls with this outcome'),
    updated_since: updatedSinceParam,
    limit: limitParam(DEFAULT_LIMIT),
    offset: offsetParam,
  },
  { additionalProperties: false },
);

export const Llamada = named('Llamada', "A call answered by the clinic's voice assistant", {
  id: Uuid,
  fecha_hora: Timestamp,
  cliente_nombre: Nullable(Text(['María López García'], 'null for an unknown caller')),
  telefono_caller: Contact(Phone, "The caller's phone, E.164"),
  duracion_segundos: Type.Integer({ minimum: 0, examples: [95] }),
  resultado: Type.Unsafe<string>({ type: 'string', enum: [...RESULTADOS], examples: ['agendada'] }),
  idioma: Text(['es']),
  created_at: Timestamp,
  updated_at: UpdatedAt,
});

export const LlamadasList = named('LlamadasList', 'A page of calls', {
  llamadas: Type.Array(ref(Llamada)),
  total: paging.total,
  desde: Nullable(
    Type.String({
      format: 'date',
      description: 'The first day applied; null only with updated_since and no desde',
      examples: ['2026-11-14'],
    }),
  ),
  hasta: Nullable(Type.String({ format: 'date', description: 'The last day applied; null: no upper bound' })),
  limit: paging.limit,
  offset: paging.offset,
});

/** An import line of this collection (docs/import.md). */
export const LlamadaLine = Type.Object(
  {
    type: Type.Literal('llamada'),
    id: Uuid,
    clienta_id: L.OrNull(Uuid),
    fecha_hora: L.Timestamp,
    cliente_nombre: L.OrNull(L.Text(200)),
    telefono_caller: Phone,
    duracion_segundos: Type.Integer({ minimum: 0, maximum: 86_400 }),
    resultado: L.OneOf(RESULTADOS),
    idioma: L.Language,
    created_at: L.Timestamp,
  },
  { additionalProperties: false },
);

export const llamadas = {
  name: 'llamadas',
  singular: 'llamada',
  refersTo: 'clientas',
  deletedWithReferred: false,
  // a call stays, as an unknown caller's: no link, no recorded name
  unlinked: ['clienta_id', 'cliente_nombre'],
  showsOfReferred: ['nombre'],
  prose: 'the calls its voice assistant answered (llamadas)',
  record: Llamada,
  query: LlamadasQuery,
  list: LlamadasList,
  line: LlamadaLine,
  defaultLimit: DEFAULT_LIMIT,
  scope: 'llamadas:read',
  scopeText: {
    reference: 'GET /api/v1/llamadas and /api/v1/llamadas/{id}: calls answered by the voice assistant',
    es: {
      label: 'Llamadas',
      description: 'Las llamadas que atendió el asistente de voz: cuándo, cuánto duraron, cómo acabaron y el nombre de quien llamó.',
    },
    en: { label: 'Calls', description: 'The calls the voice assistant answered: when, how long, how they ended and the caller’s name.' },
  },
  contactFields: ['telefono_caller'],
  columns: [
    ['clienta_id', 'text'],
    ['fecha_hora', 'int8'],
    ['dia', 'text'],
    ['cliente_nombre', 'text'],
    ['telefono_caller', 'text'],
    ['duracion_segundos', 'int4'],
    ['resultado', 'text'],
    ['idioma', 'text'],
    ['created_at', 'int8'],
  ],
  counts: { table: 'llamadas_por_dia', by: ['dia', 'resultado'] },
  tag: "Calls answered by the clinic's voice assistant, newest first",
  one: { operationId: 'getLlamada', summary: 'One call, by its id', what: 'call', extra: '', print: ['resultado'] },
  fromLine: (o: LineValues): { type: 'llamada' } & LlamadaRecord => ({
    type: 'llamada',
    id: v.id(o.id),
    clienta_id: o.clienta_id === undefined || o.clienta_id === null ? null : v.id(o.clienta_id),
    fecha_hora: v.seconds(o.fecha_hora),
    cliente_nombre: v.orNull(o.cliente_nombre as string | null | undefined),
    telefono_caller: o.telefono_caller as string,
    duracion_segundos: o.duracion_segundos as number,
    resultado: o.resultado as Resultado,
    idioma: o.idioma as string,
    created_at: v.seconds(o.created_at),
  }),
  toRow: (r: LlamadaRecord, zone: string) => ({
    id: r.id,
    clienta_id: r.clienta_id,
    fecha_hora: r.fecha_hora,
    dia: localDate(r.fecha_hora, zone),
    cliente_nombre: r.cliente_nombre,
    telefono_caller: r.telefono_caller,
    duracion_segundos: r.duracion_segundos,
    resultado: r.resultado,
    idioma: r.idioma,
    created_at: r.created_at,
  }),
  toLine: (r: RowValues, at: (s: number) => string) => ({
    type: 'llamada',
    id: r.id,
    clienta_id: r.clienta_id,
    fecha_hora: at(Number(r.fecha_hora)),
    cliente_nombre: r.cliente_nombre,
    telefono_caller: r.telefono_caller,
    duracion_segundos: Number(r.duracion_segundos),
    resultado: r.resultado,
    idioma: r.idioma,
    created_at: at(Number(r.created_at)),
  }),
} as const satisfies CollectionShape;

export type LlamadasQuery = Static<typeof LlamadasQuery>;
export type LlamadasResponse = Static<typeof LlamadasList>;
export type Llamada = Static<typeof Llamada>;
