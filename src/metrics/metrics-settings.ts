import type { MetricsModuleOptions, MetricsSettings } from './interfaces/metrics-module-options.interface';

/** Tool calls take from milliseconds (a lookup) to minutes (a remote agent). */
export const DEFAULT_TOOL_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export const DEFAULT_METRICS_PATH = '/metrics';

/** Checks the options and fills in the defaults; every problem is a specific error at startup. */
export function resolveMetricsSettings(options: MetricsModuleOptions = {}): MetricsSettings {
  const path = options.path ?? DEFAULT_METRICS_PATH;
  if (path !== false && (typeof path !== 'string' || !path.startsWith('/') || /[\s?#]/.test(path))) {
    throw new Error(`MetricsModule: path must be false or a URL path starting with "/" (no spaces, "?" or "#"), got ${JSON.stringify(path)}`);
  }
  const { port } = options;
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new Error(`MetricsModule: port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  const toolNames = options.toolNames ?? [];
  if (!Array.isArray(toolNames) || !toolNames.every((name) => typeof name === 'string' && name !== '')) {
    throw new Error('MetricsModule: toolNames must be a list of non-empty strings');
  }
  const buckets = options.toolDurationBuckets ?? DEFAULT_TOOL_DURATION_BUCKETS;
  if (!Array.isArray(buckets) || buckets.length === 0 || !buckets.every((b, i) => Number.isFinite(b) && b > 0 && (i === 0 || b > buckets[i - 1]))) {
    throw new Error('MetricsModule: toolDurationBuckets must be a non-empty list of increasing positive numbers of seconds');
  }
  return {
    path,
    port,
    host: options.host,
    auth: options.auth ?? true,
    defaultMetrics: options.defaultMetrics ?? true,
    registry: options.registry,
    toolNames,
    toolDurationBuckets: buckets,
  };
}
