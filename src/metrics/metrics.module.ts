import { Inject, Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import type { MetricsModuleOptions, MetricsSettings } from './interfaces/metrics-module-options.interface';
import { ConfigurableMetricsModule, METRICS_MODULE_OPTIONS } from './metrics.module-definition';
import { METRICS_SETTINGS } from './metrics.constants';
import { MetricsEndpoint } from './metrics-endpoint';
import { MetricsMiddleware } from './metrics.middleware';
import { MetricsServer } from './metrics-server';
import { resolveMetricsSettings } from './metrics-settings';
import { ToolstreamMetrics } from './toolstream-metrics.service';

/**
 * Prometheus metrics of toolstream (prom-client): tool calls and their durations, tasks by
 * terminal state, open streams, live tasks, frames, plus Node/process defaults, served as text
 * at `/metrics` (configurable, or off, or on a port of its own).
 *
 * ```ts
 * MetricsModule.forRoot({ path: '/internal/metrics' })
 * ```
 */
@Module({
  providers: [
    {
      provide: METRICS_SETTINGS,
      inject: [{ token: METRICS_MODULE_OPTIONS, optional: true }],
      useFactory: (options?: MetricsModuleOptions) => resolveMetricsSettings(options),
    },
    ToolstreamMetrics,
    MetricsEndpoint,
    MetricsMiddleware,
    MetricsServer,
  ],
  exports: [ToolstreamMetrics, MetricsServer],
})
export class MetricsModule extends ConfigurableMetricsModule implements NestModule {
  constructor(@Inject(METRICS_SETTINGS) private readonly settings: MetricsSettings) {
    super();
  }

  configure(consumer: MiddlewareConsumer): void {
    const { path, port } = this.settings;
    if (path === false || port !== undefined) return;
    consumer.apply(MetricsMiddleware).forRoutes({ path, method: RequestMethod.ALL });
  }
}
