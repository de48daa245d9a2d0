import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { ExecutorModuleOptions } from './executor-module-options';

export const {
  ConfigurableModuleClass: ConfigurableExecutorModule,
  MODULE_OPTIONS_TOKEN: EXECUTOR_MODULE_OPTIONS,
  OPTIONS_TYPE: EXECUTOR_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: EXECUTOR_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ExecutorModuleOptions>().setClassMethodName('forRoot').build();
