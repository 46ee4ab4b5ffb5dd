// The composition root: config -> database (migrated) -> every service, each made once, here
// and nowhere else. The server (server.ts), the CLI (cli/io.ts), the tests (test/helpers/runtime.ts),
// the bench and the scripts all build their services through it; buildApp (app.ts) takes a
// runtime and only reads from it. Longer than 300 lines on purpose: it is the one place every
// service is made, so each service's wiring is one short getter here rather than a file of its own.
//
// What a command does not use, it does not pay for: every service past the database is made on
// first use (a getter), and Redis (node-redis takes about 0.2 s to load) is loaded and connected
// only when something asks for it: the server at start, the limiters, a key change to
// announce. Migrations run under the database's start-up lock (db/connect.ts), so instances and
// commands starting at once on one database apply each migration once.
//
// Lifecycle: the runtime owns every background service, on every path (the server's shutdown,
// a failed start, the CLI, the tests). startServices() starts them once the server listens;
// close() stops everything once, in the reverse order of its making: the background jobs (the
// delivery worker first, at once, then the retention jobs), then what the server handed it (the
// app: its drain, then its close), then the collectors the app fed (the request log and the usage
// counts: their last writes, once no request can add to them), the limiters, Redis and the
// database (the one it opened). Neither server.ts nor app.ts stops anything itself.
import type { Config } from './config.js';
import {
  COMMAND_BUSY_TIMEOUT_MS,
  describeTarget,
  openDatabase,
  targetFromConfig,
  type Database,
  type DatabaseTarget,
} from './db/connect.js';
import { databaseErrorKind, isDatabaseError, WriterBusy } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { makeLogger, type LogDestination, type Logger } from './logger.js';
import { Metrics } from './metrics.js';
import type { RedisLink } from './redis/link.js';
import { quietOutages } from './redis/outages.js';
import { describeRedisUrl } from './redis/url.js';
import { KeyService } from './services/api-keys.js';
import { reportBackgroundError, type BackgroundErrorHandler } from './services/background.js';
import { ClientasSearch } from './services/clientas-search/search.js';
import { EventRetention } from './services/event-retention.js';
import { ExportJobs } from './services/exports/jobs.js';
import { AppGrants } from './services/oauth/grants.js';
import { oauthResources } from './services/oauth/resources.js';
import { OAuthSweep } from './services/oauth/sweep.js';
import type { AuthorizationServer } from './services/oauth/server.js';
import { AppTokens } from './services/oauth/tokens.js';
import { PageCache } from './services/page-cache.js';
import { RequestLog } from './services/request-log.js';
import { RequestLogRetention } from './services/request-log-retention.js';
import { SandboxMoves, Sandboxes } from './services/sandbox.js';
import { requestLogRowMaker } from './http/request-log-row.js';
import { resolvePepper } from './services/pepper.js';
import { DEFAULT_SESSION, Sessions, type SessionTuning } from './services/sessions.js';
import type { RateLimiter } from './services/rate-limit.js';
import { keyChangeAnnouncer } from './services/key-changes.js';
import { RateLimiters } from './services/shared-rate-limit.js';
import { UsageCounter } from './services/usage.js';
import type { Resolver } from './services/webhooks/destination.js';
import { WebhookService } from './services/webhooks/endpoints.js';
import { WebhookAlerts } from './services/webhooks/alerts.js';
import { WebhookMaintenance } from './services/webhooks/maintenance.js';
import { Replayer } from './services/webhooks/replay.js';
import { DeliveryWorker } from './services/webhooks/worker.js';
import { explainPepperError, explainRuntimeError } from './startup-errors.js';

export interface RuntimeOptions {
  /** The wall clock (ms) of every service. Default Date.now; tests pass one they move. */
  now?: () => number;
  /** Apply pending migrations when opening (default true). */
  migrate?: boolean;
  /** Where log lines go (default stdout); `false`: nowhere (the CLI, whose stdout is its result; most tests). */
  logTo?: LogDestination | false;
  /** prom-client's process series (CPU, memory, GC, event-loop delay). Default true; tests leave them off. */
  processMetrics?: boolean;
  /** Open this database instead of the configuration's (tests: SQLite in memory, a new PostgreSQL database). */
  target?: DatabaseTarget;
  /** How webhook destinations' host names are looked up (default DNS; the screenshots answer without the network). */
  resolveHost?: Resolver;
  /**
   * The server's runtime: SQLite never waits for its write lock inside a statement (that wait
   * stops the event loop); each write waits asynchronously instead (services/write-lock.ts).
   * Commands keep SQLite's own wait (COMMAND_BUSY_TIMEOUT_MS): nothing else runs in them.
   */
  server?: boolean;
  /** The dashboard's session lengths (default DEFAULT_SESSION; tests shorten them). */
  session?: Partial<SessionTuning>;
}

/** The API's limiters and the factory they come from (in memory, or shared on Redis with REDIS_URL). */
export interface Limiters {
  /** Makes more limiters on the same store (the dashboard's sign-in throttles); reports their health. */
  factory: RateLimiters;
  /** per API key: RATE_LIMIT_RPS, RATE_LIMIT_BURST */
  api: RateLimiter;
  /** failed authentications per client address: AUTH_FAIL_RPS, AUTH_FAIL_BURST */
  authFail: RateLimiter;
  /** OAuth app registrations per client address: OAUTH_REGISTRATIONS_PER_HOUR */
  oauthRegistration: RateLimiter;
  /** OAuth authorization requests per client address: OAUTH_AUTHORIZATION_REQUESTS_PER_MINUTE */
  oauthAuthorization: RateLimiter;
  /** OAuth token and revocation requests per client address: OAUTH_TOKEN_REQUESTS_PER_MINUTE */
  oauthToken: RateLimiter;
}

export interface Runtime {
  readonly config: Config;
  readonly database: Database;
  /** Wall clock in ms, read by every service. */
  readonly now: () => number;
  /** The process's logger; the app's is a child of it. */
  readonly log: Logger;
  readonly metrics: Metrics;
  /** A background task failed: logged and counted, never thrown (services/background.ts). */
  readonly reportBackgroundError: BackgroundErrorHandler;
  readonly keys: KeyService;
  /** OAuth access tokens as principals of the API (cached like keys) */
  readonly appTokens: AppTokens;
  /** the grants owners gave to apps (Connected apps, the CLI's `apps`) */
  readonly appGrants: AppGrants;
  /**
   * The OAuth authorization server; null without OAUTH_ISSUER. Loaded on first use: oidc-provider
   * and what it brings (Koa, jose) take about 44 MiB that a service without OAuth never needs.
   */
  oauthServer(): Promise<AuthorizationServer | null>;
  readonly webhooks: WebhookService;
  /** Per-key API usage, counted in memory, written every USAGE_FLUSH_INTERVAL_S once started. */
  readonly usage: UsageCounter;
  /** Built list pages kept by their ETag (PAGE_CACHE_MB). */
  readonly pages: PageCache;
  /** The client search, one for the API (REST and MCP) and the dashboard: it keeps the counts of searches. */
  readonly clientasSearch: ClientasSearch;
  /** The dashboard's sign-in sessions. */
  readonly sessions: Sessions;
  /** Removes events past EVENT_RETENTION_DAYS once started. */
  readonly retention: EventRetention;
  /** Test mode's sandboxes: made on first use, reset, moved (services/sandbox.ts). */
  readonly sandboxes: Sandboxes;
  /** The sandboxes' moves every SANDBOX_TICK_S once started (0: never). */
  readonly sandboxMoves: SandboxMoves;
  /** The request log's collector and batch writer; null with REQUEST_LOG_DAYS=0 (off). */
  readonly requestLog: RequestLog | null;
  /** Removes request-log entries past REQUEST_LOG_DAYS once started. */
  readonly requestLogRetention: RequestLogRetention;
  /** removes expired OAuth requests, codes and tokens (started by the server with OAuth on) */
  readonly oauthSweep: OAuthSweep;
  /** Delivers webhooks once started. */
  readonly deliveryWorker: DeliveryWorker;
  /** The webhooks' periodic pass (ended credentials, old Idempotency-Keys, the delivery log's retention, alerts) once started. */
  readonly webhookMaintenance: WebhookMaintenance;
  /** Makes the clinics' exports asked for in the dashboard, and deletes them when they expire, once started. */
  readonly exports: ExportJobs;
  /** Sends the queued replays once started. */
  readonly replayer: Replayer;
  /** Webhook incidents: the dashboard's banner and the owners' e-mails (sent by the maintenance pass). */
  readonly webhookAlerts: WebhookAlerts;
  /** The link to Redis, made (and node-redis loaded) on the first call; null without REDIS_URL. */
  redis(): Promise<RedisLink | null>;
  /** The rate limiters, made on the first call: shared on Redis with REDIS_URL (failing open to memory). */
  limiters(): Promise<Limiters>;
  /** API_KEY_PEPPER was unset and a pepper was generated into DATA_DIR just now. */
  readonly pepperGenerated: boolean;
  /** The database, for the log: "SQLite data/clinic.db", "PostgreSQL db:5432/clinic". */
  readonly describe: string;
  /**
   * Starts the background services, once the server listens (server.ts; the tests start what
   * they drive themselves): the usage counts' and the request log's writers, the change feed's
   * and the request log's retention, the webhook deliveries. close() stops them.
   */
  startServices(): Promise<void>;
  /**
   * What close() stops after the background jobs and before the collectors' last writes: the
   * server's app (its drain, then its close), so that every request it answers is counted and
   * logged, and the database stays open for the last response. At most one.
   */
  closeServerWith(stop: () => Promise<void>): void;
  /** Stops everything once, in reverse order (see the top of this file); later calls wait for the same close. */
  close(): Promise<void>;
}

/** The pepper (API_KEY_PEPPER, else DATA_DIR/api-key-pepper, generated if need be), as an operator's error when DATA_DIR fails. */
function pepperOf(config: Config): { pepper: string; generated: boolean } {
  try {
    return resolvePepper(config);
  } catch (err) {
    throw explainPepperError(err, config);
  }
}

/** Applies the database's pending migrations (idempotent); the names of those applied now. */
export async function migrateDatabase(config: Config): Promise<string[]> {
  const target = targetFromConfig(config);
  let database: Database | undefined;
  try {
    database = await openDatabase(target);
    return await database.exclusive(() => migrateToLatest(database!));
  } catch (err) {
    throw explainRuntimeError(err, config);
  } finally {
    await database?.close().catch(() => {});
  }
}

/**
 * Opens the database (`opts.target`, else the configuration's) and migrates it, then composes
 * the runtime on it; closing the runtime closes the database. An unreachable database or an
 * unwritable DATA_DIR comes out as an error naming the variable.
 */
export async function openRuntime(config: Config, opts: RuntimeOptions = {}): Promise<Runtime> {
  const target = opts.target ?? targetFromConfig(config, opts.server ? 0 : COMMAND_BUSY_TIMEOUT_MS);
  const { pepper, generated } = pepperOf(config);
  // The server's SQLite connection never waits for the write lock inside a statement, and a
  // migration refused midway would be left half applied: migrations run first, before the server
  // listens, on a connection of their own that waits for the lock as commands do.
  const migrateFirst = opts.migrate !== false && opts.server === true && target.kind === 'sqlite';
  if (migrateFirst) await migrateDatabase(config);
  // The pool reports a connection lost outside any query to the runtime made just below.
  const made: { rt?: Composed } = {};
  let database: Database | undefined;
  try {
    database = await openDatabase(target, { onConnectionError: (err) => made.rt?.poolConnectionFailed(err) });
    if (opts.migrate !== false && !migrateFirst) await database.exclusive(() => migrateToLatest(database!));
  } catch (err) {
    await database?.close().catch(() => {});
    throw explainRuntimeError(err, config);
  }
  made.rt = new Composed(config, database, pepper, generated, describeTarget(target), true, opts);
  return made.rt;
}

/**
 * A runtime on a database the caller opened and keeps (closing the runtime leaves it open): a
 * second instance on the same database in a test, a database wrapped to observe its queries.
 */
export function composeRuntime(config: Config, database: Database, opts: Omit<RuntimeOptions, 'target' | 'migrate'> = {}): Runtime {
  const { pepper, generated } = pepperOf(config);
  const describe = `${database.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'} (opened by the caller)`;
  return new Composed(config, database, pepper, generated, describe, false, opts);
}

class Composed implements Runtime {
  readonly now: () => number;
  readonly reportBackgroundError: BackgroundErrorHandler = (task, err) => {
    // Another process (an import) holds SQLite's write lock: the write is skipped or deferred
    // by design (services/write-lock.ts), and would otherwise be logged every few seconds.
    if (err instanceof WriterBusy) {
      this.log.debug({ task }, 'background write deferred: another process holds the database write lock');
      return;
    }
    this.metrics.backgroundFailures.inc({ task });
    if (isDatabaseError(err)) this.metrics.databaseErrors.inc({ kind: databaseErrorKind(err), source: 'background' });
    this.log.error({ err, task }, 'background task failed');
  };
  #log?: Logger;
  #metrics?: Metrics;
  #keys?: KeyService;
  #appTokens?: AppTokens;
  #appGrants?: AppGrants;
  #oauth?: Promise<AuthorizationServer | null>;
  #webhooks?: WebhookService;
  #usage?: UsageCounter;
  #pages?: PageCache;
  #retention?: EventRetention;
  #sandboxes?: Sandboxes;
  #sandboxMoves?: SandboxMoves;
  #requestLog?: RequestLog | null;
  #requestLogRetention?: RequestLogRetention;
  #oauthSweep?: OAuthSweep;
  #worker?: DeliveryWorker;
  #webhookMaintenance?: WebhookMaintenance;
  #exports?: ExportJobs;
  #replayer?: Replayer;
  #webhookAlerts?: WebhookAlerts;
  #redis?: Promise<RedisLink | null>;
  #limiters?: Promise<Limiters>;
  #limiterFactory?: RateLimiters;
  #search?: ClientasSearch;
  #sessions?: Sessions;
  #closeServer?: () => Promise<void>;
  #started = false;
  #closing?: Promise<void>;

  constructor(
    readonly config: Config,
    readonly database: Database,
    private readonly pepper: string,
    readonly pepperGenerated: boolean,
    readonly describe: string,
    private readonly ownsDatabase: boolean,
    private readonly opts: Omit<RuntimeOptions, 'target' | 'migrate'>,
  ) {
    this.now = opts.now ?? Date.now;
  }

  get log(): Logger {
    return (this.#log ??= makeLogger(this.config, this.opts.logTo));
  }

  get metrics(): Metrics {
    return (this.#metrics ??= new Metrics({ processMetrics: this.opts.processMetrics ?? true }));
  }

  get keys(): KeyService {
    return (this.#keys ??= new KeyService(this.database.db, {
      pepper: this.pepper,
      prefix: this.config.apiKeyPrefix,
      apiPlans: this.config.apiPlans,
      now: this.now,
      onBackgroundError: this.reportBackgroundError,
      // With REDIS_URL every running server evicts a changed (revoked, edited, rolled) key at once (services/key-changes.ts).
      announceChange: this.config.redisUrl === null ? undefined : async (keyId) => keyChangeAnnouncer((await this.redis())!)(keyId),
      sandboxFor: (clinicId) => this.sandboxes.ensure(clinicId),
    }));
  }

  get appTokens(): AppTokens {
    // On the authorization server's clock (the wall clock: oidc-provider reads Date.now), not the runtime's.
    return (this.#appTokens ??= new AppTokens(this.database.db, {
      pepper: this.pepper,
      now: Date.now,
      onBackgroundError: this.reportBackgroundError,
      sandboxFor: (clinicId) => this.sandboxes.ensure(clinicId),
    }));
  }

  get appGrants(): AppGrants {
    return (this.#appGrants ??= new AppGrants(this.database.db, this.appTokens, {
      pepper: this.pepper,
      now: this.now,
      // On the key changes' channel (services/key-changes.ts), prefixed: every instance evicts the grant at once.
      announce: this.config.redisUrl === null ? undefined : async (message) => keyChangeAnnouncer((await this.redis())!)(message),
    }));
  }

  oauthServer(): Promise<AuthorizationServer | null> {
    return (this.#oauth ??= this.makeOAuthServer());
  }

  private async makeOAuthServer(): Promise<AuthorizationServer | null> {
    const c = this.config.oauth;
    if (c.issuer === null) return null;
    const { AuthorizationServer } = await import('./services/oauth/server.js');
    const { ClientDocuments } = await import('./services/oauth/client-documents.js');
    // The error page is the dashboard's (its language and look).
    const { oauthErrorPage } = await import('./admin/views/oauth-error.js');
    return new AuthorizationServer(
      this.database.db,
      this.appGrants,
      {
        resources: oauthResources(c.issuer),
        accessTokenTtlS: c.accessTokenTtlS,
        refreshTokenTtlS: c.refreshTokenDays * 86_400,
        clientDocuments: new ClientDocuments({
          allowLoopback: c.clientMetadataAllowPrivate,
          now: this.now,
          resolve: this.opts.resolveHost,
        }),
      },
      { pepper: this.pepper, onError: (err) => this.log.error({ err }, 'OAuth authorization server error'), errorPage: oauthErrorPage },
    );
  }

  get webhooks(): WebhookService {
    const wh = this.config.webhooks;
    return (this.#webhooks ??= new WebhookService(this.database, {
      pepper: this.pepper,
      keyPrefix: this.config.apiKeyPrefix,
      apiPlans: this.config.apiPlans,
      allowPrivate: wh.allowPrivate,
      timeoutMs: wh.timeoutMs,
      now: this.now,
      resolve: this.opts.resolveHost,
    }));
  }

  get usage(): UsageCounter {
    return (this.#usage ??= new UsageCounter(this.database.db, { onError: this.reportBackgroundError }));
  }

  get pages(): PageCache {
    return (this.#pages ??= new PageCache(this.config.pageCacheBytes));
  }

  get clientasSearch(): ClientasSearch {
    return (this.#search ??= new ClientasSearch());
  }

  get sessions(): Sessions {
    return (this.#sessions ??= new Sessions(this.database.db, { ...DEFAULT_SESSION, ...this.opts.session }, this.now));
  }

  get retention(): EventRetention {
    return (this.#retention ??= new EventRetention(this.database, { days: this.config.eventRetentionDays, now: this.now, log: this.log }));
  }

  get sandboxes(): Sandboxes {
    return (this.#sandboxes ??= new Sandboxes(this.database, this.now));
  }

  get sandboxMoves(): SandboxMoves {
    return (this.#sandboxMoves ??= new SandboxMoves(this.sandboxes, { intervalMs: this.config.sandboxTickS * 1000, log: this.log }));
  }

  get requestLog(): RequestLog | null {
    if (this.#requestLog !== undefined) return this.#requestLog;
    if (this.config.requestLogDays === 0) return (this.#requestLog = null);
    const metrics = this.metrics;
    return (this.#requestLog = new RequestLog(this.database, {
      toRow: requestLogRowMaker(this.config.apiKeyPrefix),
      onError: this.reportBackgroundError,
      now: this.now,
      warn: (obj, msg) => this.log.warn(obj, msg),
      observer: {
        written: (n) => metrics.requestLogWritten.inc(n),
        dropped: (n) => metrics.requestLogDropped.inc(n),
        pending: (n) => metrics.requestLogPending.set(n),
      },
    }));
  }

  get requestLogRetention(): RequestLogRetention {
    return (this.#requestLogRetention ??= new RequestLogRetention(this.database, {
      days: this.config.requestLogDays,
      now: this.now,
      log: this.log,
    }));
  }

  get oauthSweep(): OAuthSweep {
    return (this.#oauthSweep ??= new OAuthSweep(this.database, { now: this.now, log: this.log }));
  }

  get deliveryWorker(): DeliveryWorker {
    const metrics = this.metrics;
    return (this.#worker ??= new DeliveryWorker(this.database, this.webhooks, {
      ...this.config.webhooks,
      now: this.now,
      log: this.log,
      resolve: this.opts.resolveHost,
      observer: {
        attempt: (outcome, lagMs) => {
          metrics.webhookDeliveries.inc({ outcome });
          if (lagMs !== null) metrics.webhookLag.observe(Math.max(0, lagMs) / 1000);
        },
        disabled: () => metrics.webhookDisabled.inc(),
        inFlight: (n) => metrics.webhookInFlight.set(n),
      },
    }));
  }

  get webhookMaintenance(): WebhookMaintenance {
    return (this.#webhookMaintenance ??= new WebhookMaintenance(this.database, {
      now: this.now,
      log: this.log,
      logDays: this.config.webhooks.logDays,
      alerts: this.webhookAlerts,
    }));
  }

  get webhookAlerts(): WebhookAlerts {
    const wh = this.config.webhooks;
    return (this.#webhookAlerts ??= new WebhookAlerts(this.database, {
      alertAfterMin: wh.alertAfterMin,
      smtpUrl: wh.smtpUrl,
      smtpFrom: wh.smtpFrom,
      now: this.now,
      log: this.log,
    }));
  }

  get replayer(): Replayer {
    const wh = this.config.webhooks;
    return (this.#replayer ??= new Replayer(this.database, this.webhooks, {
      pollMs: Math.max(wh.pollMs, 250),
      leaseMs: wh.leaseMs,
      timeoutMs: wh.timeoutMs,
      now: this.now,
      log: this.log,
    }));
  }

  get exports(): ExportJobs {
    return (this.#exports ??= new ExportJobs(this.database, { now: this.now, onError: this.reportBackgroundError }));
  }

  redis(): Promise<RedisLink | null> {
    return (this.#redis ??= this.makeRedis());
  }

  private async makeRedis(): Promise<RedisLink | null> {
    const url = this.config.redisUrl;
    if (url === null) return null;
    const { RedisLink } = await import('./redis/link.js');
    const name = describeRedisUrl(url);
    return new RedisLink({
      url,
      timeoutMs: this.config.redisTimeoutMs,
      // Logged once per change, never per request, and a flapping Redis only now and then
      // (redis/outages.ts); `fallbacks` counts the limit decisions made in memory since the start.
      onStateChange: quietOutages((state, reason) => {
        if (state === 'down')
          this.log.warn(
            { redis: name, reason },
            "Redis does not answer: rate limits fall back to each instance's memory until it answers again (key revocations and changes " +
              'reach other instances within 5 s)',
          );
        else
          this.log.info(
            { redis: name, fallbacks: this.#limiterFactory?.health().fallbacks ?? 0 },
            'Redis answers: rate limits are shared by every instance',
          );
      }),
    });
  }

  limiters(): Promise<Limiters> {
    return (this.#limiters ??= this.redis().then((link) => {
      const factory = (this.#limiterFactory = new RateLimiters(link));
      const c = this.config;
      return {
        factory,
        api: factory.make('key', c.rateLimitRps, c.rateLimitBurst),
        authFail: factory.make('auth-fail', c.authFailRps, c.authFailBurst),
        oauthRegistration: factory.make('oauth-registration', c.oauth.registrationsPerHour / 3600, c.oauth.registrationsPerHour),
        oauthAuthorization: factory.make(
          'oauth-authorization',
          c.oauth.authorizationRequestsPerMinute / 60,
          c.oauth.authorizationRequestsPerMinute,
        ),
        oauthToken: factory.make('oauth-token', c.oauth.tokenRequestsPerMinute / 60, c.oauth.tokenRequestsPerMinute),
      };
    }));
  }

  /** A pooled PostgreSQL connection failed outside any query (the pool replaces it). */
  poolConnectionFailed(err: Error): void {
    this.metrics.databaseErrors.inc({ kind: 'connection', source: 'pool' });
    this.log.warn({ err }, 'a pooled database connection failed; the pool opens a new one when needed');
  }

  async startServices(): Promise<void> {
    if (this.#started || this.#closing) return;
    this.#started = true;
    // API usage for the dashboard is counted in memory and written in one batch every
    // USAGE_FLUSH_INTERVAL_S; the request log at least once a second. The rest of both is
    // written by close(), after the server's last response.
    this.usage.start(this.config.usageFlushIntervalS * 1000);
    this.requestLog?.start();
    // Events past EVENT_RETENTION_DAYS leave the change feed's log, entries past
    // REQUEST_LOG_DAYS the request log, in the background (a pass in progress ends on stop).
    this.retention.start();
    this.requestLogRetention.start();
    // The sandboxes that exist move every SANDBOX_TICK_S (test mode).
    this.sandboxMoves.start();
    // Expired OAuth authorization requests, codes and tokens leave their table (every 10 minutes).
    if (this.config.oauth.issuer !== null) this.oauthSweep.start();
    // The clinics' exports asked for in the dashboard, and their deletion after 24 hours.
    this.exports.start();
    // Webhook deliveries from the event log (stopped first: it gives its leases up at once,
    // while the server's requests drain).
    await this.deliveryWorker.start();
    this.webhookMaintenance.start();
    this.replayer.start();
  }

  closeServerWith(stop: () => Promise<void>): void {
    if (this.#closeServer) throw new Error('closeServerWith: the runtime already closes a server');
    this.#closeServer = stop;
  }

  close(): Promise<void> {
    return (this.#closing ??= (async () => {
      const failed = (task: string) => (err: unknown) => reportBackgroundError(this.reportBackgroundError, task, err);
      // The background jobs, in the reverse order of startServices() (also one a test started
      // itself; stopping one never started is a no-op).
      await this.#replayer?.stop().catch(failed('webhook replayer stop'));
      await this.#webhookMaintenance?.stop().catch(failed('webhook maintenance stop'));
      await this.#worker?.stop().catch(failed('delivery worker stop'));
      // An export in progress goes back to the queue, for another instance or the next start.
      await this.#exports?.stop().catch(failed('clinic exports stop'));
      await this.#oauthSweep?.stop().catch(failed('OAuth sweep stop'));
      await this.#sandboxMoves?.stop().catch(failed('sandbox moves stop'));
      await this.#requestLogRetention?.stop().catch(failed('request log retention stop'));
      await this.#retention?.stop().catch(failed('event retention stop'));
      await this.#closeServer?.().catch(failed('server close'));
      // Nothing adds to the collectors any more: their last writes, before the database closes.
      // Another process holding SQLite's write lock (an import) is told with what is lost.
      const lastWrite = (writer: { close(): Promise<void>; pending: number } | undefined, lost: string, task: string) =>
        writer?.close().catch((err: unknown) => {
          if (err instanceof WriterBusy)
            this.log.warn({ pending: writer.pending }, `${lost} not written on close: another process holds the database write lock`);
          else failed(task)(err);
        });
      await lastWrite(this.#requestLog ?? undefined, 'request log entries', 'request log write on close');
      await lastWrite(this.#usage, 'usage counts', 'usage flush on close');
      const redis = this.#redis ? await this.#redis.catch(() => null) : null;
      await redis?.close();
      if (this.ownsDatabase) await this.database.close();
    })());
  }
}
