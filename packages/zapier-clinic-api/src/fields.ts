// The API's records as Zapier shows them: every field under its own (Spanish) name, exactly as
// the API answers it, with an English label for the field picker. Timestamps keep the clinic's
// UTC offset as the API gives them (Zapier's date tools read RFC 3339 with an offset as is).
// Each sample is a record as the API's documentation shows it, for the editor before any data.

type OutputField = { key: string; label: string; type?: 'string' | 'integer' | 'number' | 'boolean' | 'datetime' };

export const CITA_FIELDS: OutputField[] = [
  { key: 'id', label: 'Appointment ID' },
  { key: 'fecha_hora', label: "Date and time (clinic's time zone)", type: 'datetime' },
  { key: 'cliente_nombre', label: 'Client name' },
  { key: 'telefono', label: 'Client phone (E.164; empty without the contact details permission)' },
  { key: 'servicio', label: 'Service' },
  { key: 'duracion_min', label: 'Duration (minutes)', type: 'integer' },
  { key: 'precio', label: 'Price', type: 'number' },
  { key: 'moneda', label: 'Currency (ISO 4217)' },
  { key: 'estado', label: 'Status (pendiente, confirmada, completada, cancelada, no_asistio)' },
  { key: 'profesional_nombre', label: 'Professional' },
  { key: 'sede_nombre', label: 'Location' },
  { key: 'notas', label: 'Notes' },
  { key: 'created_at', label: 'Created at', type: 'datetime' },
  { key: 'updated_at', label: 'Last changed at', type: 'datetime' },
];

export const CLIENTA_FIELDS: OutputField[] = [
  { key: 'id', label: 'Client ID' },
  { key: 'nombre', label: 'Name' },
  { key: 'telefono', label: 'Phone (E.164; empty without the contact details permission)' },
  { key: 'email', label: 'Email' },
  { key: 'idioma', label: 'Preferred language' },
  { key: 'vip', label: 'VIP', type: 'boolean' },
  { key: 'total_citas', label: 'Appointments (all statuses)', type: 'integer' },
  { key: 'total_llamadas', label: 'Calls', type: 'integer' },
  { key: 'ultima_cita', label: 'Date of last appointment' },
  { key: 'ultima_llamada', label: 'Last call at', type: 'datetime' },
  { key: 'cliente_desde', label: 'Client since (date)' },
  { key: 'created_at', label: 'Created at', type: 'datetime' },
  { key: 'updated_at', label: 'Last changed at', type: 'datetime' },
];

export const LLAMADA_FIELDS: OutputField[] = [
  { key: 'id', label: 'Call ID' },
  { key: 'fecha_hora', label: "Date and time (clinic's time zone)", type: 'datetime' },
  { key: 'cliente_nombre', label: 'Client name (empty for an unknown caller)' },
  { key: 'telefono_caller', label: "Caller's phone (E.164)" },
  { key: 'duracion_segundos', label: 'Duration (seconds)', type: 'integer' },
  { key: 'resultado', label: 'Outcome (agendada, cancelada, info, transferida, sin_accion)' },
  { key: 'idioma', label: 'Language of the call' },
  { key: 'created_at', label: 'Created at', type: 'datetime' },
  { key: 'updated_at', label: 'Last changed at', type: 'datetime' },
];

export const CITA_SAMPLE = {
  id: '24858e88-d2f1-40a6-9fc9-91500bc9b3cd',
  fecha_hora: '2026-11-21T11:15:00+01:00',
  cliente_nombre: 'Chloé Jiménez Sáez',
  telefono: '+34636084183',
  servicio: 'Presoterapia',
  duracion_min: 30,
  precio: 35,
  moneda: 'EUR',
  estado: 'confirmada',
  profesional_nombre: 'Laura Martín Ruiz',
  sede_nombre: 'Sede Nervión',
  notas: 'No usar acetona',
  created_at: '2026-11-21T07:57:37+01:00',
  updated_at: '2026-11-21T07:57:37+01:00',
};

export const CLIENTA_SAMPLE = {
  id: '6f2c1f0e-3b8a-4c51-9d7e-2a4b5c6d7e8f',
  nombre: 'María López García',
  telefono: '+34600123456',
  email: 'maria.lopez@example.com',
  idioma: 'es',
  vip: false,
  total_citas: 12,
  total_llamadas: 3,
  ultima_cita: '2026-11-14',
  ultima_llamada: '2026-11-20T18:02:11+01:00',
  cliente_desde: '2024-02-10',
  created_at: '2024-02-10T10:00:00+01:00',
  updated_at: '2026-11-20T18:02:11+01:00',
};

export const LLAMADA_SAMPLE = {
  id: '0b7d2c4e-5f61-4a82-93b4-c5d6e7f80912',
  fecha_hora: '2026-11-20T18:02:11+01:00',
  cliente_nombre: 'María López García',
  telefono_caller: '+34600123456',
  duracion_segundos: 95,
  resultado: 'agendada',
  idioma: 'es',
  created_at: '2026-11-20T18:03:50+01:00',
  updated_at: '2026-11-20T18:03:50+01:00',
};
