// What the log says about the trace exports (docs/operations.md, "Traces"). The OpenTelemetry
// SDK reports a failed export to its own diagnostics logger, which nobody reads here: a collector
// that refuses every batch (a wrong OTEL_EXPORTER_OTLP_HEADERS, a wrong path, a collector down)
// would drop every span in silence. So each export's outcome passes through `exportNotice`: the
// first failure is a warning at once, a failure that goes on is a warning once a minute with the
// count, and the first success after failures says so. A working collector costs no log line.
//
// A notice never holds the export's headers or the collector's answer body; the URL it names has
// no user name, password or query (credentials may be written there).

/** A minute: how often a collector that keeps failing is reported. */
export const REPEAT_MS = 60_000;

export interface ExportWatch {
  /** exports failed since the last success (0: the collector takes spans) */
  failed: number;
  /** failed exports not yet reported */
  unreported: number;
  /** when the last warning was written */
  warnedAtMs: number;
}

export const HEALTHY: ExportWatch = { failed: 0, unreported: 0, warnedAtMs: -Infinity };

export interface ExportNotice {
  level: 'warn' | 'info';
  fields: Record<string, string | number>;
  msg: string;
}

/** The next state, and what to log (null: nothing), after one export's outcome. */
export function exportNotice(
  s: ExportWatch,
  outcome: { ok: true } | { ok: false; reason: string },
  nowMs: number,
  collector: string,
): { state: ExportWatch; notice: ExportNotice | null } {
  if (outcome.ok) {
    if (s.failed === 0) return { state: s, notice: null };
    return {
      state: HEALTHY,
      notice: { level: 'info', fields: { collector, failedExports: s.failed }, msg: 'traces: the collector takes spans again' },
    };
  }
  const failed = s.failed + 1;
  const unreported = s.unreported + 1;
  if (s.failed > 0 && nowMs - s.warnedAtMs < REPEAT_MS) return { state: { ...s, failed, unreported }, notice: null };
  const msg =
    s.failed === 0
      ? 'traces: the collector did not take a batch of spans, which is dropped (check OTEL_EXPORTER_OTLP_ENDPOINT or _TRACES_ENDPOINT, ' +
        'and the headers it needs in OTEL_EXPORTER_OTLP_HEADERS); the requests are not affected'
      : 'traces: the collector still takes no spans; the batches are dropped';
  return {
    state: { failed, unreported: 0, warnedAtMs: nowMs },
    notice: { level: 'warn', fields: { collector, reason: outcome.reason, failedExports: unreported }, msg },
  };
}

/** Why an export failed, in a few words: an HTTP status and its text, or a network error's code. */
export function exportFailure(err: unknown): string {
  if (!(err instanceof Error)) return 'unknown error';
  // OTLPExporterError: the collector's status (its body, `data`, is never quoted).
  const status = (err as { code?: unknown }).code;
  if (typeof status === 'number') return `HTTP ${status}${err.message ? ` ${err.message}` : ''}`;
  if (typeof status === 'string') return status;
  return err.message.slice(0, 200);
}

/** The collector's URL as a notice names it: scheme, host, port and path only. */
export function collectorName(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}
