/**
 * `node --expose-gc -r ts-node/register/transpile-only bench/observability-pieces.ts [calls=200000]`
 *
 * What each piece of toolstream's observability costs on its own, in one process, in tight
 * loops (CPU of the process per call, min / median / max of 7 passes after a warm-up, and the
 * heap bytes allocated per call over 5,000 calls with no GC between):
 * - metrics, per ended tool call: ToolstreamMetrics.recordToolCall (prom-client's histogram
 *   through the series' bound child), and prom-client's observe with a label object beside it;
 * - tracing, per tool call: src/runtime/frame-spans.ts's startToolSpan + endToolSpan with a stub
 *   tracer whose spans do nothing (toolstream's own share), with the SDK's tracer and a no-op
 *   span processor, and the SDK's bare startSpan + end with the same attributes;
 * - tracing, per task: the bus carrier read back (contextFromCarrier + inSampledTrace), written
 *   (traceCarrier), and context.with, with the SDK's W3C propagator and AsyncLocalStorage
 *   context manager registered.
 * The batch processor and exporter are not here: bench/sdk-span-floor.ts and the observability
 * section measure the SDK's whole cost per span inside a server.
 */
import { ROOT_CONTEXT, SpanKind, context, trace, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { NodeTracerProvider, NoopSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { Histogram, Registry } from 'prom-client';
import type { ToolCallArtifactData } from '../src/extensions';
import { ToolstreamMetrics } from '../src/metrics';
import { resolveMetricsSettings } from '../src/metrics/metrics-settings';
import type { ModuleRef } from '@nestjs/core';
import { endToolSpan, startToolSpan } from '../src/runtime/frame-spans';
import { TRACER_NAME, contextFromCarrier, inSampledTrace, traceCarrier } from '../src/tracing';

const CALLS = Number(process.argv[2] ?? 200_000);
const PASSES = 7;

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
}

function measure(name: string, fn: (i: number) => void): void {
  for (let i = 0; i < 20_000; i++) fn(i);
  const ns: number[] = [];
  const bytes: number[] = [];
  for (let pass = 0; pass < PASSES; pass++) {
    collectGarbage();
    const heap = process.memoryUsage().heapUsed;
    for (let i = 0; i < 5_000; i++) fn(i);
    bytes.push((process.memoryUsage().heapUsed - heap) / 5_000);
    const start = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) fn(i);
    const { user, system } = process.cpuUsage(start);
    ns.push(((user + system) * 1000) / CALLS);
  }
  ns.sort((a, b) => a - b);
  bytes.sort((a, b) => a - b);
  const mid = PASSES >> 1;
  console.log(`${name}: ${ns[0].toFixed(0)} / ${ns[mid].toFixed(0)} / ${ns[PASSES - 1].toFixed(0)} ns of CPU per call (min / median / max), ${bytes[mid].toFixed(0)} B allocated`);
}

const TOOLS = ['weather', 'read_doc', 'search', 'calc'];
const TASK_ID = '7d7c1e9a-5b8f-4a34-9c1a-1b2c3d4e5f60';

function metrics(): void {
  const service = new ToolstreamMetrics(resolveMetricsSettings({ toolNames: TOOLS, defaultMetrics: false }), {} as ModuleRef);
  const calls = TOOLS.flatMap((name) => [
    { name, outcome: 'completed' as const, seconds: 0.0001 },
    { name, outcome: 'failed' as const, seconds: 0.003 },
  ]);
  measure('metrics, per tool call: ToolstreamMetrics.recordToolCall', (i) => service.recordToolCall(calls[i & 7]));
  const histogram = new Histogram({ name: 'h', help: 'h', labelNames: ['tool', 'outcome'], buckets: [0.005, 0.01, 0.1, 1, 10, 60], registers: [new Registry()] });
  const labels = calls.map(({ name, outcome }) => ({ tool: name, outcome }));
  measure("metrics, per tool call: prom-client's Histogram.observe(labels, value), for comparison", (i) => histogram.observe(labels[i & 7], calls[i & 7].seconds));
}

function tracing(): void {
  const sdk = new NodeTracerProvider({ spanProcessors: [new NoopSpanProcessor()] });
  sdk.register();
  const taskSpan = sdk.getTracer(TRACER_NAME).startSpan('invoke_agent bench');
  const parent = trace.setSpan(ROOT_CONTEXT, taskSpan);
  const carrier = traceCarrier(parent);
  const frames = Array.from({ length: 100 }, (_, i): ToolCallArtifactData => ({ toolCallId: `call_${i}`, name: 'bench_tool', phase: 'started' }) as ToolCallArtifactData);
  const toolCall = (i: number): void => {
    const span = startToolSpan(parent, frames[i % 100], TASK_ID);
    if (span) endToolSpan(span, { failed: false });
  };
  measure('tracing, per tool call: startToolSpan + endToolSpan, SDK tracer, no-op span processor', toolCall);
  const tracer = sdk.getTracer(TRACER_NAME);
  measure("tracing, per tool call: the SDK's bare startSpan + end, same attributes, no-op span processor", (i) => {
    const attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'bench_tool', 'gen_ai.tool.type': 'function', 'gen_ai.tool.call.id': frames[i % 100].toolCallId, 'a2a.task.id': TASK_ID };
    tracer.startSpan('execute_tool bench_tool', { kind: SpanKind.INTERNAL, attributes }, parent).end();
  });
  measure('tracing, per task: contextFromCarrier + inSampledTrace (the bus carrier read back)', () => inSampledTrace(contextFromCarrier(carrier)));
  measure('tracing, per task: traceCarrier (the bus carrier written)', () => traceCarrier(parent));
  measure('tracing, per task: context.with', () => context.with(parent, () => 0));
  // toolstream's share alone: a tracer whose spans do nothing.
  const stubSpan = { isRecording: () => true, end: () => undefined, setStatus: () => stubSpan, setAttribute: () => stubSpan } as unknown as Span;
  const stubTracer = { startSpan: () => stubSpan } as unknown as Tracer;
  trace.disable();
  trace.setGlobalTracerProvider({ getTracer: () => stubTracer } as TracerProvider);
  measure("tracing, per tool call: startToolSpan + endToolSpan, a stub tracer (toolstream's own share)", toolCall);
  trace.disable();
}

metrics();
tracing();
