// Clients (clientas): searched by name or phone, with their appointment and call counts. Citas
// and llamadas refer to them, so an import writes them first.
import { Type, type Static } from '@sinclair/typebox';
import * as L from '../domain/import-schemas.js';
import { normalizeName, phoneDigits } from '../domain/normalize.js';
import {
  Contact,
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
  DateOnly,
} from '../domain/schema-parts.js';
import { lineValue as v, type CollectionShape, type LineValues, type RowValues } from './parts.js';

const DEFAULT_LIMIT = 200;

/** Timestamps are epoch seconds (UTC); dates are `YYYY-MM-DD` calendar dates. */
export interface ClientaRecord {
  id: string;
  nombre: string;
  telefono: string;
  email: string | null;
  idioma: string | null;
  vip: boolean;
  cliente_desde: string;
  created_at: number;
}

export const ClientasQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: "Case- and accent-insensitive substring of the name, or digits of the phone ('600 12')",
      }),
    ),
    vip: enumParam(['true', 'false'], 'true: VIP clients only; false: non-VIP only'),
    updated_since: updatedSinceParam,
    limit: limitParam(DEFAULT_LIMIT),
    offset: offsetParam,
  },
  { additionalProperties: false },
);

export const Clienta = named('Clienta', 'A client of the clinic', {
  id: Uuid,
  nombre: Text(['María López García']),
  telefono: Contact(Phone, 'E.164'),
  email: Contact(Text(['maria.lopez@example.com']), 'null when unknown'),
  idioma: Nullable(Text(['es'], 'Preferred language')),
  vip: Type.Boolean(),
  total_citas: Type.Integer({ minimum: 0, description: "All of the client's appointments, every status", examples: [12] }),
  total_llamadas: Type.Integer({ minimum: 0, description: 'All calls linked to the client', examples: [3] }),
  ultima_cita: Nullable(
    Type.String({
      format: 'date',
      description: 'Local date of the latest appointment that starts at or before now',
      examples: ['2026-11-14'],
    }),
  ),
  ultima_llamada: Nullable(
    Type.String({ format: 'date-time', description: 'Timestamp of the latest linked call', examples: ['2026-11-20T18:02:11+01:00'] }),
  ),
  cliente_desde: DateOnly,
  created_at: Timestamp,
  updated_at: UpdatedAt,
});

export const ClientasList = named('ClientasList', 'A page of clients', { clientas: Type.Array(ref(Clienta)), ...paging });

/** An import line of this collection (docs/import.md). */
export const ClientaLine = Type.Object(
  {
    type: Type.Literal('clienta'),
    id: Uuid,
    nombre: L.Text(200),
    telefono: Phone,
    email: L.OrNull(L.Email),
    idioma: L.OrNull(L.Language),
    vip: Type.Boolean(),
    cliente_desde: L.DateOnly,
    created_at: L.Timestamp,
  },
  { additionalProperties: false },
);

export const clientas = {
  name: 'clientas',
  singular: 'clienta',
  refersTo: null,
  deletedWithReferred: false,
  unlinked: [],
  showsOfReferred: [],
  prose: 'clients (clientas)',
  record: Clienta,
  query: ClientasQuery,
  list: ClientasList,
  line: ClientaLine,
  defaultLimit: DEFAULT_LIMIT,
  scope: 'clientas:read',
  scopeText: {
    reference: 'GET /api/v1/clientas and /api/v1/clientas/{id}: clients',
    es: { label: 'Clientas', description: 'Nombre, idioma, si es VIP, desde cuándo es clienta y cuántas citas y llamadas ha tenido.' },
    en: { label: 'Clients', description: 'Name, language, whether VIP, since when, and how many appointments and calls each has had.' },
  },
  contactFields: ['telefono', 'email'],
  columns: [
    ['nombre', 'text'],
    ['nombre_norm', 'text'],
    ['telefono', 'text'],
    ['telefono_digits', 'text'],
    ['email', 'text'],
    ['idioma', 'text'],
    ['vip', 'int4'],
    ['cliente_desde', 'text'],
    ['created_at', 'int8'],
  ],
  counts: { table: 'clientas_por_vip', by: ['vip'] },
  tag: 'Clients: searched by name or phone, with their appointment and call counts',
  one: {
    operationId: 'getClienta',
    summary: 'One client, by her id',
    what: 'client',
    extra: ' Her derived fields (total_citas, ultima_cita ...) are as of now.',
    print: ['nombre'],
  },
  fromLine: (o: LineValues): { type: 'clienta' } & ClientaRecord => ({
    type: 'clienta',
    id: v.id(o.id),
    nombre: o.nombre as string,
    telefono: o.telefono as string,
    email: v.orNull(o.email as string | null | undefined),
    idioma: v.orNull(o.idioma as string | null | undefined),
    vip: o.vip as boolean,
    cliente_desde: o.cliente_desde as string,
    created_at: v.seconds(o.created_at),
  }),
  toRow: (r: ClientaRecord) => ({
    id: r.id,
    nombre: r.nombre,
    nombre_norm: normalizeName(r.nombre),
    telefono: r.telefono,
    telefono_digits: phoneDigits(r.telefono),
    email: r.email,
    idioma: r.idioma,
    vip: r.vip ? 1 : 0,
    cliente_desde: r.cliente_desde,
    created_at: r.created_at,
  }),
  toLine: (r: RowValues, at: (s: number) => string) => ({
    type: 'clienta',
    id: r.id,
    nombre: r.nombre,
    telefono: r.telefono,
    email: r.email,
    idioma: r.idioma,
    vip: Number(r.vip) === 1,
    cliente_desde: r.cliente_desde,
    created_at: at(Number(r.created_at)),
  }),
} as const satisfies CollectionShape;

export type ClientasQuery = Static<typeof ClientasQuery>;
export type ClientasResponse = Static<typeof ClientasList>;
export type Clienta = Static<typeof Clienta>;
