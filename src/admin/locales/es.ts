// The dashboard's texts in Spanish: one object, checked against the Messages type
// (messages.ts) with `satisfies`, so a missing or extra text is a compile error. Keep the keys in
// the same order as en.ts, so the two files read side by side. How to add a text:
// docs/dashboard.md, "Adding a text".
import { esKeys } from './es-keys.js';
import { esSandbox } from './sandbox-messages.js';
import { esLogs } from './es-logs.js';
import type { Messages } from './messages.js';

export const es = {
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
    'Las claves de API permiten que otros programas, como tu web, tu CRM o tus informes, lean las citas, clientas y llamadas de esta ' +
    'clínica. Una clave funciona hasta que la revocas o caduca.',
  planLabel: 'Plan',
  howToTitle: 'Cómo usa un programa la clave',
  howToText: 'La envía en cada petición, en esta cabecera:',
  howToMore: 'Cada clave es solo de esta clínica y solo permite leer datos; no puede cambiar nada.',
  mcpTitle: 'Asistentes de IA',
  mcpText:
    'Claude, ChatGPT, Cursor, VS Code y otros asistentes de IA se conectan a esta dirección (un servidor MCP), con una clave enviada en ' +
    'la misma cabecera:',
  mcpMore: (contact) =>
    `Crea una clave para cada asistente, así podrás revocarla sola, y deja sin marcar «${contact}»: responderá sobre citas, clientas y ` +
    `llamadas por el nombre sin ver nunca un teléfono, un correo ni una nota. Como cualquier clave, solo lee los datos de esta clínica.`,

  createTitle: 'Crear una clave',
  nameLabel: 'Nombre',
  nameHelp: 'Para reconocerla después, p. ej. «Reservas web» o «Informe mensual».',
  expiryLabel: 'Caduca',
  expiryOptions: { never: 'Nunca', '30': 'En 30 días', '90': 'En 90 días', '365': 'En 365 días (1 año)', date: 'En una fecha' },
  createButton: 'Crear clave',
  nameInvalid: 'Ponle a la clave un nombre de 1 a 100 caracteres.',
  expiryInvalid: 'Elige cuándo caduca la clave.',
  formHasErrors: 'No se ha creado la clave. Revisa el campo marcado abajo.',

  newKeyTitle: (name) => `Tu nueva clave «${name}»`,
  newKeyWarning:
    'Cópiala ahora y guárdala en un lugar seguro. No volverás a verla: solo se guarda una huella de ella, así que nadie podrá ' +
    'enseñártela después.',
  newKeyLabel: 'Nueva clave de API',
  copy: 'Copiar',
  copied: 'Copiada al portapapeles.',
  copyFailed: 'No se ha podido copiar automáticamente: selecciona la clave y cópiala a mano.',
  newKeyDone: 'Ya la he copiado',
  newKeyExpires: (when) => `Caduca el ${when}.`,
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
  revokeKeyNamed: (name) => `Revocar la clave «${name}»`,
  noKeys: 'Esta clínica aún no tiene claves de API.',
  noKeysCreateHint: 'Crea la primera arriba.',

  staffCannotTitle: 'Solo la persona titular de la clínica puede crear o revocar claves de API.',
  staffCannotText: (owners) =>
    owners
      ? `Si necesitas una clave, pídesela a ${owners}. Puedes ver las claves y cómo se usan.`
      : 'Si necesitas una clave, pídesela a la persona titular de la clínica. Puedes ver las claves y cómo se usan.',
  planTitle: (plan) => `La API no está incluida en el plan ${plan}.`,
  planText: (plans) =>
    `Para crear claves de API, cambia la clínica a ${plans}. Las claves que ya existen siguen funcionando hasta que se revoquen o ` +
    `caduquen.`,
  revokedNotice: (name) => `La clave «${name}» está revocada. Las peticiones que la usen se rechazan desde ahora.`,

  usageTitle: { one: 'Uso en el último día', other: 'Uso en los últimos {n} días' },
  usageLead: (tz) =>
    `Peticiones de cada clave por día (hora de ${tz}). Una integración que funciona muestra barras regulares con pocos errores o ninguno.`,
  legendOk: 'Correctas',
  legendErrors: 'Con error',
  requests: { one: '{n} petición', other: '{n} peticiones' },
  errorsCount: { one: '{n} con error', other: '{n} con error' },
  okRequests: { one: '{n} correcta', other: '{n} correctas' },
  dayBar: (day, ok, err) => `${day}: ${ok}, ${err}`,
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
    malformed_request: 'una petición no era HTTP válido (una línea de petición o una cabecera mal formada)',
    missing_api_key: 'una petición llegó sin la clave en la cabecera Authorization',
    invalid_api_key: 'una petición usó una clave desconocida, revocada o caducada',
    insufficient_scope: 'una petición pidió datos que la clave no tiene permiso para leer (edita sus permisos si los necesita)',
    ip_not_allowed: 'una petición llegó desde una dirección que la clave no admite (¿la usa alguien desde otro sitio?)',
    not_found: 'una petición pidió una ruta que no existe',
    method_not_allowed: 'una petición usó un método que esa ruta no admite',
    request_timeout: 'una petición no llegó completa a tiempo',
    conflict: 'una petición no se pudo hacer: se llegó al máximo de webhooks, o se repitió una Idempotency-Key con otro contenido',
    cursor_expired: 'una petición pidió a /eventos cambios más antiguos que los que se guardan; el programa debe volver a leerlo todo',
    payload_too_large: 'una petición envió un cuerpo demasiado grande',
    unsupported_media_type: 'una petición envió un cuerpo que no era JSON',
    too_many_requests: 'demasiadas peticiones por segundo',
    headers_too_large: 'una petición envió demasiadas cabeceras, o demasiado largas',
    database_error: 'un fallo temporal de nuestro lado',
    internal_error: 'un fallo inesperado de nuestro lado',
    service_unavailable: 'el servicio estaba sobrecargado en ese momento',
  },

  superadminBar: 'Eres superadmin: puedes actuar en nombre de cualquier clínica.',
  clinicLabel: 'Clínica',
  switchClinic: 'Abrir',
  chooseClinicTitle: 'Elige una clínica',
  chooseClinicLead: 'Como superadmin puedes gestionar las claves de API de cualquier clínica.',
  noClinics: 'Aún no hay clínicas.',

  revokeTitle: (name) => `¿Revocar la clave «${name}»?`,
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
    'El formulario era demasiado antiguo o no se envió desde esta página, así que no se ha cambiado nada. Vuelve atrás, recarga la ' +
    'página y prueba otra vez.',
  apiKeyTitle: 'Aquí no se aceptan claves de API',
  apiKeyText:
    'El panel es para personas: inicia sesión con tu correo y tu contraseña. Las claves de API solo sirven para la API, en /api/v1/.',
  errorTitle: 'Algo ha fallado',
  errorText: 'No se ha cambiado nada. Prueba de nuevo en un momento; si sigue pasando, da a soporte esta referencia:',
  badRequestTitle: 'No se ha podido leer la petición',
  badRequestText: 'Vuelve atrás y prueba otra vez.',
  unusableTextTitle: 'Un campo no se puede guardar así',
  unusableTextText:
    'Contiene caracteres de control invisibles (como un byte NUL) o es demasiado largo. Vuelve atrás, escríbelo de nuevo y prueba otra ' +
    'vez.',
  overloadedTitle: 'El servicio está muy ocupado',
  overloadedText: 'No se ha cambiado nada. Espera unos segundos y prueba otra vez.',
  writeBusyTitle: 'Se están actualizando los datos',
  writeBusyText:
    'Otro proceso (seguramente una importación) está escribiendo en la base de datos, así que no se ha cambiado nada. Prueba otra vez en ' +
    'un momento: tu cambio no se ha perdido, solo no se ha hecho todavía.',
  backToDashboard: 'Volver al panel',
  goToSignIn: 'Ir a iniciar sesión',
  timesIn: (tz) => `Las horas se muestran en la zona horaria de la clínica, ${tz}.`,

  wh: {
    tabKeys: 'Claves de API',
    tabWebhooks: 'Webhooks',
    pageTitle: 'Webhooks',
    pageLead:
      'Un webhook envía cada cambio de las citas, clientas y llamadas de esta clínica a otro programa en el momento en que ocurre, ' +
      'firmado para que el programa pueda comprobar que viene de nosotros. Los envíos fallidos se reintentan durante 3 días.',
    createTitle: 'Añadir un destino',
    urlLabel: 'URL',
    urlHelp: 'La dirección del programa que recibe los eventos. Debe empezar por https://.',
    urlHelpPrivate:
      'La dirección del programa que recibe los eventos: https://, o http:// y direcciones de una red privada, que este servicio permite ' +
      '(su operador ha puesto WEBHOOK_ALLOW_PRIVATE).',
    eventsLabel: 'Eventos',
    eventsHelp: 'Deja todos sin marcar para recibir todos los eventos, también los tipos que se añadan más adelante.',
    createButton: 'Añadir destino',
    formHasErrors: 'El destino no se ha añadido. Revisa el campo marcado abajo.',
    refusals: {
      invalid_url: 'Escribe una dirección completa, como https://example.com/webhooks.',
      not_https:
        'La dirección debe empezar por https:// para que los datos viajen cifrados. Un programa receptor en una red privada (http://, ' +
        'una dirección interna) necesita que el operador de este servicio lo permita con WEBHOOK_ALLOW_PRIVATE.',
      not_http: 'La dirección debe empezar por https:// o http://.',
      userinfo: 'La dirección no debe contener un usuario ni una contraseña.',
      private_address:
        'Esa dirección está en una red privada o interna, a la que los webhooks no pueden llegar salvo que el operador de este servicio ' +
        'lo permita con WEBHOOK_ALLOW_PRIVATE.',
      unresolvable: 'No se ha encontrado el nombre de esa dirección. Comprueba que está bien escrito.',
      events: 'Elige tipos de evento de la lista.',
      limit: 'Esta clínica ya tiene 10 destinos, el máximo. Borra uno primero.',
    },
    newTitle: 'El secreto de firma de tu destino',
    newWarning:
      'Cópialo ahora y ponlo en la configuración del programa que recibe. No volverás a verlo: se guarda cifrado y nunca se muestra.',
    secretLabel: 'Secreto de firma',
    newDone: 'Ya lo he copiado',
    endpointsTitle: 'Destinos',
    noEndpoints: 'Esta clínica no tiene destinos de webhook.',
    colUrl: 'URL',
    colEvents: 'Eventos',
    colStatus: 'Estado',
    colCreated: 'Creado',
    allEvents: 'Todos los eventos',
    status: { active: 'Activo', failing: 'Con fallos', disabled: 'Desactivado' },
    details: 'Detalles',
    detailsOf: (url) => `Detalles de ${url}`,
    failingSince: (when, error) =>
      `Con fallos desde ${when} (último: ${error}). Los envíos se reintentan; tras 3 días de fallos el destino se desactiva.`,
    disabledFailing: (when, error) =>
      `Desactivado el ${when} tras 3 días de envíos fallidos (último: ${error}). Arregla el programa que recibe y actívalo: se envían ` +
      `los eventos ocurridos desde entonces.`,
    disabledManual: (when) => `Desactivado a mano el ${when}. Los eventos esperan; al activarlo sigue donde se quedó.`,
    disabledCredential: {
      key_revoked: (when) => `Desactivado el ${when}: se revocó la clave de API que lo creó. Los eventos esperan; actívalo para seguir.`,
      key_expired: (when) => `Desactivado el ${when}: caducó la clave de API que lo creó. Los eventos esperan; actívalo para seguir.`,
      grant_revoked: (when) =>
        `Desactivado el ${when}: se desconectó la aplicación que lo creó. Los eventos esperan; actívalo para seguir.`,
    },
    subscribedBy: 'Creado por',
    incidentTitle: 'Fallan los envíos de webhooks. Hay que arreglar el programa que los recibe:',
    incidentFailing: 'falla; se reintenta durante 3 días',
    incidentDisabled: 'desactivado tras 3 días de fallos; los eventos esperan a que se active',
    subscriber: { key: (name) => `Clave de API «${name}»`, app: (name) => `Aplicación «${name}»` },
    description: 'Descripción',
    staffCannotTitle: 'Solo la persona titular de la clínica puede añadir, cambiar o borrar webhooks.',
    staffCannotText: 'Puedes verlos, y sus envíos.',
    planText: (plans) => `Los webhooks vienen con la API. Para añadir destinos, cambia la clínica a ${plans}.`,
    sendTest: 'Enviar evento de prueba',
    disable: 'Desactivar',
    enable: 'Activar',
    delete: 'Borrar',
    resend: 'Reenviar',
    resendOf: (tipo, when) => `Reenviar ${tipo} de ${when}`,
    deliveriesTitle: 'Registro de envíos',
    log: {
      outcome: 'Resultado',
      any: 'Cualquiera',
      type: 'Evento',
      since: 'Desde',
      until: 'Hasta',
      apply: 'Filtrar',
      older: 'Intentos anteriores',
      details: 'Detalle',
      detailsOf: (tipo, when) => `Detalle de ${tipo} del ${when}`,
      attemptTitle: 'Intento de envío',
      eventId: 'Id del evento (webhook-id)',
      kind: 'Enviado por',
      nextRetry: 'Próximo intento',
      body: 'Respuesta (primer KB, secretos ocultos)',
      noBody: 'Sin cuerpo de respuesta.',
      kept: (days) => `Se guarda cada intento ${days} días; los más recientes primero.`,
    },
    noDeliveries: 'Aún no se ha enviado nada. Envía un evento de prueba para probar el destino.',
    colTime: 'Hora',
    colEvent: 'Evento',
    colAttempt: 'Intento',
    colResult: 'Resultado',
    colResponse: 'Respuesta',
    colDuration: 'Duración',
    outcome: { delivered: 'Entregado', failed: 'Fallido' },
    kinds: { auto: '', test: 'prueba', resend: 'reenviado', replay: 'repetido' },
    errors: {
      timeout: 'sin respuesta en 10 s',
      connection: 'no se pudo conectar',
      tls: 'certificado TLS no válido',
      dns: 'nombre de host no encontrado',
      refused_address: 'dirección privada rechazada (el operador las permite con WEBHOOK_ALLOW_PRIVATE)',
      redirect: 'redirección (no se sigue)',
    },
    testDelivered: (code) => `El evento de prueba se ha entregado (${code}).`,
    testFailed: (what) => `El evento de prueba no se ha aceptado: ${what}.`,
    resent: (what) => `Reenviado: ${what}.`,
    enabledNotice: 'El destino está activado. Los eventos pendientes se envían desde donde se quedó.',
    disabledNotice: 'El destino está desactivado. Los eventos esperan hasta que lo actives.',
    deletedNotice: (url) => `Se ha borrado el destino ${url}.`,
    deleteTitle: '¿Borrar este destino?',
    deleteText: 'Ya no se le envían eventos, tampoco los que están esperando. Su secreto deja de ser válido.',
    deleteUndo: 'No se puede deshacer; si añades la URL de nuevo, tendrá otro secreto.',
    deleteConfirm: 'Borrar destino',
    back: 'Volver a webhooks',
    docsHint: 'Cómo recibir y comprobar webhooks: docs/webhooks.md en la documentación de la API.',
  },
  keys: esKeys,
  logs: esLogs,
  sandbox: esSandbox,
} satisfies Messages;
