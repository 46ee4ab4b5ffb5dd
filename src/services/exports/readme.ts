// The LEEME.txt / README.txt of each export, in the clinic's language (Spanish or English): what
// each file of the ZIP is. Plain text, CRLF-free, for people who open the ZIP and for the clinic
// answering a client's request.
export type ExportLang = 'es' | 'en';

/** The clinic's language as an export's (its dashboard language; anything else reads as English). */
export const exportLang = (language: string): ExportLang => (language === 'es' ? 'es' : 'en');

export const README_NAME: Record<ExportLang, string> = { es: 'LEEME.txt', en: 'README.txt' };

interface ClientaReadme {
  clinic: string;
  clientaId: string;
  name: string | null;
  madeAt: string;
  counts: { citas: number; llamadas: number; access: number };
}

export function clientaReadme(lang: ExportLang, r: ClientaReadme): string {
  const who = r.name ?? r.clientaId;
  if (lang === 'es')
    return `Datos de ${who} en ${r.clinic}
Exportados el ${r.madeAt} (artículos 15 y 20 del RGPD: acceso y portabilidad).

clienta.json, clienta.csv       Su ficha, tal como la muestra la API (null si ya fue borrada).
citas.json, citas.csv           Sus citas (${r.counts.citas}), de la más antigua a la más reciente.
llamadas.json, llamadas.csv     Sus llamadas (${r.counts.llamadas}): las enlazadas a ella y las de
                                alguno de sus teléfonos sin clienta enlazada.
accesos.json, accesos.csv       Su registro de accesos (${r.counts.access}): cada petición de una
                                integración (clave de API o aplicación conectada) cuya respuesta
                                contenía sus datos, con la fecha, la integración y el endpoint,
                                de la más reciente a la más antigua, dentro del periodo que el
                                servicio conserva.
schemas/*.schema.json           El JSON Schema de cada archivo JSON.

Los archivos .json usan los nombres de campo de la API; los .csv tienen las mismas columnas
(UTF-8, separados por comas). Las horas llevan el desfase horario de la clínica. En los .csv,
un texto que empieza por =, +, - o @ lleva delante una comilla simple para que una hoja de
cálculo no lo ejecute como fórmula.
`;
  return `Data of ${who} at ${r.clinic}
Exported on ${r.madeAt} (GDPR articles 15 and 20: access and portability).

clienta.json, clienta.csv       Her record, as the API shows it (null if she was erased).
citas.json, citas.csv           Her appointments (${r.counts.citas}), oldest first.
llamadas.json, llamadas.csv     Her calls (${r.counts.llamadas}): those linked to her and those
                                from one of her phones linked to no client.
accesos.json, accesos.csv       Her access record (${r.counts.access}): every request of an
                                integration (an API key or a connected app) whose answer held
                                her data, with when, which integration and which endpoint,
                                newest first, for as long as the service keeps requests.
schemas/*.schema.json           The JSON Schema of each JSON file.

The .json files use the API's field names; the .csv files have the same columns (UTF-8,
comma-separated). Times carry the clinic's UTC offset. In the .csv files, a text that starts
with =, +, - or @ gets a leading single quote so that a spreadsheet never runs it as a formula.
`;
}

interface ClinicReadme {
  clinic: string;
  madeAt: string;
  counts: { clientas: number; citas: number; llamadas: number };
}

export function clinicReadme(lang: ExportLang, r: ClinicReadme): string {
  if (lang === 'es')
    return `Todos los datos de ${r.clinic}
Exportados el ${r.madeAt}: ${r.counts.clientas} clientas, ${r.counts.citas} citas, ${r.counts.llamadas} llamadas.

clinica.jsonl       Todos los registros en el formato de importación (JSON Lines): primero las
                    clientas, luego las citas y las llamadas. Se importa tal cual en otra
                    clínica con: clinic-api import --clinic ID clinica.jsonl
clientas.csv        Las clientas, con las columnas del formato de importación.
citas.csv           Las citas, igual.
llamadas.csv        Las llamadas, igual.

Los .csv están en UTF-8, separados por comas; un texto que empieza por =, +, - o @ lleva
delante una comilla simple para que una hoja de cálculo no lo ejecute como fórmula.
Los campos calculados (total_citas, ultima_cita, ...) no se exportan: el servicio los calcula.
`;
  return `All the data of ${r.clinic}
Exported on ${r.madeAt}: ${r.counts.clientas} clients, ${r.counts.citas} appointments, ${r.counts.llamadas} calls.

clinica.jsonl       Every record in the import format (JSON Lines): the clients first, then
                    the appointments and the calls. Imported as it is into another clinic
                    with: clinic-api import --clinic ID clinica.jsonl
clientas.csv        The clients, with the import format's columns.
citas.csv           The appointments, likewise.
llamadas.csv        The calls, likewise.

The .csv files are UTF-8, comma-separated; a text that starts with =, +, - or @ gets a leading
single quote so that a spreadsheet never runs it as a formula. Derived fields (total_citas,
ultima_cita, ...) are not exported: the service computes them.
`;
}
