// Los textos de permisos, direcciones, fecha de caducidad, edición y renovación de una clave, en
// español (la sección `keys` de es.ts). Las palabras de cada permiso vienen de domain/scopes.ts,
// la lista única de permisos.
import { SCOPE_TEXTS, SCOPES } from '../../domain/scopes.js';
import type { KeyMessages } from './messages.js';

export const esKeys = {
  scopesLabel: 'Permisos',
  scopesHelp: 'Marca solo lo que el programa necesita. Puedes cambiarlo más tarde sin cambiar la clave.',
  scopes: Object.fromEntries(SCOPES.map((s) => [s, SCOPE_TEXTS[s].es])) as KeyMessages['scopes'],
  scopesExamples:
    'Por ejemplo: un panel de reservas necesita solo Citas; un asistente de IA, Citas, Clientas y Llamadas, sin Datos de contacto.',
  scopesInvalid: 'Marca al menos un permiso de la lista.',
  ipsLabel: 'Direcciones permitidas (opcional)',
  ipsHelp:
    'Direcciones IPv4 o IPv6, o rangos CIDR, desde los que se puede usar la clave, separados por comas o en líneas distintas (por ' +
    'ejemplo 203.0.113.7, 203.0.113.0/24). Vacío: desde cualquier dirección.',
  ipsProblem: {
    malformed: (p) => `«${p.entry}» no es una dirección IPv4 o IPv6 ni un rango CIDR (como 203.0.113.7 o 203.0.113.0/24).`,
    host_bits: (p) => `«${p.entry}» tiene bits después del prefijo: el rango es ${p.network}.`,
    too_many: (p) => `Son ${p.count} entradas; una clave admite como mucho 50.`,
  },
  dateLabel: 'Fecha de caducidad',
  dateHelp: 'Con «En una fecha»: la clave funciona hasta el final de ese día (hora de la clínica).',
  dateInvalid: (value) => `«${value}» no es una fecha. Escríbela como 2026-12-31.`,
  datePast: (value) => `${value} ya pasó. Elige hoy o una fecha posterior.`,
  allScopes: 'Todos los permisos',
  colAccess: 'Acceso',
  anyAddress: 'Desde cualquier dirección',
  onlyFrom: (list) => `Solo desde ${list}`,
  expiresSoon: { one: 'Caduca en {n} día', other: 'Caduca en {n} días' },
  expiresToday: 'Caduca hoy',
  replacedBadge: 'Sustituida',
  replaced: (when) => `Termina el ${when}; hasta entonces sigue a la clave que la sustituye`,
  replaces: (when) => `Sustituye a una clave que termina el ${when}`,
  editFollows: (when) =>
    `La clave antigua a la que sustituye esta funciona hasta el ${when}: hasta entonces recibe también estos cambios ` +
    '(nombre, permisos, direcciones).',
  revokeFollows: (when) => `También se revoca la clave antigua a la que sustituye esta, que habría funcionado hasta el ${when}.`,
  revokeOldOnly: (when) =>
    `Esta clave fue sustituida por una nueva y habría funcionado hasta el ${when}. Solo se revoca esta clave antigua; ` +
    'la nueva sigue funcionando.',
  edit: 'Editar',
  editKeyNamed: (name) => `Editar la clave «${name}»`,
  editTitle: (name) => `Editar la clave «${name}»`,
  editLead:
    'Los cambios se aplican a las peticiones con esta clave en unos segundos. La clave en sí no cambia: el programa que la usa no tiene ' +
    'que hacer nada.',
  saveButton: 'Guardar cambios',
  editHasErrors: 'No se guardó nada. Revisa el campo marcado.',
  updatedNotice: (name) => `Se guardaron los cambios de la clave «${name}».`,
  notActive: 'Esta clave ya no está activa: no se puede cambiar ni renovar.',
  roll: 'Renovar',
  rollKeyNamed: (name) => `Renovar la clave «${name}»`,
  rollTitle: (name) => `¿Renovar la clave «${name}»?`,
  rollText:
    'Se crea una clave nueva con el mismo nombre, permisos y direcciones, y se muestra una sola vez. Pon la nueva en el programa antes ' +
    'de que la antigua deje de funcionar.',
  rollKeeps: 'Si la clave caduca, la nueva dura lo mismo desde hoy.',
  rollFollows:
    'Mientras la clave antigua siga funcionando, sigue a la nueva: si cambias los permisos o direcciones de la nueva, cambian también ' +
    'los suyos, y si revocas la nueva, se revoca también. También puedes revocarla sola.',
  overlapLabel: 'La clave antigua sigue funcionando',
  overlapOptions: {
    '0': 'No: deja de funcionar ya',
    '3600': 'Durante 1 hora',
    '86400': 'Durante 24 horas',
    '259200': 'Durante 3 días',
    '604800': 'Durante 7 días',
  },
  overlapInvalid: 'Elige cuánto tiempo sigue funcionando la clave antigua.',
  rollConfirm: 'Crear la clave nueva',
  rolledOldUntil: (when) => `La clave antigua funciona hasta el ${when}; después deja de funcionar.`,
  rolledOldEnded: 'La clave antigua ya no funciona.',
} satisfies KeyMessages;
