/**
 * The OpenTelemetry SDK's own CPU per span, for a span like toolstream's `execute_tool` ones,
 * measured in the process whose SDK is registered (a bench server started as the demo starts
 * it: src/otel-sdk.ts). The spans go through that SDK's tracer provider, span processor and
 * exporter, so made, ended, batched, encoded and sent to the same receiver as the server's own.
 *
 * What is counted: the CPU of the whole process (every thread, `process.cpuUsage()`) while it
 * makes `spans` spans, a few dozen per event-loop turn, waiting for each batch's export, and
 * flushes the batch processor at the end (so every span's export is in the window), minus the
 * same loop with the API's no-op tracer (building the attributes, the loop, the turns:
 * toolstream's share, not the SDK's).
 * Whoever calls it checks that the receiver got every span (the batch processor drops spans
 * when its queue is full).
 */
import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ProxyTracerProvider, ROOT_CONTEXT, SpanKind, TraceFlags, trace, type Context, type Tracer } from '@opentelemetry/api';
import { TRACER_NAME } from '../../src/tracing';

/** Spans made per event-loop turn. */
const SPANS_PER_TURN = 64;
/** Tool calls per task id, as in the section's long tasks. */
const CALLS_PER_TASK = 100;
/** The bench's scripted tool (bench/lib/scenario.ts). */
const TOOL_NAME = 'bench_tool';

/**
 * The batch processor's export batch (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, default 512): the loop
 * waits for each batch's export before it makes the next one. Made flat out, the spans fill the
 * processor's queue (2,048) faster than the exports empty it, and it drops some; paced by a
 * timer instead (16 spans a millisecond), the figure came out up to twice as high.
 */
function exportBatch(): number {
  const size = Number(process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE);
  return Number.isInteger(size) && size > 0 ? size : 512;
}

export interface SpanFloor {
  spans: number;
  /** The SDK's CPU per span (µs): the loop with the SDK's tracer, its flush included, less the loop with the no-op tracer. */
  perSpanUs: number;
  /** The same loop with the API's no-op tracer, per span (µs). */
  loopPerSpanUs: number;
}

interface FlushingProvider {
  getTracer(name: string): Tracer;
  forceFlush(): Promise<void>;
}

function registeredProvider(): FlushingProvider {
  const global = trace.getTracerProvider();
  const provider = global instanceof ProxyTracerProvider ? global.getDelegate() : global;
  if (typeof (provider as Partial<FlushingProvider>).forceFlush !== 'function') throw new Error('sdk-span-floor: no OpenTelemetry SDK is registered in this process');
  return provider as FlushingProvider;
}

/** A sampled local parent, as the task's `invoke_agent` span is for the tool spans made from frames. */
function taskSpanContext(): Context {
  const hex = (bytes: number): string => randomUUID().replace(/-/g, '').slice(0, bytes * 2);
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: hex(16), spanId: hex(8), traceFlags: TraceFlags.SAMPLED, isRemote: false });
}

/**
 * Makes and ends `ids.length` spans with src/runtime/frame-spans.ts's name, kind and attributes,
 * a batch at a time, each batch followed by `flush` (the SDK's: wait for its export).
 */
async function makeSpans(tracer: Tracer, parent: Context, ids: readonly string[], taskIds: readonly string[], flush: () => Promise<void>): Promise<void> {
  const name = `execute_tool ${TOOL_NAME}`;
  const batch = exportBatch();
  for (let i = 0; i < ids.length; ) {
    if (i > 0 && i % batch === 0) await flush();
    const end = Math.min(ids.length, i + SPANS_PER_TURN, (Math.floor(i / batch) + 1) * batch);
    for (; i < end; i++) {
      tracer
        .startSpan(
          name,
          {
            kind: SpanKind.INTERNAL,
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': TOOL_NAME,
              'gen_ai.tool.type': 'function',
              'gen_ai.tool.call.id': ids[i],
              'a2a.task.id': taskIds[Math.floor(i / CALLS_PER_TASK)],
            },
          },
          parent,
        )
        .end();
    }
    await nextTurn();
  }
}

const cpuUs = (since: NodeJS.CpuUsage): number => {
  const { user, system } = process.cpuUsage(since);
  return user + system;
};

/** Measures the registered SDK's CPU per span over `spans` spans (see the file's comment). */
export async function measureSdkSpanFloor(spans: number): Promise<SpanFloor> {
  const provider = registeredProvider();
  const tracer = provider.getTracer(TRACER_NAME);
  const noop = new ProxyTracerProvider().getTracer(TRACER_NAME);
  const ids = Array.from({ length: spans }, (_, i) => `call_${i}`);
  const taskIds = Array.from({ length: Math.ceil(spans / CALLS_PER_TASK) }, () => randomUUID());
  const parent = taskSpanContext();
  // Whatever the server still holds goes out first, outside the window.
  await provider.forceFlush();
  const loopStart = process.cpuUsage();
  await makeSpans(noop, parent, ids, taskIds, () => Promise.resolve());
  const loopUs = cpuUs(loopStart);
  const start = process.cpuUsage();
  await makeSpans(tracer, parent, ids, taskIds, () => provider.forceFlush());
  await provider.forceFlush();
  const usedUs = cpuUs(start);
  return { spans, perSpanUs: (usedUs - loopUs) / spans, loopPerSpanUs: loopUs / spans };
}
