// OpenTelemetry traces, exported over OTLP/HTTP (JSON). Only `clinic-api serve` loads this, and
// only when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set
// (cli/server.ts): unset, no @opentelemetry module is loaded at all.
//
// It must run before the server's modules are imported: pg is patched as it is imported (an
// ESM import, hence the import-in-the-middle loader hook the instrumentation package documents,
// limited to pg so no other module is wrapped), and @fastify/otel adds itself to the Fastify
// instance as it is created (the `fastify.initialization` diagnostics channel).
//
// What a span may hold is written in docs/operations.md, "Traces": ids, routes, statuses, SQL
// text without values, command and tool names; never a key, a token, a query string or a
// clienta's data.
import dc from 'node:diagnostics_channel';
import { register } from 'node:module';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { setSpanMaker, type SpanAttributes, type SpanNotes } from '../spans.js';
import { collectorName, exportFailure, exportNotice, HEALTHY, type ExportWatch } from './export-watch.js';

const IGNORED: SpanNotes = { setAttributes: () => {}, fail: () => {} };

export type TracingConfig = Config['tracing'];

/** How long a shutdown waits for the last spans to be exported. */
const STOP_WAIT_MS = 1_000;

/** The traces' URL, as the OTLP specification builds it: the signal's own, else the base + /v1/traces. */
export function tracesUrl(t: TracingConfig): string {
  if (t.tracesEndpoint !== null) return t.tracesEndpoint;
  return `${t.endpoint!.replace(/\/+$/, '')}/v1/traces`;
}

export interface Tracing {
  /** Exports what is left and stops (called at shutdown). */
  stop(): Promise<void>;
  /** Where the exports' failures and recovery are logged from now (telemetry/export-watch.ts). */
  reportTo(log: Logger): void;
}

/** Starts tracing. */
export async function startTracing(t: TracingConfig, version: string): Promise<Tracing> {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: ['pg'] } });

  const [api, core, { AsyncLocalStorageContextManager }, sdk, { OTLPTraceExporter }, { resourceFromAttributes }, instr] = await Promise.all(
    [
      import('@opentelemetry/api'),
      import('@opentelemetry/core'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/instrumentation'),
    ],
  );
  const [{ PgInstrumentation }, { RedisInstrumentation }, { FastifyOtelInstrumentation }] = await Promise.all([
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-redis'),
    import('@fastify/otel'),
  ]);

  const ratio = new sdk.TraceIdRatioBasedSampler(t.samplerArg);
  const sampler = {
    always_on: new sdk.AlwaysOnSampler(),
    always_off: new sdk.AlwaysOffSampler(),
    traceidratio: ratio,
    parentbased_always_on: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
    parentbased_always_off: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    parentbased_traceidratio: new sdk.ParentBasedSampler({ root: ratio }),
  }[t.sampler];

  // Each export's outcome is watched: the SDK tells only its own diagnostics logger of a failure.
  const exporter = new OTLPTraceExporter({ url: tracesUrl(t) });
  const collector = collectorName(tracesUrl(t));
  let log: Logger | null = null;
  let watch: ExportWatch = HEALTHY;
  const watched: import('@opentelemetry/sdk-trace').SpanExporter = {
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush(),
    export: (spans, done) =>
      exporter.export(spans, (result) => {
        const outcome =
          result.code === core.ExportResultCode.SUCCESS
            ? { ok: true as const }
            : { ok: false as const, reason: exportFailure(result.error) };
        const next = exportNotice(watch, outcome, Date.now(), collector);
        watch = next.state;
        if (next.notice && log) log[next.notice.level](next.notice.fields, next.notice.msg);
        done(result);
      }),
  };
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ 'service.name': t.serviceName, 'service.version': version }),
    sampler,
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter: watched, scheduledDelayMillis: t.scheduleDelayMs })],
  });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(provider);

  instr.registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // The statement's text only (its values are parameters, never recorded: enhancedDatabaseReporting stays off).
      new PgInstrumentation({ requireParentSpan: true }),
      // The command's name only: its arguments hold rate-limit keys and published messages.
      new RedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        // One span per request, not one per hook and handler as well.
        instrumentHooks: false,
        instrumentHandler: false,
        // An exception's message may quote the request (a bad parameter's value): the status says enough.
        recordExceptions: false,
        requestHook: (span, request) => {
          // @fastify/otel records the URL with its query string (a search's text, a token):
          // the path alone, and the route's template as the span's name.
          span.setAttribute('url.path', request.url.split('?', 1)[0]!);
          const route = request.routeOptions.url;
          span.updateName(route === undefined ? request.method : `${request.method} ${route}`);
        },
      }),
    ],
  });

  // The clinic and key ids, known once the request is authenticated: added before the response
  // is sent (an instance onSend hook runs before @fastify/otel's own, which ends the span).
  const onInit = (message: unknown) => {
    const app = (message as { fastify: import('fastify').FastifyInstance }).fastify;
    // Callback style: no promise per response.
    app.addHook('onSend', (request, _reply, payload, done) => {
      const key = request.apiKey;
      if (key) {
        const span = (request as unknown as { opentelemetry?: () => { span?: import('@opentelemetry/api').Span } }).opentelemetry?.().span;
        span?.setAttributes({ 'clinic.id': key.clinicId, 'clinic_api.key.id': key.keyId });
      }
      done(null, payload);
    });
  };
  dc.subscribe('fastify.initialization', onInit);

  const tracer = provider.getTracer('clinic-api', version);
  const KINDS = { client: api.SpanKind.CLIENT, internal: api.SpanKind.INTERNAL, server: api.SpanKind.SERVER } as const;
  setSpanMaker({
    inSpan(name, attributes, fn, options = {}) {
      const active = api.context.active();
      const ctx = options.parent ? api.propagation.extract(active, options.parent) : active;
      if (options.childOnly && api.trace.getSpan(ctx) === undefined) return fn(IGNORED);
      // A span continuing another trace (an MCP call's _meta) keeps a link to the request's span.
      const request = ctx === active ? undefined : api.trace.getSpan(active);
      const links = request && api.trace.getSpan(ctx) !== undefined ? [{ context: request.spanContext() }] : undefined;
      const span = tracer.startSpan(name, { kind: KINDS[options.kind ?? 'internal'], attributes, links }, ctx);
      const notes = {
        setAttributes: (a: SpanAttributes) => void span.setAttributes(a),
        fail: (reason: string) => void span.setStatus({ code: api.SpanStatusCode.ERROR, message: reason }),
      };
      const failed = (err: unknown) => {
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
        span.end();
      };
      try {
        const result = api.context.with(api.trace.setSpan(ctx, span), () => fn(notes));
        if (result instanceof Promise) {
          return result.then(
            (v) => {
              span.end();
              return v;
            },
            (err: unknown) => {
              failed(err);
              throw err;
            },
          ) as typeof result;
        }
        span.end();
        return result;
      } catch (err) {
        failed(err);
        throw err;
      }
    },
  });

  const stop = async () => {
    setSpanMaker(null);
    dc.unsubscribe('fastify.initialization', onInit);
    // The last spans get a moment, not the whole shutdown: an unreachable collector would keep the
    // exporter retrying for most of SHUTDOWN_TIMEOUT_S, and the shutdown would end in exit 1.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      provider.shutdown().catch(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, STOP_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
  };
  return {
    stop,
    reportTo: (l) => {
      log = l;
    },
  };
}
