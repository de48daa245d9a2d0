import { DynamicModule, Module } from '@nestjs/common';
import type { AgentExtension } from '@a2a-js/sdk';
import { AGENT_EXTENSIONS } from './extensions.constants';
import { toolCallV1AgentExtension } from './tool-call-v1';

export interface ExtensionsModuleOptions {
  /** Overrides the description of the tool-call-v1 entry on the agent card. */
  toolCallDescription?: string;
  /** Further extensions the embedding agent declares beside tool-call-v1. */
  additional?: AgentExtension[];
}

/**
 * The tool-call-v1 contract in Nest: provides the agent-card extension entries under
 * AGENT_EXTENSIONS. Import it plainly for the defaults, or through forRoot to add entries.
 */
@Module({
  providers: [{ provide: AGENT_EXTENSIONS, useFactory: (): AgentExtension[] => [toolCallV1AgentExtension()] }],
  exports: [AGENT_EXTENSIONS],
})
export class ExtensionsModule {
  static forRoot(options: ExtensionsModuleOptions = {}): DynamicModule {
    return {
      module: ExtensionsModule,
      providers: [
        {
          provide: AGENT_EXTENSIONS,
          useValue: [toolCallV1AgentExtension(options.toolCallDescription), ...(options.additional ?? [])],
        },
      ],
      exports: [AGENT_EXTENSIONS],
    };
  }
}
