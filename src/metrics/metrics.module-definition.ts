import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { MetricsModuleOptions } from './interfaces/metrics-module-options.interface';

export const {
  ConfigurableModuleClass: ConfigurableMetricsModule,
  MODULE_OPTIONS_TOKEN: METRICS_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<MetricsModuleOptions>().setClassMethodName('forRoot').build();
