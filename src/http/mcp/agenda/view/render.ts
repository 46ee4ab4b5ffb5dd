// The agenda on the page: a week of seven day columns, or one day in full, drawn from the
// list_citas result the host sent (or the week the view asked for through the host). Built with
// DOM nodes and textContent only (a client's name is data, never markup). Accessible by keyboard
// and screen reader: every action is a real button with a name, the status line is a live region,
// the focus order follows the days and hours, and in the week arrow keys move between days
// (left, right) and between a day's appointments (up, down); Escape goes back from a day to its week.
import {
  addDays,
  anchorDay,
  byDay,
  covers,
  dayAsDate,
  localEnd,
  localTime,
  mondayOf,
  offsets,
  weekDays,
  type AgendaCita,
  type AgendaPage,
} from './calendar.js';
import { ESTADOS, labelsFor, langOf, type Labels } from './labels.js';

export interface AgendaActions {
  /** The week that starts on `monday`, read through the host (a tool call); throws with a reason. */
  fetchWeek(monday: string): Promise<AgendaPage>;
}

type Mode = 'week' | 'day';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...kids: (Node | string)[]) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...kids);
  return node;
}

export class Agenda {
  private locale = 'en';
  private t: Labels = labelsFor('en');
  private page: AgendaPage | null = null;
  private monday: string | null = null;
  private day: string | null = null;
  private mode: Mode = 'week';
  private busy = false;
  private error: string | null = null;
  /** Answers to older requests than the latest are dropped (a fast second click). */
  private requestSeq = 0;

  private readonly heading = el('h1', { id: 'agenda-title' });
  private readonly range = el('p', { class: 'range', id: 'agenda-range' });
  private readonly zone = el('p', { class: 'zone' });
  private readonly prev = el('button', { type: 'button', class: 'nav-prev' });
  private readonly next = el('button', { type: 'button', class: 'nav-next' });
  private readonly nav = el('nav', {}, this.prev, this.next);
  private readonly weekButton = el('button', { type: 'button', class: 'view-week' });
  private readonly dayButton = el('button', { type: 'button', class: 'view-day' });
  private readonly views = el('div', { role: 'group', class: 'views' }, this.weekButton, this.dayButton);
  private readonly legend = el('ul', { class: 'legend' });
  private readonly status = el('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  private readonly keys = el('p', { class: 'sr-only', id: 'agenda-keys' });
  private readonly body = el('div', { class: 'body' });

  constructor(
    private readonly root: HTMLElement,
    private readonly actions: AgendaActions,
  ) {
    root.setAttribute('aria-labelledby', 'agenda-title');
    root.append(
      el('header', { class: 'bar' }, el('div', { class: 'titles' }, this.heading, this.range, this.zone), this.nav, this.views),
      this.legend,
      this.status,
      this.keys,
      this.body,
    );
    this.prev.addEventListener('click', () => this.step(-1));
    this.next.addEventListener('click', () => this.step(1));
    this.weekButton.addEventListener('click', () => this.setMode('week'));
    this.dayButton.addEventListener('click', () => this.setMode('day', this.day ?? this.monday));
    this.body.addEventListener('keydown', (e) => this.onKey(e));
    this.body.addEventListener('click', (e) => this.onClick(e));
    this.render();
  }

  /** The host's locale (BCP 47): Spanish for `es*`, English otherwise; dates in that locale when Intl knows the tag. */
  setLocale(locale: string | undefined): void {
    const lang = langOf(locale);
    this.locale = lang;
    try {
      if (locale !== undefined && Intl.DateTimeFormat.supportedLocalesOf(locale).length > 0) this.locale = locale;
    } catch {
      // not a BCP 47 tag: the language's own dates
    }
    this.t = labelsFor(lang);
    document.documentElement.lang = lang;
    this.render();
  }

  /** The tool's own result, as the host sent it: the week of its first day. */
  showResult(page: AgendaPage): void {
    this.requestSeq++;
    this.page = page;
    this.error = null;
    this.busy = false;
    const anchor = anchorDay(page);
    this.monday = anchor === null ? null : mondayOf(anchor);
    this.day = anchor;
    this.mode = 'week';
    this.render();
  }

  /** A result the view cannot draw (the tool's error, a cancelled call). */
  fail(reason: string): void {
    this.busy = false;
    this.error = reason;
    this.render();
  }

  private fmt(opts: Intl.DateTimeFormatOptions) {
    return new Intl.DateTimeFormat(this.locale, { ...opts, timeZone: 'UTC' });
  }

  private longDay(date: string): string {
    return this.fmt({ weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }).format(dayAsDate(date));
  }

  /** Previous or next week (or day, in the day view); another week is read through the host. */
  private step(dir: 1 | -1): void {
    if (this.busy || this.monday === null) return;
    if (this.mode === 'day' && this.day !== null) void this.goTo(addDays(this.day, dir), 'day');
    else void this.goTo(addDays(this.monday, 7 * dir), 'week');
  }

  private async goTo(day: string, mode: Mode, focus?: () => void): Promise<void> {
    const monday = mondayOf(day);
    if (monday === this.monday && this.page !== null && covers(this.page, day)) {
      this.setMode(mode, day);
      return;
    }
    const seq = ++this.requestSeq;
    this.busy = true;
    this.error = null;
    this.render(false);
    try {
      const page = await this.actions.fetchWeek(monday);
      if (seq !== this.requestSeq) return;
      this.page = page;
      this.monday = monday;
      this.day = day;
      this.mode = mode;
      this.busy = false;
      this.render();
      focus?.();
    } catch (err) {
      if (seq !== this.requestSeq) return;
      this.fail(err instanceof Error ? err.message : String(err));
    }
  }

  private setMode(mode: Mode, day: string | null = this.day): void {
    this.mode = mode;
    this.day = day;
    this.render();
    if (mode === 'day') this.body.querySelector<HTMLElement>('.day-title')?.focus();
  }

  private citaLabel(c: AgendaCita): string {
    const t = this.t;
    return (
      `${localTime(c)}–${localEnd(c)}, ${c.cliente_nombre}, ${c.servicio}, ${t.estados[c.estado] ?? c.estado}, ` +
      `${t.with} ${c.profesional_nombre}, ${t.at} ${c.sede_nombre}`
    );
  }

  private render(withBody = true): void {
    const t = this.t;
    const week = this.monday === null ? [] : weekDays(this.monday);
    const perDay = byDay(this.page?.citas ?? [], week);
    const weekCitas = [...perDay.values()].flat();
    this.root.setAttribute('aria-busy', String(this.busy));
    this.heading.textContent = t.title;
    this.range.textContent =
      this.monday === null
        ? ''
        : this.mode === 'day' && this.day !== null
          ? this.longDay(this.day)
          : this.fmt({ day: 'numeric', month: 'short', year: 'numeric' }).formatRange(dayAsDate(week[0]!), dayAsDate(week[6]!));
    const shown = this.mode === 'day' && this.day !== null ? (perDay.get(this.day) ?? []) : weekCitas;
    this.zone.textContent = t.clinicTime(offsets(shown));
    const inDay = this.mode === 'day';
    this.nav.setAttribute('aria-label', inDay ? t.dayNav : t.weekNav);
    this.prev.textContent = `‹ ${inDay ? t.previousDay : t.previousWeek}`;
    this.next.textContent = `${inDay ? t.nextDay : t.nextWeek} ›`;
    for (const b of [this.prev, this.next]) b.setAttribute('aria-disabled', String(this.busy || this.monday === null));
    this.views.setAttribute('aria-label', t.view);
    this.weekButton.textContent = t.week;
    this.dayButton.textContent = t.day;
    this.weekButton.setAttribute('aria-pressed', String(!inDay));
    this.dayButton.setAttribute('aria-pressed', String(inDay));
    this.legend.setAttribute('aria-label', t.legend);
    this.legend.replaceChildren(
      ...ESTADOS.map((s) => el('li', { class: `st-${s}` }, el('span', { class: 'swatch', 'aria-hidden': 'true' }), t.estados[s]!)),
    );
    this.keys.textContent = t.keys;
    this.status.textContent = this.statusText(shown.length);
    if (!withBody) return;
    if (this.page === null) this.body.replaceChildren();
    else if (this.monday === null) this.body.replaceChildren(el('p', { class: 'none' }, t.empty));
    else if (inDay && this.day !== null) this.body.replaceChildren(this.dayView(this.day, perDay.get(this.day) ?? []));
    else this.body.replaceChildren(this.weekView(week, perDay));
  }

  private statusText(shown: number): string {
    const t = this.t;
    if (this.busy) return t.loading;
    if (this.error !== null) return t.failed(this.error);
    if (this.page === null) return t.loading;
    const p = this.page;
    const partial = p.total > p.offset + p.citas.length || p.offset > 0 ? ` ${t.partial(p.citas.length, p.total)}` : '';
    return `${t.count(shown)}.${partial}`;
  }

  private weekView(week: string[], perDay: Map<string, AgendaCita[]>): HTMLElement {
    const t = this.t;
    const head = this.fmt({ weekday: 'short', day: 'numeric' });
    const grid = el('div', { class: 'week', 'aria-describedby': 'agenda-keys' });
    for (const day of week) {
      const citas = perDay.get(day) ?? [];
      const inside = this.page !== null && covers(this.page, day);
      const id = `d-${day}`;
      const headButton = el('button', { type: 'button', class: 'day-head', 'data-day': day }, head.format(dayAsDate(day)));
      headButton.setAttribute('aria-label', t.openDay(this.longDay(day), citas.length));
      const col = el(
        'section',
        { class: inside ? 'col' : 'col outside', 'aria-labelledby': id, 'data-day': day },
        el('h2', { id }, headButton),
      );
      if (!inside) col.append(el('p', { class: 'none' }, t.outside));
      else if (citas.length === 0) col.append(el('p', { class: 'none' }, t.noCitas));
      else col.append(el('ul', { class: 'list' }, ...citas.map((c) => el('li', {}, this.citaButton(c)))));
      grid.append(col);
    }
    return grid;
  }

  private citaButton(c: AgendaCita): HTMLElement {
    const b = el(
      'button',
      { type: 'button', class: `cita st-${c.estado}`, 'data-id': c.id, 'data-day': c.fecha_hora.slice(0, 10) },
      el('span', { class: 'time' }, `${localTime(c)}–${localEnd(c)}`),
      el('span', { class: 'who' }, c.cliente_nombre),
      el('span', { class: 'what' }, c.servicio),
      el('span', { class: 'where' }, `${c.profesional_nombre} · ${c.sede_nombre}`),
    );
    b.setAttribute('aria-label', this.citaLabel(c));
    return b;
  }

  private dayView(day: string, citas: AgendaCita[]): HTMLElement {
    const t = this.t;
    const box = el('section', { class: 'dayview', 'aria-labelledby': 'day-title' });
    box.append(el('h2', { id: 'day-title', class: 'day-title', tabindex: '-1', 'data-day': day }, this.longDay(day)));
    if (this.page !== null && !covers(this.page, day)) box.append(el('p', { class: 'none' }, t.outside));
    else if (citas.length === 0) box.append(el('p', { class: 'none' }, t.noCitas));
    else {
      const list = el('ol', { class: 'daylist' });
      for (const c of citas) {
        const item = el(
          'li',
          { class: `entry st-${c.estado}`, 'data-id': c.id },
          el('span', { class: 'time' }, `${localTime(c)}–${localEnd(c)}`),
          el('span', { class: 'who' }, c.cliente_nombre),
          el('span', { class: 'what' }, `${c.servicio} · ${t.minutes(c.duracion_min)}`),
          el('span', { class: 'state' }, t.estados[c.estado] ?? c.estado),
          el('span', { class: 'where' }, `${t.with} ${c.profesional_nombre}, ${t.at} ${c.sede_nombre}`),
        );
        item.setAttribute('aria-label', this.citaLabel(c));
        list.append(item);
      }
      box.append(list);
    }
    return box;
  }

  private onClick(e: Event): void {
    const target = (e.target as HTMLElement).closest<HTMLElement>('button[data-day]');
    if (!target) return;
    const day = target.dataset.day!;
    this.setMode('day', day);
  }

  private onKey(e: KeyboardEvent): void {
    if (e.key === 'Escape' && this.mode === 'day' && this.day !== null) {
      const day = this.day;
      this.setMode('week', day);
      this.body.querySelector<HTMLElement>(`.day-head[data-day="${day}"]`)?.focus();
      e.preventDefault();
      return;
    }
    if (this.mode !== 'week' || !['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown'].includes(e.key)) return;
    const cols = [...this.body.querySelectorAll<HTMLElement>('.col')].map((c) => [...c.querySelectorAll<HTMLElement>('button')]);
    const here = e.target as HTMLElement;
    const col = cols.findIndex((items) => items.includes(here));
    if (col < 0) return;
    const row = cols[col]!.indexOf(here);
    let next: HTMLElement | undefined;
    if (e.key === 'ArrowDown') next = cols[col]![row + 1];
    else if (e.key === 'ArrowUp') next = cols[col]![row - 1];
    else {
      const other = cols[col + (e.key === 'ArrowRight' ? 1 : -1)];
      next = other?.[Math.min(row, other.length - 1)];
    }
    if (next) {
      next.focus();
      e.preventDefault();
    }
  }
}
