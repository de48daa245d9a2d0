/**
 * Trace context for toolstream, on @opentelemetry/api alone: every call here is a no-op until the
 * host registers an OpenTelemetry SDK (tracer provider, propagator, context manager).
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  ROOT_CONTEXT,
  TraceFlags,
  context,
  createContextKey,
  isSpanContextValid,
  propagation,
  trace,
  type Context,
  type ProxyTracerProvider,
  type TextMapGetter,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

export const TRACER_NAME = 'toolstream';

let cachedTracer: Tracer | undefined;
let cachedFor: TracerProvider | undefined;

/**
 * The tracer every toolstream span comes from (instrumentation scope `toolstream`). Looked up
 * once per registered provider, not per span (getTracer builds a key and searches a map each
 * call): a host that registers another provider later still gets it from the next span on.
 */
export function toolstreamTracer(): Tracer {
  const global = trace.getTracerProvider();
  // The API's proxy provider stays the global one; what changes on registration is its delegate.
  const provider = typeof (global as Partial<ProxyTracerProvider>).getDelegate === 'function' ? (global as ProxyTracerProvider).getDelegate() : global;
  if (provider !== cachedFor || cachedTracer === undefined) {
    cachedTracer = provider.getTracer(TRACER_NAME);
    cachedFor = provider;
  }
  return cachedTracer;
}

/**
 * A trace context as plain JSON (W3C `traceparent` / `tracestate` with the default propagator),
 * so that any bus transport carries it unchanged inside a request payload.
 */
export type TraceCarrier = Record<string, string>;

/** Largest carrier accepted from a bus payload: a traceparent is 55 bytes, a tracestate at most 512. */
const MAX_CARRIER_ENTRIES = 8;
const MAX_CARRIER_VALUE = 1024;

/** The context as a carrier for a bus payload, or undefined when there is nothing to carry. */
export function traceCarrier(from: Context = context.active()): TraceCarrier | undefined {
  const carrier: TraceCarrier = {};
  propagation.inject(from, carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/**
 * The context a carrier from a bus payload names (the root context when it names none). The
 * payload may come from another process: anything but a small object of strings is ignored.
 */
export function contextFromCarrier(carrier: unknown): Context {
  if (typeof carrier !== 'object' || carrier === null || Array.isArray(carrier)) return ROOT_CONTEXT;
  const entries = Object.entries(carrier as Record<string, unknown>);
  if (entries.length === 0 || entries.length > MAX_CARRIER_ENTRIES) return ROOT_CONTEXT;
  const clean: TraceCarrier = {};
  for (const [key, value] of entries) {
    if (typeof value !== 'string' || value.length > MAX_CARRIER_VALUE) return ROOT_CONTEXT;
    clean[key] = value;
  }
  return propagation.extract(ROOT_CONTEXT, clean);
}

/**
 * The caller's context for an incoming request: the active span when the host's HTTP
 * instrumentation already made one for it, else the request's own `traceparent` / `tracestate`.
 */
export function callerTraceContext(headers: IncomingHttpHeaders): Context {
  const active = context.active();
  if (trace.getSpan(active)) return active;
  return propagation.extract(active, headers, HEADER_GETTER);
}

/** Reads a request's headers for a propagator: one object for every request, not one (and two closures) each. */
const HEADER_GETTER: TextMapGetter<IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};

/**
 * Adds the active (or given) trace context to the headers of an outgoing request, so that the
 * agent it calls continues the same trace (`traceparent`, `tracestate` with the default
 * propagator). Returns the same headers object.
 */
export function injectTraceHeaders<H extends Record<string, string> | Headers>(headers: H, from: Context = context.active()): H {
  propagation.inject(from, headers, {
    set: (carrier, key, value) => {
      if (carrier instanceof Headers) carrier.set(key, value);
      else (carrier as Record<string, string>)[key] = value;
    },
  });
  return headers;
}

const TASK_ID_KEY = createContextKey('toolstream.a2a.task.id');

/** The context with the A2A task id a run belongs to, for the spans started inside it. */
export function withTaskId(parent: Context, taskId: string): Context {
  return parent.setValue(TASK_ID_KEY, taskId);
}

/** The A2A task id of the run the active context belongs to. */
export function activeTaskId(from: Context = context.active()): string | undefined {
  const value = from.getValue(TASK_ID_KEY);
  return typeof value === 'string' ? value : undefined;
}

/** Whether a context belongs to a trace that is recorded (valid and sampled): spans made in it are kept. */
export function inSampledTrace(from: Context = context.active()): boolean {
  const span = trace.getSpanContext(from);
  return span !== undefined && isSpanContextValid(span) && (span.traceFlags & TraceFlags.SAMPLED) !== 0;
}
