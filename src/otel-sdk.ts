/**
 * The demo app's OpenTelemetry SDK: started only when the standard variables ask for traces,
 * so nothing is exported by default. The library itself uses @opentelemetry/api alone.
 */

/** Whether the environment asks for exported traces (OTEL_TRACES_EXPORTER, or an OTLP endpoint). */
export function tracesRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (exporters.length > 0) return exporters.some((name) => name !== 'none');
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts the Node SDK configured by the environment (OTEL_EXPORTER_OTLP_ENDPOINT,
 * OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf, http/json or grpc, OTEL_SERVICE_NAME,
 * OTEL_TRACES_EXPORTER, OTEL_BSP_*, …) when it asks for traces. Returns the function that
 * flushes and stops it, or undefined when it was not started.
 */
export async function startTracingFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<(() => Promise<void>) | undefined> {
  if (!tracesRequested(env)) return undefined;
  // The demo serves its metrics to Prometheus and logs to stdout: the SDK exports those only
  // when asked explicitly.
  env.OTEL_METRICS_EXPORTER ??= 'none';
  env.OTEL_LOGS_EXPORTER ??= 'none';
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const sdk = new NodeSDK();
  sdk.start();
  return () => sdk.shutdown();
}
