import { Module, type Provider } from '@nestjs/common';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { MessagesAgent } from './agent/messages-agent';
import { createToolAgent } from './agent/tool-agent';
import { DeepAgentExecutor } from './deep-agent-executor.service';
import { EXECUTOR_AGENT, EXECUTOR_CHAT_MODEL, EXECUTOR_TOOLS } from './executor.constants';
import { ConfigurableExecutorModule, EXECUTOR_MODULE_OPTIONS } from './executor.module-definition';
import type { ExecutorModuleOptions } from './executor-module-options';
import { AgentExecutor } from './executor.types';
import { chatModelFromEnv } from './models/chat-model-from-env';
import { createDemoTools } from '../demo/tools/demo-tools';

/** Present after forRoot / forRootAsync; a plain import runs on the defaults. */
const OPTIONS = { token: EXECUTOR_MODULE_OPTIONS, optional: true };

const providers: Provider[] = [
  {
    provide: EXECUTOR_CHAT_MODEL,
    useFactory: (options?: ExecutorModuleOptions): BaseChatModel => options?.model ?? chatModelFromEnv(),
    inject: [OPTIONS],
  },
  {
    provide: EXECUTOR_TOOLS,
    useFactory: (options?: ExecutorModuleOptions): StructuredToolInterface[] => options?.tools ?? createDemoTools(),
    inject: [OPTIONS],
  },
  {
    provide: EXECUTOR_AGENT,
    useFactory: (options: ExecutorModuleOptions | undefined, model: BaseChatModel, tools: StructuredToolInterface[]): MessagesAgent =>
      options?.agent ?? createToolAgent(model, tools, { toolTimeoutMs: options?.toolTimeoutMs }),
    inject: [OPTIONS, EXECUTOR_CHAT_MODEL, EXECUTOR_TOOLS],
  },
  DeepAgentExecutor,
  { provide: AgentExecutor, useExisting: DeepAgentExecutor },
];

/**
 * Runs LangGraph agents as cold Observables of tool-call-v1 frames. Import it plainly for
 * the offline demo agent, or configure it with forRoot / forRootAsync (ExecutorModuleOptions).
 * Provides DeepAgentExecutor, bound to the AgentExecutor token the runtime depends on.
 */
@Module({
  providers,
  exports: [DeepAgentExecutor, AgentExecutor, EXECUTOR_CHAT_MODEL, EXECUTOR_TOOLS, EXECUTOR_AGENT],
})
export class ExecutorModule extends ConfigurableExecutorModule {}
