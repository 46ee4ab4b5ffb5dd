// Dashboard text in English and Spanish. Which set a page uses is decided by resolveLang()
// (a person's explicit choice, the clinic's `language`, Accept-Language, Spanish). English is the
// reference type, so a Spanish string that goes missing is a compile error. Counted phrases are
// Plural forms chosen with Intl.PluralRules, so a language with other plural rules (e.g. Polish's
// few/many) only needs its own forms, never code.

import { whEn, whEs } from './i18n-webhooks.js';

export type Lang = 'es' | 'en';

/** Every language the dashboard speaks, in the order the language switch lists them. */
export const LANGS: readonly Lang[] = ['es', 'en'];

/** Each language's name in that language (what the switch shows, so everyone finds their own). */
export const LANG_NAMES: Record<Lang, string> = { es: 'Español', en: 'English' };

/**
 * A counted phrase by CLDR plural category (Intl.PluralRules); `{n}` is the count formatted with
 * the locale's grouping. A category a language does not list falls back to `other`.
 */
export type Plural = { readonly other: string } & { readonly [K in Intl.LDMLPluralRule]?: string };

const en = {
  htmlLang: 'en',
  locale: 'en-GB',
  appName: 'Clinic dashboard',
  skipToContent: 'Skip to content',
  signOut: 'Sign out',
  signedInAs: 'Signed in as',
  roles: { owner: 'Owner', staff: 'Staff', superadmin: 'Superadmin' } as Record<string, string>,
  plans: { basic: 'Basic', pro: 'Pro', pro_total: 'Pro Total', enterprise: 'Enterprise', premium: 'Premium' } as Record<string, string>,
  settings: 'Settings',
  api: 'API',
  languageLabel: 'Language',

  signInTitle: 'Sign in',
  signInLead: 'Use the e-mail and password of your clinic account.',
  email: 'E-mail',
  password: 'Password',
  signInButton: 'Sign in',
  signInHelp: 'No account, or forgot your password? Ask your clinic’s owner or your administrator.',
  badCredentials: 'The e-mail or the password is not correct.',
  throttled: {
    one: 'Too many failed attempts. For your security, wait {n} minute and try again.',
    other: 'Too many failed attempts. For your security, wait {n} minutes and try again.',
  } as Plural,
  signInBusy: 'Too many sign-in attempts right now. Try again in a moment.',
  signedOut: 'You have signed out.',
  sessionExpired: 'Your session has expired. Sign in again to continue.',

  pageTitle: 'API keys',
  pageLead:
    'API keys let other programs, such as your website, your CRM or your reports, read this clinic’s appointments, clients and calls. A key works until you revoke it or it expires.',
  planLabel: 'Plan',
  howToTitle: 'How a program uses a key',
  howToText: 'It sends the key in every request, in this header:',
  howToMore: 'Each key belongs to this clinic only and can only read data; it can change nothing.',

  createTitle: 'Create a key',
  nameLabel: 'Name',
  nameHelp: 'So you recognise it later, e.g. “Website bookings” or “Monthly report”.',
  expiryLabel: 'Expires',
  expiryOptions: { never: 'Never', '30': 'In 30 days', '90': 'In 90 days', '365': 'In 365 days (1 year)' } as Record<string, string>,
  createButton: 'Create key',
  nameInvalid: 'Give the key a name of 1 to 100 characters.',
  expiryInvalid: 'Choose when the key expires.',
  formHasErrors: 'The key was not created. Check the field marked below.',

  newKeyTitle: (name: string) => `Your new key “${name}”`,
  newKeyWarning:
    'Copy it now and keep it somewhere safe. You won’t see it again: only a fingerprint of it is stored, so nobody can show it to you later.',
  newKeyLabel: 'New API key',
  copy: 'Copy',
  copied: 'Copied to the clipboard.',
  copyFailed: 'Could not copy automatically: select the key and copy it by hand.',
  newKeyDone: 'I have copied it',
  newKeyExpires: (when: string) => `It expires on ${when}.`,
  newKeyNoExpiry: 'It does not expire; revoke it when you no longer need it.',

  keysTitle: 'Keys',
  colName: 'Name',
  colKey: 'Key',
  colCreatedBy: 'Created by',
  colCreated: 'Created',
  colLastUsed: 'Last used',
  colExpires: 'Expires',
  colStatus: 'Status',
  colActions: 'Actions',
  neverUsed: 'Never',
  noExpiry: 'Never',
  createdByCli: 'Command line',
  status: { active: 'Active', revoked: 'Revoked', expired: 'Expired' } as Record<string, string>,
  revoke: 'Revoke',
  revokeKeyNamed: (name: string) => `Revoke the key “${name}”`,
  noKeys: 'This clinic has no API keys yet.',
  noKeysCreateHint: 'Create the first one above.',

  staffCannotTitle: 'Only the clinic owner can create or revoke API keys.',
  staffCannotText: (owners: string | null) =>
    owners
      ? `If you need a key, ask ${owners}. You can still see the keys and how they are used.`
      : 'If you need a key, ask the clinic owner. You can still see the keys and how they are used.',
  planTitle: (plan: string) => `The API is not included in the ${plan} plan.`,
  planText: (plans: string) =>
    `To create API keys, upgrade the clinic to ${plans}. Keys that already exist keep working until they are revoked or expire.`,
  revokedNotice: (name: string) => `The key “${name}” is revoked. Requests that use it are refused from now on.`,

  usageTitle: { one: 'Usage in the last day', other: 'Usage in the last {n} days' } as Plural,
  usageLead: (tz: string) => `Requests each key made per day (${tz} time). A working integration shows steady bars with few or no errors.`,
  legendOk: 'Successful',
  legendErrors: 'Errors',
  requests: { one: '{n} request', other: '{n} requests' } as Plural,
  errorsCount: { one: '{n} with an error', other: '{n} with errors' } as Plural,
  okRequests: { one: '{n} successful request', other: '{n} successful requests' } as Plural,
  /** `ok` and `err` are okRequests and errorsCount, already counted */
  dayBar: (day: string, ok: string, err: string) => `${day}: ${ok}, ${err}`,
  lastErrors: 'Last errors',
  noErrors: 'No errors.',
  noUsageAtAll: { one: 'No key has made requests in the last day.', other: 'No key has made requests in the last {n} days.' } as Plural,
  idleKeys: { one: 'No requests in the last day:', other: 'No requests in the last {n} days:' } as Plural,
  errorTimes: { one: '{n} time', other: '{n} times' } as Plural,
  errorHelp: {
    invalid_parameter: 'a request had a wrong parameter value',
    unknown_parameter: 'a request used a parameter the API does not take',
    not_found: 'a request asked for a path that does not exist',
    method_not_allowed: 'a request used a method other than GET',
    too_many_requests: 'too many requests per second',
    database_error: 'a temporary failure on our side',
    internal_error: 'an unexpected failure on our side',
  } as Record<string, string>,

  superadminBar: 'You are a superadmin: you can act for any clinic.',
  clinicLabel: 'Clinic',
  switchClinic: 'Open',
  chooseClinicTitle: 'Choose a clinic',
  chooseClinicLead: 'As a superadmin you can manage the API keys of any clinic.',
  noClinics: 'There are no clinics yet.',

  revokeTitle: (name: string) => `Revoke the key “${name}”?`,
  revokeText: 'Any program that uses this key stops working at once: its requests are refused with the error 401 invalid_api_key.',
  revokeUndo: 'This cannot be undone. To reconnect the program, create a new key and put it in the program’s settings.',
  revokeConfirm: 'Revoke key',
  cancel: 'Cancel',
  alreadyRevoked: 'This key is already revoked.',

  notFoundTitle: 'Page not found',
  notFoundText: 'There is nothing at this address.',
  forbiddenTitle: 'You can’t do this',
  forbiddenRole: 'Only the clinic owner or a superadmin can create or revoke API keys.',
  forbiddenPlan: 'This clinic’s plan does not include the API.',
  csrfTitle: 'This form has expired',
  csrfText: 'The form was too old or did not come from this page, so nothing was changed. Go back, reload the page and try again.',
  apiKeyTitle: 'API keys are not accepted here',
  apiKeyText: 'The dashboard is for people: sign in with your e-mail and password. API keys work only with the API, under /api/v1/.',
  errorTitle: 'Something went wrong',
  errorText: 'Nothing was changed. Try again in a moment; if it keeps happening, give support this reference:',
  badRequestTitle: 'The request could not be read',
  badRequestText: 'Go back and try again.',
  unusableTextTitle: 'A field cannot be saved as it is',
  unusableTextText: 'It holds invisible control characters (such as a NUL byte) or is far too long. Go back, retype it and try again.',
  overloadedTitle: 'The service is very busy',
  overloadedText: 'Nothing was changed. Wait a few seconds and try again.',
  writeBusyTitle: 'The data is being updated',
  writeBusyText:
    'Another process (an import, most likely) is writing to the database, so nothing was changed. Try again in a moment: your change is not lost, just not made yet.',
  backToDashboard: 'Back to the dashboard',
  goToSignIn: 'Go to sign-in',
  timesIn: (tz: string) => `Times are shown in the clinic’s time zone, ${tz}.`,
  wh: whEn,
};

export type Messages = typeof en;

const es: Messages = {
  htmlLang: 'es',
  locale: 'es-ES',
  appName: 'Panel de la clínica',
  skipToContent: 'Saltar al contenido',
  signOut: 'Cerrar sesión',
  signedInAs: 'Sesión iniciada como',
  roles: { owner: 'Titular', staff: 'Personal', superadmin: 'Superadmin' },
  plans: { basic: 'Basic', pro: 'Pro', pro_total: 'Pro Total', enterprise: 'Enterprise', premium: 'Premium' },
  settings: 'Ajustes',
  api: 'API',
  languageLabel: 'Idioma',

  signInTitle: 'Iniciar sesión',
  signInLead: 'Usa el correo y la contraseña de tu cuenta de la clínica.',
  email: 'Correo electrónico',
  password: 'Contraseña',
  signInButton: 'Entrar',
  signInHelp: '¿No tienes cuenta o has olvidado la contraseña? Pídesela a la persona titular de tu clínica o a tu administrador.',
  badCredentials: 'El correo o la contraseña no son correctos.',
  throttled: {
    one: 'Demasiados intentos fallidos. Por seguridad, espera {n} minuto y vuelve a intentarlo.',
    other: 'Demasiados intentos fallidos. Por seguridad, espera {n} minutos y vuelve a intentarlo.',
  },
  signInBusy: 'Hay demasiados intentos de inicio de sesión en este momento. Vuelve a intentarlo dentro de un momento.',
  signedOut: 'Has cerrado la sesión.',
  sessionExpired: 'Tu sesión ha caducado. Vuelve a iniciar sesión para continuar.',

  pageTitle: 'Claves de API',
  pageLead:
    'Las claves de API permiten que otros programas, como tu web, tu CRM o tus informes, lean las citas, clientas y llamadas de esta clínica. Una clave funciona hasta que la revocas o caduca.',
  planLabel: 'Plan',
  howToTitle: 'Cómo usa un programa la clave',
  howToText: 'La envía en cada petición, en esta cabecera:',
  howToMore: 'Cada clave es solo de esta clínica y solo permite leer datos; no puede cambiar nada.',

  createTitle: 'Crear una clave',
  nameLabel: 'Nombre',
  nameHelp: 'Para reconocerla después, p. ej. «Reservas web» o «Informe mensual».',
  expiryLabel: 'Caduca',
  expiryOptions: { never: 'Nunca', '30': 'En 30 días', '90': 'En 90 días', '365': 'En 365 días (1 año)' },
  createButton: 'Crear clave',
  nameInvalid: 'Ponle a la clave un nombre de 1 a 100 caracteres.',
  expiryInvalid: 'Elige cuándo caduca la clave.',
  formHasErrors: 'No se ha creado la clave. Revisa el campo marcado abajo.',

  newKeyTitle: (name: string) => `Tu nueva clave «${name}»`,
  newKeyWarning:
    'Cópiala ahora y guárdala en un lugar seguro. No volverás a verla: solo se guarda una huella de ella, así que nadie podrá enseñártela después.',
  newKeyLabel: 'Nueva clave de API',
  copy: 'Copiar',
  copied: 'Copiada al portapapeles.',
  copyFailed: 'No se ha podido copiar automáticamente: selecciona la clave y cópiala a mano.',
  newKeyDone: 'Ya la he copiado',
  newKeyExpires: (when: string) => `Caduca el ${when}.`,
  newKeyNoExpiry: 'No caduca; revócala cuando ya no la necesites.',

  keysTitle: 'Claves',
  colName: 'Nombre',
  colKey: 'Clave',
  colCreatedBy: 'Creada por',
  colCreated: 'Creada',
  colLastUsed: 'Último uso',
  colExpires: 'Caduca',
  colStatus: 'Estado',
  colActions: 'Acciones',
  neverUsed: 'Nunca',
  noExpiry: 'Nunca',
  createdByCli: 'Línea de comandos',
  status: { active: 'Activa', revoked: 'Revocada', expired: 'Caducada' },
  revoke: 'Revocar',
  revokeKeyNamed: (name: string) => `Revocar la clave «${name}»`,
  noKeys: 'Esta clínica aún no tiene claves de API.',
  noKeysCreateHint: 'Crea la primera arriba.',

  staffCannotTitle: 'Solo la persona titular de la clínica puede crear o revocar claves de API.',
  staffCannotText: (owners: string | null) =>
    owners
      ? `Si necesitas una clave, pídesela a ${owners}. Puedes ver las claves y cómo se usan.`
      : 'Si necesitas una clave, pídesela a la persona titular de la clínica. Puedes ver las claves y cómo se usan.',
  planTitle: (plan: string) => `La API no está incluida en el plan ${plan}.`,
  planText: (plans: string) =>
    `Para crear claves de API, cambia la clínica a ${plans}. Las claves que ya existen siguen funcionando hasta que se revoquen o caduquen.`,
  revokedNotice: (name: string) => `La clave «${name}» está revocada. Las peticiones que la usen se rechazan desde ahora.`,

  usageTitle: { one: 'Uso en el último día', other: 'Uso en los últimos {n} días' },
  usageLead: (tz: string) =>
    `Peticiones de cada clave por día (hora de ${tz}). Una integración que funciona muestra barras regulares con pocos errores o ninguno.`,
  legendOk: 'Correctas',
  legendErrors: 'Con error',
  requests: { one: '{n} petición', other: '{n} peticiones' },
  errorsCount: { one: '{n} con error', other: '{n} con error' },
  okRequests: { one: '{n} correcta', other: '{n} correctas' },
  dayBar: (day: string, ok: string, err: string) => `${day}: ${ok}, ${err}`,
  lastErrors: 'Últimos errores',
  noErrors: 'Sin errores.',
  noUsageAtAll: {
    one: 'Ninguna clave ha hecho peticiones en el último día.',
    other: 'Ninguna clave ha hecho peticiones en los últimos {n} días.',
  },
  idleKeys: { one: 'Sin peticiones en el último día:', other: 'Sin peticiones en los últimos {n} días:' },
  errorTimes: { one: '{n} vez', other: '{n} veces' },
  errorHelp: {
    invalid_parameter: 'una petición llevaba un parámetro con un valor incorrecto',
    unknown_parameter: 'una petición usó un parámetro que la API no admite',
    not_found: 'una petición pidió una ruta que no existe',
    method_not_allowed: 'una petición usó un método distinto de GET',
    too_many_requests: 'demasiadas peticiones por segundo',
    database_error: 'un fallo temporal de nuestro lado',
    internal_error: 'un fallo inesperado de nuestro lado',
  },

  superadminBar: 'Eres superadmin: puedes actuar en nombre de cualquier clínica.',
  clinicLabel: 'Clínica',
  switchClinic: 'Abrir',
  chooseClinicTitle: 'Elige una clínica',
  chooseClinicLead: 'Como superadmin puedes gestionar las claves de API de cualquier clínica.',
  noClinics: 'Aún no hay clínicas.',

  revokeTitle: (name: string) => `¿Revocar la clave «${name}»?`,
  revokeText:
    'Cualquier programa que use esta clave dejará de funcionar al momento: sus peticiones se rechazarán con el error 401 invalid_api_key.',
  revokeUndo: 'No se puede deshacer. Para volver a conectar el programa, crea una clave nueva y ponla en la configuración del programa.',
  revokeConfirm: 'Revocar clave',
  cancel: 'Cancelar',
  alreadyRevoked: 'Esta clave ya está revocada.',

  notFoundTitle: 'Página no encontrada',
  notFoundText: 'No hay nada en esta dirección.',
  forbiddenTitle: 'No puedes hacer esto',
  forbiddenRole: 'Solo la persona titular de la clínica o un superadmin pueden crear o revocar claves de API.',
  forbiddenPlan: 'El plan de esta clínica no incluye la API.',
  csrfTitle: 'Este formulario ha caducado',
  csrfText:
    'El formulario era demasiado antiguo o no se envió desde esta página, así que no se ha cambiado nada. Vuelve atrás, recarga la página y prueba otra vez.',
  apiKeyTitle: 'Aquí no se aceptan claves de API',
  apiKeyText:
    'El panel es para personas: inicia sesión con tu correo y tu contraseña. Las claves de API solo sirven para la API, en /api/v1/.',
  errorTitle: 'Algo ha fallado',
  errorText: 'No se ha cambiado nada. Prueba de nuevo en un momento; si sigue pasando, da a soporte esta referencia:',
  badRequestTitle: 'No se ha podido leer la petición',
  badRequestText: 'Vuelve atrás y prueba otra vez.',
  unusableTextTitle: 'Un campo no se puede guardar así',
  unusableTextText:
    'Contiene caracteres de control invisibles (como un byte NUL) o es demasiado largo. Vuelve atrás, escríbelo de nuevo y prueba otra vez.',
  overloadedTitle: 'El servicio está muy ocupado',
  overloadedText: 'No se ha cambiado nada. Espera unos segundos y prueba otra vez.',
  writeBusyTitle: 'Se están actualizando los datos',
  writeBusyText:
    'Otro proceso (seguramente una importación) está escribiendo en la base de datos, así que no se ha cambiado nada. Prueba otra vez en un momento: tu cambio no se ha perdido, solo no se ha hecho todavía.',
  backToDashboard: 'Volver al panel',
  goToSignIn: 'Ir a iniciar sesión',
  timesIn: (tz: string) => `Las horas se muestran en la zona horaria de la clínica, ${tz}.`,
  wh: whEs,
};

const MESSAGES: Record<Lang, Messages> = { en, es };

export function messages(lang: Lang): Messages {
  return MESSAGES[lang];
}

export function asLang(value: unknown): Lang | null {
  return (LANGS as readonly unknown[]).includes(value) ? (value as Lang) : null;
}

/**
 * The language of a dashboard page, most explicit first: a `?lang=` (or the sign-in form's
 * hidden `lang`) for that page only, then the person's stored choice (the language cookie), then
 * the language of the clinic in view (signed-in pages), then the browser's Accept-Language, then
 * Spanish. Each input is already validated (null when absent or unknown).
 */
export function resolveLang(o: { page?: Lang | null; chosen?: Lang | null; clinic?: Lang | null; acceptLanguage?: string }): Lang {
  return o.page ?? o.chosen ?? o.clinic ?? negotiateLang(o.acceptLanguage);
}

const pluralRules = new Map<string, Intl.PluralRules>();
const numberFormats = new Map<string, Intl.NumberFormat>();

/** `forms` for the count `n` in `locale`: the plural category of n, with n formatted for the locale. */
export function countIn(locale: string, forms: Plural, n: number): string {
  let rules = pluralRules.get(locale);
  if (!rules) pluralRules.set(locale, (rules = new Intl.PluralRules(locale)));
  let number = numberFormats.get(locale);
  if (!number) numberFormats.set(locale, (number = new Intl.NumberFormat(locale)));
  const form = forms[rules.select(n)] ?? forms.other;
  return form.replaceAll('{n}', number.format(n));
}

/** `forms` for the count `n` in the language of `t`. */
export function count(t: Messages, forms: Plural, n: number): string {
  return countIn(t.locale, forms, n);
}

/** Spanish unless the browser prefers English over Spanish (Accept-Language, q-values honoured). */
export function negotiateLang(acceptLanguage: string | undefined): Lang {
  if (!acceptLanguage) return 'es';
  let best: { lang: Lang; q: number } | null = null;
  for (const part of acceptLanguage.split(',').slice(0, 20)) {
    const [tag, ...params] = part.trim().split(';');
    const base = tag?.trim().toLowerCase().split('-')[0];
    const lang = asLang(base);
    if (!lang) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp ? Number(qp.slice(2)) : 1;
    if (!Number.isFinite(q) || q <= 0) continue;
    if (!best || q > best.q) best = { lang, q };
  }
  return best?.lang ?? 'es';
}

/** Formatting in the clinic's language and time zone. */
export class Formatter {
  private readonly dateTime: Intl.DateTimeFormat;
  private readonly date: Intl.DateTimeFormat;
  private readonly weekday: Intl.DateTimeFormat;
  private readonly longDay: Intl.DateTimeFormat;
  private readonly number: Intl.NumberFormat;
  private readonly relative: Intl.RelativeTimeFormat;
  private readonly orList: Intl.ListFormat;

  constructor(
    readonly t: Messages,
    readonly timeZone: string,
    private readonly nowMs: number,
  ) {
    this.dateTime = new Intl.DateTimeFormat(t.locale, { dateStyle: 'medium', timeStyle: 'short', timeZone });
    this.date = new Intl.DateTimeFormat(t.locale, { dateStyle: 'medium', timeZone });
    this.weekday = new Intl.DateTimeFormat(t.locale, { weekday: 'short', day: 'numeric', timeZone: 'UTC' });
    this.longDay = new Intl.DateTimeFormat(t.locale, { weekday: 'long', day: 'numeric', month: 'long', timeZone: 'UTC' });
    this.number = new Intl.NumberFormat(t.locale);
    this.relative = new Intl.RelativeTimeFormat(t.locale, { numeric: 'auto' });
    this.orList = new Intl.ListFormat(t.locale, { type: 'disjunction' });
  }

  /** A counted phrase: "1 petición", "2 peticiones", "12.345 peticiones". */
  count(forms: Plural, n: number): string {
    return count(this.t, forms, n);
  }

  /** "a, b or c" in the page's language (Spanish also turns "o" into "u" before an o- sound). */
  or(items: readonly string[]): string {
    return this.orList.format(items);
  }

  dateTimeOf(epochS: number): string {
    return this.dateTime.format(epochS * 1000);
  }

  dateOf(epochS: number): string {
    return this.date.format(epochS * 1000);
  }

  /** `YYYY-MM-DD` as a short weekday and day number, e.g. "sáb 21". */
  shortDay(day: string): string {
    return this.weekday.format(Date.parse(`${day}T12:00:00Z`));
  }

  longDayOf(day: string): string {
    return this.longDay.format(Date.parse(`${day}T12:00:00Z`));
  }

  num(n: number): string {
    return this.number.format(n);
  }

  /** "5 minutes ago", "yesterday"... relative to the page's now. */
  ago(epochS: number): string {
    const diff = epochS - Math.floor(this.nowMs / 1000);
    const abs = Math.abs(diff);
    if (abs < 60) return this.relative.format(0, 'second');
    if (abs < 3600) return this.relative.format(Math.round(diff / 60), 'minute');
    if (abs < 86_400) return this.relative.format(Math.round(diff / 3600), 'hour');
    if (abs < 30 * 86_400) return this.relative.format(Math.round(diff / 86_400), 'day');
    return this.dateOf(epochS);
  }
}
