// The reference the issue compares the service with: plain Fastify + better-sqlite3 on the same
// database file, one route that runs the same 30-day appointment query as GET /api/v1/citas
// (join clientas for name and phone, ORDER BY fecha_hora, id LIMIT 100), a COUNT(*) over the
// same range, and a response schema. No auth, no rate limit, no validation, no time-zone
// formatting, no compression, no request-id or access log. Started by bench/run.ts as a child:
//
//   BARE_DB=... BARE_CLINIC=... BARE_START=<epoch s> BARE_END=<epoch s> PORT=... node --import tsx bench/bare-route.ts
import BetterSqlite3 from 'better-sqlite3';
import Fastify from 'fastify';

/** The value of `name`, or exit 2 saying so (the parent shows the child's output). */
function need(program: string, name: string): string {
  const v = process.env[name];
  if (!v) {
    process.stderr.write(`${program}: ${name} is not set\n`);
    process.exit(2);
  }
  return v;
}

const file = need('bare-route', 'BARE_DB');
const clinicId = need('bare-route', 'BARE_CLINIC');
const start = Number(need('bare-route', 'BARE_START'));
const end = Number(need('bare-route', 'BARE_END'));
const port = Number(need('bare-route', 'PORT'));
const limit = Number(process.env.BARE_LIMIT ?? 100);

const db = new BetterSqlite3(file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');

const list = db.prepare(`
  SELECT c.id, c.fecha_hora, cl.nombre AS cliente_nombre, cl.telefono, c.servicio, c.duracion_min,
         c.precio_cents, c.estado, c.profesional_nombre, c.sede_nombre, c.notas, c.created_at
  FROM citas c
  JOIN clientas cl ON cl.clinic_id = c.clinic_id AND cl.id = c.clienta_id
  WHERE c.clinic_id = ? AND c.fecha_hora >= ? AND c.fecha_hora < ?
  ORDER BY c.fecha_hora, c.id
  LIMIT ?`);
const count = db.prepare('SELECT COUNT(*) AS n FROM citas WHERE clinic_id = ? AND fecha_hora >= ? AND fecha_hora < ?');

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const response = {
  type: 'object',
  properties: {
    citas: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: str,
          fecha_hora: int,
          cliente_nombre: str,
          telefono: str,
          servicio: str,
          duracion_min: int,
          precio_cents: int,
          estado: str,
          profesional_nombre: str,
          sede_nombre: str,
          notas: { type: ['string', 'null'] },
          created_at: int,
        },
      },
    },
    total: int,
  },
} as const;

const app = Fastify({ logger: false });
app.get('/bare/citas', { schema: { response: { 200: response } } }, async () => {
  const citas = list.all(clinicId, start, end, limit);
  const { n } = count.get(clinicId, start, end) as { n: number };
  return { citas, total: n };
});

await app.listen({ port, host: '127.0.0.1' });
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.once(sig, () => {
    app.close().then(
      () => {
        db.close();
        process.exit(0);
      },
      () => process.exit(1),
    );
  });
}
