import { Module, type DynamicModule } from '@nestjs/common';
import { optionalOptions, requireForRoot } from '../common/require-for-root';
import { AGENT_EXTENSIONS } from './extensions.constants';
import { agentExtensions, ConfigurableModuleClass, EXTENSIONS_MODULE_OPTIONS, type ExtensionsModuleOptions } from './extensions.module-definition';

export type { ExtensionsModuleOptions } from './extensions.module-definition';

/**
 * The tool-call-v1 contract in Nest: provides the agent-card extension entries under
 * AGENT_EXTENSIONS. `ExtensionsModule.forRoot()` for tool-call-v1 alone, `forRoot({ additional })`
 * to declare more, or `forRootAsync`. A2aModule imports `forRoot()` itself unless given its own.
 */
@Module({
  providers: [
    {
      provide: AGENT_EXTENSIONS,
      inject: [optionalOptions(EXTENSIONS_MODULE_OPTIONS)],
      useFactory: (options?: ExtensionsModuleOptions) => agentExtensions(requireForRoot('ExtensionsModule', options)),
    },
  ],
  exports: [AGENT_EXTENSIONS],
})
export class ExtensionsModule extends ConfigurableModuleClass {
  /** Every option is optional here: `forRoot()` declares tool-call-v1 alone. */
  static override forRoot(options: ExtensionsModuleOptions = {}): DynamicModule {
    return super.forRoot(options);
  }
}
