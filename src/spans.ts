// The spans the service makes by hand (SQLite queries, Redis calls, webhook sends, MCP tool
// calls), through a maker that is null unless tracing is on: telemetry/start.ts sets it, and
// only when an OTLP endpoint is configured. Callers test `spans` first, so with tracing off a
// call costs one comparison and loads nothing (@opentelemetry/* is imported by telemetry/ only).
//
// Attributes are ids, names of operations and SQL text without values: never a key, a token or
// a clienta's data (docs/operations.md, "Traces").

export type SpanAttributes = Record<string, string | number | boolean>;

export interface SpanOptions {
  /** 'client' for a call to another service (Redis, a webhook receiver), else internal. */
  kind?: 'client' | 'internal' | 'server';
  /** Make the span only inside a trace (a request's): background polling would otherwise make a trace per query. */
  childOnly?: boolean;
  /** W3C trace context (`traceparent`, `tracestate`) to continue, e.g. an MCP request's `_meta`. */
  parent?: Record<string, unknown>;
}

/** What `fn` may add to its span once it knows more (e.g. the answer's status). */
export interface SpanNotes {
  setAttributes(attributes: SpanAttributes): void;
  /** The operation failed (a short reason, never data). */
  fail(reason: string): void;
}

export interface SpanMaker {
  /** Runs `fn` inside a span; the span ends when `fn` returns or its promise settles, marked as an error when it throws. */
  inSpan<T>(name: string, attributes: SpanAttributes, fn: (notes: SpanNotes) => T, options?: SpanOptions): T;
}

/** Null unless tracing is on. */
export let spans: SpanMaker | null = null;

export function setSpanMaker(maker: SpanMaker | null): void {
  spans = maker;
}
