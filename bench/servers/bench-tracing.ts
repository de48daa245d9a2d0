/**
 * The OpenTelemetry Node SDK as a host would register it, for the observability section's
 * "on" server: the SDK's context manager (AsyncLocalStorage), the default sampler (every trace
 * recorded) and a BatchSpanProcessor, whose exporter takes every batch on this process and
 * counts its spans instead of sending them (so the figure is toolstream's cost, not a network's).
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

let exported = 0;

/** Spans the exporter has received so far. */
export function spansExported(): number {
  return exported;
}

class CountingExporter implements SpanExporter {
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    exported += spans.length;
    done({ code: ExportResultCode.SUCCESS });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export async function startBenchTracing(): Promise<void> {
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  new NodeSDK({
    serviceName: 'toolstream-bench',
    spanProcessors: [new BatchSpanProcessor(new CountingExporter())],
    // Metrics go to Prometheus through /metrics, logs to stdout: the SDK exports neither.
    metricReaders: [],
    logRecordProcessors: [],
    autoDetectResources: false,
  }).start();
}
