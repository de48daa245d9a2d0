/**
 * The OpenTelemetry SDK's own CPU per span, for a span like toolstream's `execute_tool` ones,
 * measured in the process whose SDK is registered (a bench server started as the demo starts
 * it: src/otel-sdk.ts). The spans go through that SDK's tracer provider, span processor and
 * exporter, so made, ended, batched, encoded and sent to the same receiver as the server's own.
 *
 * What is counted: the CPU of the whole process (every thread, `process.cpuUsage()`) while it
 * makes `spans` spans, a few per event-loop turn as a server makes them, and flushes the batch
 * processor (so every span's export is in the window), minus the same loop with the API's no-op
 * tracer (building the attributes, the loop, the turns: toolstream's share, not the SDK's).
 * Whoever calls it checks that the receiver got every span (the batch processor drops spans
 * when its queue is full).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProxyTracerProvider, ROOT_CONTEXT, SpanKind, TraceFlags, trace, type Context, type Tracer } from '@opentelemetry/api';
import { TRACER_NAME } from '../../src/tracing';

/**
 * Spans made per event-loop turn, one turn a millisecond (at most 16,000 spans/s; a server at
 * 100 tool calls per task makes some 10,000): the batch processor's exports run between turns.
 * Made flat out, the spans fill its queue (2,048) faster than the exports empty it and it drops some.
 */
const SPANS_PER_TURN = 16;
/** Tool calls per task id, as in the section's long tasks. */
const CALLS_PER_TASK = 100;
/** The bench's scripted tool (bench/lib/scenario.ts). */
const TOOL_NAME = 'bench_tool';

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

/** Makes and ends `ids.length` spans with src/runtime/frame-spans.ts's name, kind and attributes. */
async function makeSpans(tracer: Tracer, parent: Context, ids: readonly string[], taskIds: readonly string[]): Promise<void> {
  const name = `execute_tool ${TOOL_NAME}`;
  for (let i = 0; i < ids.length; ) {
    const end = Math.min(ids.length, i + SPANS_PER_TURN);
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
    await sleep(1);
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
  await makeSpans(noop, parent, ids, taskIds);
  const loopUs = cpuUs(loopStart);
  const start = process.cpuUsage();
  await makeSpans(tracer, parent, ids, taskIds);
  await provider.forceFlush();
  const usedUs = cpuUs(start);
  return { spans, perSpanUs: (usedUs - loopUs) / spans, loopPerSpanUs: loopUs / spans };
}
