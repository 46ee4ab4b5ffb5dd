// GET /livez and GET /readyz, for orchestrators and load balancers (docs/operations.md, "Health").
// No key is needed and the bodies hold no data: a status and each check's state.
//
//   /livez   200 while the process runs (it answers, so its event loop turns).
//   /readyz  200 when every critical check passes (the database answers); 503 while one fails
//            and from the first moment of a shutdown (drain.ts), so that traffic moves elsewhere.
//
// Checks are registered by name (app.readiness.add). A non-critical check is reported and never
// fails readiness: the place for Redis, whose outage must not take every instance out of the
// load balancer (limits then fail open). Results are kept for a second and a check runs once at
// a time, so probes from many balancers cost one query a second at most; a check that does not
// answer within its timeout counts as failed.
import fp from 'fastify-plugin';

export interface ReadinessCheck {
  name: string;
  /** false: reported in the body, never makes /readyz fail */
  critical: boolean;
  /** true: up. A rejection or a timeout is down. */
  check(): Promise<boolean>;
}

export type CheckState = 'up' | 'down';

const CACHE_MS = 1_000;

export class Readiness {
  private readonly checks: ReadinessCheck[] = [];
  private last: { at: number; states: Record<string, CheckState>; ok: boolean } | null = null;
  private running: Promise<{ states: Record<string, CheckState>; ok: boolean }> | null = null;

  constructor(
    private readonly timeoutMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  add(check: ReadinessCheck): void {
    this.checks.push(check);
    this.last = null;
  }

  async state(): Promise<{ states: Record<string, CheckState>; ok: boolean }> {
    if (this.last && this.now() - this.last.at < CACHE_MS) return this.last;
    this.running ??= this.runAll().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async runAll() {
    const results = await Promise.all(this.checks.map((c) => this.runOne(c)));
    const states: Record<string, CheckState> = {};
    let ok = true;
    this.checks.forEach((c, i) => {
      states[c.name] = results[i] ? 'up' : 'down';
      if (c.critical && !results[i]) ok = false;
    });
    this.last = { at: this.now(), states, ok };
    return this.last;
  }

  private async runOne(c: ReadinessCheck): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.timeoutMs);
    });
    try {
      return await Promise.race([
        c.check().then(
          (up) => up === true,
          () => false,
        ),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    readiness: Readiness;
  }
}

export const LIVEZ_PATH = '/livez';
export const READYZ_PATH = '/readyz';

const Status = {
  type: 'object',
  properties: {
    status: { type: 'string' },
    checks: { type: 'object', additionalProperties: { type: 'string', enum: ['up', 'down'] } },
  },
} as const;

export const health = fp(
  async (app, opts: { checkTimeoutMs: number }) => {
    app.decorate('readiness', new Readiness(opts.checkTimeoutMs));

    app.get(LIVEZ_PATH, { schema: { hide: true, response: { 200: Status } } }, async () => ({ status: 'ok' }));

    app.get(READYZ_PATH, { schema: { hide: true, response: { 200: Status, 503: Status } } }, async (_req, reply) => {
      if (app.lifecycle.draining) return reply.code(503).send({ status: 'shutting_down' });
      const { states, ok } = await app.readiness.state();
      // A shutdown may have begun while the checks ran.
      if (app.lifecycle.draining) return reply.code(503).send({ status: 'shutting_down' });
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not_ready', checks: states });
    });
  },
  { name: 'health', dependencies: ['drain'] },
);
