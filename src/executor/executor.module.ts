import { Module, type Provider } from '@nestjs/common';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { MessagesAgent } from './agent/messages-agent';
import { createToolAgent } from './agent/tool-agent';
import { DeepAgentExecutor } from './deep-agent-executor.service';
import { ExecutorBootLog } from './executor-boot-log';
import { EXECUTOR_AGENT, EXECUTOR_CHAT_MODEL, EXECUTOR_TOOLS } from './executor.constants';
import { ConfigurableExecutorModule, EXECUTOR_MODULE_OPTIONS } from './executor.module-definition';
import { resolveExecutorSettings, type ExecutorModuleOptions } from './executor-module-options';
import { AgentExecutor } from './executor.types';
import { chatModelFromEnv } from './models/chat-model-from-env';
import { optionalOptions, requireForRoot } from '../common/require-for-root';

const OPTIONS = optionalOptions(EXECUTOR_MODULE_OPTIONS);
const required = (options?: ExecutorModuleOptions) => requireForRoot('ExecutorModule', options);

const providers: Provider[] = [
  {
    provide: EXECUTOR_CHAT_MODEL,
    useFactory: (options?: ExecutorModuleOptions): BaseChatModel => required(options).model ?? chatModelFromEnv(),
    inject: [OPTIONS],
  },
  {
    provide: EXECUTOR_TOOLS,
    useFactory: (options?: ExecutorModuleOptions): StructuredToolInterface[] => required(options).tools ?? [],
    inject: [OPTIONS],
  },
  {
    provide: EXECUTOR_AGENT,
    useFactory: (given: ExecutorModuleOptions | undefined, model: BaseChatModel, tools: StructuredToolInterface[]): MessagesAgent => {
      const options = required(given);
      // Checked before the agent is built, so a bad option is named rather than failing inside LangGraph.
      resolveExecutorSettings(options);
      return options.agent ?? createToolAgent(model, tools, { toolTimeoutMs: options.toolTimeoutMs });
    },
    inject: [OPTIONS, EXECUTOR_CHAT_MODEL, EXECUTOR_TOOLS],
  },
  DeepAgentExecutor,
  { provide: AgentExecutor, useExisting: DeepAgentExecutor },
  ExecutorBootLog,
];

/**
 * Runs LangGraph agents as cold Observables of tool-call-v1 frames: `forRoot({ tools })` (or
 * forRootAsync) for the default agent over your tools, or `forRoot({ agent })` for your own graph.
 * The model is OpenAI-compatible when the environment configures one, else the offline
 * OfflineToolModel (see chatModelFromEnv).
 * Provides DeepAgentExecutor, bound to the AgentExecutor token the runtime depends on.
 */
@Module({
  providers,
  exports: [DeepAgentExecutor, AgentExecutor, EXECUTOR_CHAT_MODEL, EXECUTOR_TOOLS, EXECUTOR_AGENT],
})
export class ExecutorModule extends ConfigurableExecutorModule {}
