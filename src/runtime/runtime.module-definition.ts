import { ConfigurableModuleBuilder, type DynamicModule, type Type } from '@nestjs/common';
import { booleanOption, wholeNumber } from '../common/module-options';
import type { NarrationOptions } from './narration';

export interface RuntimeModuleOptions {
  /** Phrases, prefixes, silent tools and delegation rules added to the default narration. */
  narration?: NarrationOptions;
  /**
   * Serve `agent.skill.request` from this process (default true). A front-only process that
   * hands runs to remote workers over another bus turns it off.
   */
  serveRequests?: boolean;
  /**
   * After a cancel, how long the executor has to close its open tools and complete before the
   * run is settled as cancelled regardless (default 2000 ms).
   */
  cancelGraceMs?: number;
}

export interface RuntimeModuleExtras {
  /**
   * The module that provides `AgentExecutor` (e.g. `ExecutorModule.forRoot({ tools })`).
   * Required unless `serveRequests` is false (a process that only fronts remote workers).
   */
  executor?: Type | DynamicModule;
  /** Registers the bus and runtime globally so the A2A front injects the same AgentBus (default true). */
  isGlobal?: boolean;
}

export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN: RUNTIME_MODULE_OPTIONS, OPTIONS_TYPE, ASYNC_OPTIONS_TYPE } =
  new ConfigurableModuleBuilder<RuntimeModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras<RuntimeModuleExtras>({ isGlobal: true }, (definition, extras) => ({
      ...definition,
      global: extras.isGlobal ?? true,
      imports: [...(definition.imports ?? []), ...(extras.executor ? [extras.executor] : [])],
    }))
    .build();

/** The options as given, checked at boot: a bad one fails naming it. */
export function checkRuntimeOptions(options: RuntimeModuleOptions): RuntimeModuleOptions {
  booleanOption('RuntimeModule', 'serveRequests', options.serveRequests);
  wholeNumber('RuntimeModule', 'cancelGraceMs', options.cancelGraceMs);
  const narration = options.narration as unknown;
  if (narration !== undefined && (typeof narration !== 'object' || narration === null || Array.isArray(narration))) {
    throw new Error(`RuntimeModule option narration must be an object (phrases, prefixes, silent, …), got ${JSON.stringify(narration)}`);
  }
  return options;
}
