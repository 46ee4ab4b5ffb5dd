// `/`: an owner who types the host lands on the dashboard. GET and HEAD only (Fastify answers
// HEAD for every GET route); any other method on `/` is the app's 404, as on every path that has
// no route for it. 302: the root may one day serve a page of its own.
import type { FastifyInstance } from 'fastify';

export async function rootRedirect(app: FastifyInstance): Promise<void> {
  app.get('/', (_req, reply) => reply.redirect('/dashboard', 302));
}
