// The text rendering of each tool's result: what a language model reads (some clients give it
// the text only). Short and complete enough to find and page: a list is an index, one line per
// record with what tells it apart (when, who, what, its status) and its id, the time zone, the
// total, and how to get the next page; a record's own tool (get_cita, get_clienta, get_llamada)
// writes it out in full. The structured result beside it is the REST answer itself, with every
// field. Times are shown as the API writes them, in the clinic's offset, with the weekday
// (computed from the date's own digits: no machine time zone is involved).
//
// On the path of every list call (a page of 500 is 500 lines), and a list's text travels beside
// the page's JSON in the same answer, stringified, encoded and written with it: a list's lines
// are kept short for that (measured on the citas page of 100: two lines per record with every
// field made the answer 67 KB against REST's 43 KB, and its rendering, encoding and writing were
// the largest part of what the tool call paid beyond the REST request). Plain string
// concatenation, and the weekday by arithmetic (a third of the cost of the Date-based version).
import type { Static } from '@sinclair/typebox';
import type { EventosList, MeResponse } from '../../domain/api-schemas.js';
import type { Cita, CitasResponse } from '../../collections/citas.js';
import type { Clienta, ClientasResponse } from '../../collections/clientas.js';
import type { Llamada, LlamadasResponse } from '../../collections/llamadas.js';
import type { ApiRecord, CollectionName } from '../../collections/index.js';

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
/** Sakamoto's month offsets: the weekday of a Gregorian date by integer arithmetic. */
const MONTH_OFFSET = [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4];

/** `d` digits of `s` from `at` as a number (the date's fields; the API wrote them, so they are digits). */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) v = v * 10 + s.charCodeAt(i) - 48;
  return v;
}

/** The weekday of a `YYYY-MM-DD` (or of the date that starts an RFC 3339 timestamp). */
export function weekday(date: string): string {
  const m = digits(date, 5, 2);
  const y = digits(date, 0, 4) - (m < 3 ? 1 : 0);
  const d = digits(date, 8, 2);
  return WEEKDAYS[(y + Math.floor(y / 4) - Math.floor(y / 100) + Math.floor(y / 400) + MONTH_OFFSET[m - 1]! + d) % 7]!;
}

/** `2026-03-28T09:00:00+01:00` -> `Sat 2026-03-28 09:00 +01:00` (seconds only when not :00). */
export function when(ts: string): string {
  const time = ts.charCodeAt(17) === 48 && ts.charCodeAt(18) === 48 ? ts.slice(11, 16) : ts.slice(11, 19);
  return weekday(ts) + ' ' + ts.slice(0, 10) + ' ' + time + ' ' + ts.slice(19);
}

const day = (date: string) => `${weekday(date)} ${date}`;
const money = (amount: number, currency: string) => `${amount.toFixed(2)} ${currency}`;
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function duration(seconds: number): string {
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  return m === 0 ? `${s} s` : s === 0 ? `${m} min` : `${m} min ${s} s`;
}

/** The paging sentence of a list: where this page is in `total`, and the call for the next one. */
export function pagingLine(tool: string, total: number, offset: number, returned: number): string {
  if (returned === 0) return total === 0 ? 'Nothing matches.' : `offset ${offset} is past the last match: use an offset below ${total}.`;
  const last = offset + returned;
  const where = `Showing ${offset + 1}-${last} of ${total} (total counts every match, whatever limit and offset).`;
  return last < total
    ? `${where} Next page: call ${tool} again with offset=${last} and the same other arguments.`
    : `${where} This is the last page.`;
}

function citaLine(c: Cita, n: number): string {
  return `${n}. ${when(c.fecha_hora)} · ${c.cliente_nombre} · ${c.servicio} · ${c.estado} · id ${c.id}`;
}

function clientaLine(c: Clienta, n: number): string {
  const citas = `${plural(c.total_citas, 'appointment', 'appointments')}${c.ultima_cita === null ? '' : `, last on ${day(c.ultima_cita)}`}`;
  return `${n}. ${c.nombre}${c.vip ? ' (VIP)' : ''} · ${citas} · ${plural(c.total_llamadas, 'call', 'calls')} · id ${c.id}`;
}

function llamadaLine(l: Llamada, n: number): string {
  return (
    `${n}. ${when(l.fecha_hora)} · ${l.cliente_nombre ?? 'unknown caller'} · ${l.resultado} ` +
    `· ${duration(l.duracion_segundos)} · id ${l.id}`
  );
}

/** One line per item, numbered from offset + 1, each after a line break. */
function numbered<T>(items: T[], offset: number, line: (item: T, n: number) => string): string {
  let out = '';
  for (let i = 0; i < items.length; i++) out += '\n' + line(items[i]!, offset + i + 1);
  return out;
}

function range(desde: string | null, hasta: string | null): string {
  if (desde !== null && hasta !== null) return desde === hasta ? `on ${day(desde)}` : `from ${day(desde)} to ${day(hasta)}`;
  if (desde !== null) return `from ${day(desde)} on`;
  if (hasta !== null) return `up to ${day(hasta)}`;
  return 'on any day';
}

export function citasText(page: CitasResponse, tz: string, filters: { estado?: string; updated_since?: string }): string {
  const what = [filters.estado ? `status ${filters.estado}` : null, filters.updated_since ? `changed since ${filters.updated_since}` : null]
    .filter(Boolean)
    .join(', ');
  return (
    `${plural(page.total, 'appointment', 'appointments')} (citas) ` +
    `${range(page.rango.desde, page.rango.hasta)}${what ? `, ${what}` : ''}; days and times in ${tz}, oldest first. Each: time · client ` +
    '· service · status · id (get_cita gives one in full: phone, price, professional, site, notes).' +
    numbered(page.citas, page.offset, citaLine) +
    '\n' +
    pagingLine('list_citas', page.total, page.offset, page.citas.length)
  );
}

export function clientasText(page: ClientasResponse, filters: { q?: string; vip?: string; updated_since?: string }): string {
  const what = [
    filters.q ? `matching "${filters.q}"` : null,
    filters.vip === 'true' ? 'VIP only' : filters.vip === 'false' ? 'not VIP' : null,
    filters.updated_since ? `changed since ${filters.updated_since}` : null,
  ]
    .filter(Boolean)
    .join(', ');
  return (
    `${plural(page.total, 'client', 'clients')} (clientas)${what ? ` ${what}` : ''}, by name. ` +
    'Each: name · appointments, the latest started · calls · id (get_clienta gives one in full: phone, e-mail, language, latest call).' +
    numbered(page.clientas, page.offset, clientaLine) +
    '\n' +
    pagingLine('list_clientas', page.total, page.offset, page.clientas.length)
  );
}

export function llamadasText(page: LlamadasResponse, tz: string, filters: { resultado?: string; updated_since?: string }): string {
  const what = [
    filters.resultado ? `outcome ${filters.resultado}` : null,
    filters.updated_since ? `changed since ${filters.updated_since}` : null,
  ]
    .filter(Boolean)
    .join(', ');
  return (
    `${plural(page.total, 'call', 'calls')} (llamadas) answered by the voice assistant ` +
    `${range(page.desde, page.hasta)}${what ? `, ${what}` : ''}; days and times in ${tz}, newest first. Each: time · client · outcome · ` +
    "length · id (get_llamada gives one in full: the caller's number, language)." +
    numbered(page.llamadas, page.offset, llamadaLine) +
    '\n' +
    pagingLine('list_llamadas', page.total, page.offset, page.llamadas.length)
  );
}

type Eventos = Static<typeof EventosList>;

function eventSummary(tipo: string, datos: Record<string, unknown>): string {
  const id = String(datos.id);
  if (tipo.endsWith('.eliminada')) return `${tipo.split('.')[0]} ${id} deleted`;
  if (tipo.startsWith('cita.')) {
    const c = datos as Cita;
    return `cita ${id}: ${when(c.fecha_hora)}, ${c.cliente_nombre}, ${c.servicio}, ${c.estado}`;
  }
  if (tipo.startsWith('clienta.')) return `clienta ${id}: ${(datos as Clienta).nombre}`;
  const l = datos as Llamada;
  return `llamada ${id}: ${when(l.fecha_hora)}, ${l.cliente_nombre ?? 'unknown caller'}, ${l.resultado}`;
}

export function eventosText(page: Eventos, tz: string): string {
  const next = page.has_more
    ? `More events are waiting: call list_eventos now with cursor=${page.next_cursor}.`
    : `No more events now. To get what happens from here on, call list_eventos later with cursor=${page.next_cursor}.`;
  return [
    `${plural(page.eventos.length, 'event', 'events')} (changes of the clinic's records), oldest first; times in ${tz}.`,
    ...page.eventos.map(
      (e, i) => `${i + 1}. ${when(e.ocurrido_at)} · ${e.tipo} · ${eventSummary(e.tipo, e.datos as Record<string, unknown>)}`,
    ),
    next,
  ].join('\n');
}

export function meText(me: MeResponse, tools: readonly string[]): string {
  const k = me.api_key;
  return [
    `Clinic: ${me.clinica.nombre} (id ${me.clinica.id}), time zone ${me.clinica.zona_horaria}, currency ${me.clinica.moneda}.`,
    `Every date of its data is a calendar day in ${me.clinica.zona_horaria}; every time carries that zone's UTC offset.`,
    `API key: ${k.nombre} (id ${k.id}), created ${when(k.created_at)}, ` +
      `${k.expires_at === null ? 'never expires' : `expires ${when(k.expires_at)}`}.`,
    `Rate limit: ${me.rate_limit.rps} requests per second, bursts of ${me.rate_limit.burst}.`,
    `Tools this key may use: ${tools.join(', ')}.`,
    // An assistant must not take made-up records for real clients.
    ...(me.modo === 'test' ? ["Test mode: this key reads the clinic's sandbox, synthetic data only (no real clients)."] : []),
  ].join('\n');
}

/** One record written out in full: the text of get_* and of fetch. */
export function citaText(c: Cita, tz: string): string {
  return [
    `Appointment (cita) ${c.id}`,
    `When: ${when(c.fecha_hora)} (${tz}), ${c.duracion_min} min`,
    `Client: ${c.cliente_nombre}${c.telefono === null ? '' : `, phone ${c.telefono}`}`,
    `Service: ${c.servicio}, ${money(c.precio, c.moneda)}`,
    `Status: ${c.estado}`,
    `Professional: ${c.profesional_nombre}; site: ${c.sede_nombre}`,
    ...(c.notas === null ? [] : [`Notes: ${c.notas}`]),
    `Created ${when(c.created_at)}; last changed ${when(c.updated_at)}`,
  ].join('\n');
}

export function clientaText(c: Clienta, tz: string): string {
  return [
    `Client (clienta) ${c.id}: ${c.nombre}${c.vip ? ' (VIP)' : ''}`,
    ...(c.telefono === null ? [] : [`Phone: ${c.telefono}`]),
    ...(c.email === null ? [] : [`E-mail: ${c.email}`]),
    ...(c.idioma === null ? [] : [`Language: ${c.idioma}`]),
    `Appointments: ${c.total_citas} in all${c.ultima_cita === null ? '' : `; the latest that has started was on ${day(c.ultima_cita)}`}`,
    `Calls: ${c.total_llamadas}${c.ultima_llamada === null ? '' : `; the latest ${when(c.ultima_llamada)}`}`,
    `Client since ${c.cliente_desde}; record created ${when(c.created_at)}, last changed ${when(c.updated_at)} (${tz})`,
  ].join('\n');
}

export function llamadaText(l: Llamada, tz: string): string {
  return [
    `Call (llamada) ${l.id}, answered by the voice assistant`,
    `When: ${when(l.fecha_hora)} (${tz}), ${duration(l.duracion_segundos)}`,
    `Caller: ${l.cliente_nombre ?? 'unknown caller (no client linked)'}${l.telefono_caller === null ? '' : `, from ${l.telefono_caller}`}`,
    `Outcome: ${l.resultado}; language ${l.idioma}`,
    `Created ${when(l.created_at)}; last changed ${when(l.updated_at)}`,
  ].join('\n');
}

/** A record as fetch shows it: a title (what tells it apart) and its whole text. */
export interface RecordRendering<T> {
  title(r: T): string;
  text(r: T, tz: string): string;
}

export const RECORD_RENDERINGS: { [N in CollectionName]: RecordRendering<ApiRecord<N>> } = {
  citas: { title: (c) => `Appointment: ${c.cliente_nombre}, ${when(c.fecha_hora)}, ${c.servicio} (${c.estado})`, text: citaText },
  clientas: { title: (c) => `Client: ${c.nombre}${c.vip ? ' (VIP)' : ''}`, text: clientaText },
  llamadas: { title: (l) => `Call: ${when(l.fecha_hora)}, ${l.cliente_nombre ?? 'unknown caller'} (${l.resultado})`, text: llamadaText },
};
