// The texts of the exports in the dashboard (Settings > API > Export, and the button on a
// client's page of the access record), in each language, kept apart from messages.ts as the
// OAuth texts are: one `ExportMessages` per language, checked with `satisfies`.
import type { Lang } from './messages.js';

type Text = string;

export interface ExportMessages {
  tab: Text;
  title: Text;
  lead: Text;
  ownerOnly: Text;
  start: Text;
  startHelp: Text;
  listTitle: Text;
  none: Text;
  colRequested: Text;
  colState: Text;
  colFile: Text;
  states: Record<'queued' | 'running' | 'done' | 'failed', Text>;
  progress: (percent: string) => Text;
  download: (size: string) => Text;
  until: (when: string) => Text;
  failed: Text;
  refreshing: Text;
  clientaButton: Text;
  clientaHelp: Text;
}

const es = {
  tab: 'Exportar',
  title: 'Exportar todos los datos',
  lead:
    'Un ZIP con todas las clientas, citas y llamadas de la clínica: en el formato de importación (para llevarlas a otra clínica o ' +
    'servicio) y como CSV (para una hoja de cálculo). Se prepara en segundo plano; puedes salir de esta página mientras tanto.',
  ownerOnly: 'Solo la propietaria de la clínica puede exportar sus datos.',
  start: 'Preparar la exportación',
  startHelp: 'El archivo se puede descargar durante 24 horas y después se borra.',
  listTitle: 'Exportaciones',
  none: 'Todavía no hay ninguna exportación.',
  colRequested: 'Pedida',
  colState: 'Estado',
  colFile: 'Archivo',
  states: { queued: 'En cola', running: 'Preparando', done: 'Lista', failed: 'Falló' },
  progress: (percent) => `${percent} hecho`,
  download: (size) => `Descargar (${size})`,
  until: (when) => `Disponible hasta ${when}`,
  failed: 'No se pudo preparar: vuelve a intentarlo. Si falla otra vez, avisa a quien administra el servicio.',
  refreshing: 'Esta página se actualiza sola mientras se prepara la exportación.',
  clientaButton: 'Descargar sus datos (ZIP)',
  clientaHelp:
    'Su ficha, sus citas, sus llamadas y este registro de accesos, en JSON y CSV, para responder a una solicitud de acceso o ' +
    'portabilidad (artículos 15 y 20 del RGPD).',
} satisfies ExportMessages;

const en = {
  tab: 'Export',
  title: 'Export all data',
  lead:
    'A ZIP with every client, appointment and call of the clinic: in the import format (to take them to another clinic or ' +
    'service) and as CSV (for a spreadsheet). It is made in the background; you may leave this page meanwhile.',
  ownerOnly: 'Only the clinic’s owner can export its data.',
  start: 'Make the export',
  startHelp: 'The file can be downloaded for 24 hours; then it is deleted.',
  listTitle: 'Exports',
  none: 'No export yet.',
  colRequested: 'Asked for',
  colState: 'State',
  colFile: 'File',
  states: { queued: 'Waiting', running: 'Being made', done: 'Ready', failed: 'Failed' },
  progress: (percent) => `${percent} done`,
  download: (size) => `Download (${size})`,
  until: (when) => `Available until ${when}`,
  failed: 'It could not be made: try again. If it fails again, tell whoever runs the service.',
  refreshing: 'This page refreshes itself while the export is being made.',
  clientaButton: 'Download her data (ZIP)',
  clientaHelp:
    'Her record, her appointments, her calls and this access record, as JSON and CSV, to answer a request for access or ' +
    'portability (GDPR articles 15 and 20).',
} satisfies ExportMessages;

export function exportMessages(lang: Lang): ExportMessages {
  return lang === 'es' ? es : en;
}
