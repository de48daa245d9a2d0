export { MetricsModule } from './metrics.module';
export { METRICS_MODULE_OPTIONS } from './metrics.module-definition';
export { ToolstreamMetrics } from './toolstream-metrics.service';
export { MetricsServer } from './metrics-server';
export { ToolLabels, OTHER_TOOL_LABEL } from './tool-labels';
export { DEFAULT_METRICS_PATH, DEFAULT_TOOL_DURATION_BUCKETS } from './metrics-settings';
export type { MetricsModuleOptions } from './interfaces/metrics-module-options.interface';
