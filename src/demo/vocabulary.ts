// Spanish word lists for the demo generator. Kept apart from the generator so that the logic
// stays short, and so that the lists can grow without touching it. Accents are deliberate: the
// API's accent-insensitive search (`maria` finds `María`) needs data that exercises it.

/** Clients of a beauty clinic are mostly women; `generate.ts` mixes in some men. */
export const NOMBRES_MUJER = [
  'María', 'María José', 'María del Mar', 'María Jesús', 'María Ángeles', 'Ana', 'Ana Belén',
  'Lucía', 'Sofía', 'Martina', 'Paula', 'Julia', 'Valeria', 'Daniela', 'Alba', 'Irene', 'Carmen',
  'Pilar', 'Rosa', 'Isabel', 'Laura', 'Marta', 'Elena', 'Cristina', 'Raquel', 'Beatriz', 'Begoña',
  'Nuria', 'Ángela', 'Inés', 'Noelia', 'Silvia', 'Patricia', 'Mónica', 'Verónica', 'Sonia',
  'Yolanda', 'Montserrat', 'Mercedes', 'Rocío', 'Inmaculada', 'Concepción', 'Dolores', 'Teresa',
  'Lorena', 'Sara', 'Andrea', 'Claudia', 'Nerea', 'Ainhoa', 'Itziar', 'Leire', 'Jimena', 'Olga',
  'Eva', 'Susana', 'Esther', 'Gemma', 'Judith', 'Miriam', 'Araceli', 'Remedios', 'Estefanía',
  'Maite', 'Lourdes', 'Almudena', 'Macarena', 'Triana', 'Candela', 'Chloé',
] as const;

export const NOMBRES_HOMBRE = [
  'José', 'Antonio', 'Manuel', 'Francisco', 'David', 'Javier', 'Daniel', 'Carlos', 'Jesús',
  'Alejandro', 'Miguel Ángel', 'José Luis', 'Rafael', 'Pablo', 'Sergio', 'Álvaro', 'Adrián',
  'Iñaki', 'Jordi', 'Óscar', 'Rubén', 'Íñigo', 'Andrés', 'Raúl', 'Hugo',
] as const;

export const APELLIDOS = [
  'García', 'Rodríguez', 'González', 'Fernández', 'López', 'Martínez', 'Sánchez', 'Pérez',
  'Gómez', 'Martín', 'Jiménez', 'Ruiz', 'Hernández', 'Díaz', 'Moreno', 'Muñoz', 'Álvarez',
  'Romero', 'Alonso', 'Gutiérrez', 'Navarro', 'Torres', 'Domínguez', 'Vázquez', 'Ramos', 'Gil',
  'Ramírez', 'Serrano', 'Blanco', 'Molina', 'Morales', 'Suárez', 'Ortega', 'Delgado', 'Castro',
  'Ortiz', 'Rubio', 'Marín', 'Sanz', 'Núñez', 'Iglesias', 'Medina', 'Garrido', 'Cortés',
  'Castillo', 'Santos', 'Lozano', 'Guerrero', 'Cano', 'Prieto', 'Méndez', 'Cruz', 'Calvo',
  'Gallego', 'Vidal', 'León', 'Márquez', 'Herrera', 'Peña', 'Flores', 'Cabrera', 'Campos',
  'Vega', 'Fuentes', 'Carrasco', 'Diez', 'Caballero', 'Reyes', 'Aguilar', 'Pascual', 'Herrero',
  'Santana', 'Lorenzo', 'Montero', 'Ibáñez', 'Giménez', 'Ferrer', 'Durán', 'Benítez', 'Arias',
  'Mora', 'Vicente', 'Soler', 'Bravo', 'Roldán', 'Echevarría', 'Zubizarreta', 'Goñi',
  'Puig', 'Ferrández', 'Quintana', 'Sáez', 'de la Fuente', 'del Río', 'de la Cruz', 'Villanueva',
] as const;

export const DOMINIOS_EMAIL = [
  ['gmail.com', 50], ['hotmail.com', 16], ['yahoo.es', 8], ['outlook.es', 8], ['icloud.com', 6],
  ['hotmail.es', 5], ['telefonica.net', 3], ['gmail.es', 2], ['protonmail.com', 2],
] as const satisfies readonly (readonly [string, number])[];

/** Client language; null means "not recorded". */
export const IDIOMAS_CLIENTA = [
  ['es', 74], ['ca', 8], ['en', 5], ['fr', 2], ['eu', 1], [null, 10],
] as const satisfies readonly (readonly [string | null, number])[];

/** Language of a call from abroad, by E.164 country prefix (anything else: English). */
export const IDIOMA_POR_PREFIJO = [
  ['+33', 'fr'], ['+44', 'en'], ['+49', 'de'], ['+1', 'en'], ['+351', 'pt'], ['+39', 'it'],
] as const satisfies readonly (readonly [string, string])[];

/** [name, minutes, price in cents, relative frequency]. */
export const SERVICIOS = [
  ['Manicura semipermanente', 30, 2500, 14],
  ['Manicura clásica', 30, 1500, 6],
  ['Pedicura spa', 60, 4000, 7],
  ['Uñas de gel', 75, 3800, 6],
  ['Limpieza facial', 60, 5500, 9],
  ['Limpieza facial profunda', 75, 6500, 4],
  ['Peeling químico', 45, 9000, 3],
  ['Tratamiento antiedad', 60, 8500, 4],
  ['Hidratación facial con ácido hialurónico', 45, 7000, 3],
  ['Depilación láser piernas', 45, 12000, 6],
  ['Depilación láser axilas', 15, 4000, 6],
  ['Depilación láser ingles', 30, 6000, 4],
  ['Depilación con cera', 30, 2000, 6],
  ['Diseño de cejas', 15, 1200, 5],
  ['Lifting de pestañas', 60, 4500, 5],
  ['Extensiones de pestañas', 120, 9000, 2],
  ['Microblading', 120, 25000, 1],
  ['Masaje relajante', 60, 6000, 5],
  ['Masaje descontracturante', 45, 5000, 3],
  ['Drenaje linfático', 60, 6500, 2],
  ['Presoterapia', 30, 3500, 3],
  ['Radiofrecuencia corporal', 45, 7500, 2],
  ['Consulta de valoración', 15, 0, 2],
] as const satisfies readonly (readonly [string, number, number, number])[];

/** A clinic employs 4-6 of these (chosen per seed). */
export const PROFESIONALES = [
  'Laura Martín Ruiz', 'Elena Sánchez Vidal', 'Cristina Ortega Peña', 'Nuria Ferrer Soler',
  'Begoña Etxeberria Goñi', 'Marta Jiménez Cano', 'Sofía Navarro Gil', 'Raquel Domínguez León',
  'Irene Castro Molina', 'Andrea Iglesias Núñez', 'Pablo Herrera Campos', 'Ángela Ibáñez Mora',
] as const;

/** A clinic has 2-3 of these (chosen per seed). */
export const SEDES = [
  'Sede Centro', 'Sede Salamanca', 'Sede Chamberí', 'Sede Eixample', 'Sede Triana', 'Sede Nervión',
] as const;

export const NOTAS = [
  'Alergia al látex', 'Prefiere tarde', 'Prefiere mañana', 'Primera visita', 'Piel sensible',
  'Embarazada, evitar aceites esenciales', 'Trae bono regalo', 'Viene con su hija',
  'Llamar si hay hueco antes', 'Pago con tarjeta', 'Alergia a frutos secos', 'Sesión 3 de 6',
  'Revisión tras el peeling', 'No usar acetona', 'Quiere probar el color nuevo',
  'Llega 10 minutos tarde habitualmente', 'Confirmar por WhatsApp', 'Cliente de bono mensual',
] as const;
