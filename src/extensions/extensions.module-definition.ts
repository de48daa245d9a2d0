import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { AgentExtension } from '@a2a-js/sdk';
import { nonEmptyString } from '../common/module-options';
import { toolCallV1AgentExtension } from './tool-call-v1';

export interface ExtensionsModuleOptions {
  /** Overrides the description of the tool-call-v1 entry on the agent card. */
  toolCallDescription?: string;
  /** Further extensions the embedding agent declares beside tool-call-v1. */
  additional?: AgentExtension[];
}

export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN: EXTENSIONS_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<ExtensionsModuleOptions>().setClassMethodName('forRoot').build();

/** The card's extension entries, tool-call-v1 first; a malformed entry fails at boot, named. */
export function agentExtensions(options: ExtensionsModuleOptions): AgentExtension[] {
  const description = nonEmptyString('ExtensionsModule', 'toolCallDescription', options.toolCallDescription);
  const additional = options.additional ?? [];
  if (!Array.isArray(additional)) throw new Error('ExtensionsModule option additional must be an array of agent-card extensions');
  additional.forEach((extension, i) => {
    const uri = (extension as { uri?: unknown } | null)?.uri;
    if (typeof uri !== 'string' || !/^[a-z][\w+.-]*:\S+$/i.test(uri)) {
      throw new Error(`ExtensionsModule option additional[${i}].uri must be a URI, got ${JSON.stringify(uri)}`);
    }
  });
  return [toolCallV1AgentExtension(description), ...additional];
}
