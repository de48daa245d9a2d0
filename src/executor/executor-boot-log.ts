import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { EXECUTOR_CHAT_MODEL } from './executor.constants';
import { EXECUTOR_MODULE_OPTIONS } from './executor.module-definition';
import type { ExecutorModuleOptions } from './executor-module-options';
import { describeChatModel } from './models/openai-compatible';

/** One line at boot saying what runs the agents: the model (its name and endpoint, never its key) or a custom agent. */
@Injectable()
export class ExecutorBootLog implements OnApplicationBootstrap {
  private readonly logger = new Logger('ExecutorModule');

  constructor(
    @Inject(EXECUTOR_CHAT_MODEL) private readonly model: BaseChatModel,
    @Optional() @Inject(EXECUTOR_MODULE_OPTIONS) private readonly options?: ExecutorModuleOptions,
  ) {}

  onApplicationBootstrap(): void {
    this.logger.log(this.options?.agent ? 'agents: a custom LangGraph agent' : `agents: the default tool agent on the ${describeChatModel(this.model)}`);
  }
}
