/** DI token of the checked MetricsModule settings. */
export const METRICS_SETTINGS = Symbol('METRICS_SETTINGS');
