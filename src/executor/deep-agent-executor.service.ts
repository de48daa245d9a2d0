import { Inject, Injectable, Optional } from '@nestjs/common';
import { Observable } from 'rxjs';
import { AgentRun } from './agent-run';
import { tracesItsToolCalls } from './agent/tool-agent';
import type { MessagesAgent } from './agent/messages-agent';
import { EXECUTOR_AGENT } from './executor.constants';
import { requireForRoot } from '../common/require-for-root';
import { EXECUTOR_MODULE_OPTIONS } from './executor.module-definition';
import { resolveExecutorSettings, type ExecutorModuleOptions, type ExecutorSettings } from './executor-module-options';
import { AgentExecutor, type ExecutorEvent, type ExecutorInput, type ExecutorRunOptions } from './executor.types';

/**
 * Runs the LangGraph agent as a cold Observable of live events: "thinking" at once, then a
 * progress line per tool-calling model turn, a tool-call-v1 frame the moment each phase
 * happens, and finally the reply or an error. Unsubscribing aborts the graph and its tools.
 */
@Injectable()
export class DeepAgentExecutor extends AgentExecutor {
  private readonly settings: ExecutorSettings;

  constructor(
    @Inject(EXECUTOR_AGENT) private readonly agent: MessagesAgent,
    @Optional() @Inject(EXECUTOR_MODULE_OPTIONS) options?: ExecutorModuleOptions,
  ) {
    super();
    // Bad options fail here, at startup, with the option named.
    this.settings = resolveExecutorSettings(requireForRoot('ExecutorModule', options));
  }

  /** The default agent traces its tool calls (their bodies run inside the spans); a custom agent's get theirs from the runtime. */
  override get tracesToolCalls(): boolean {
    return tracesItsToolCalls(this.agent);
  }

  run(input: ExecutorInput, options: ExecutorRunOptions): Observable<ExecutorEvent> {
    return new Observable<ExecutorEvent>((subscriber) => {
      const run = new AgentRun(this.agent, this.settings, subscriber, options);
      run.start(input);
      return () => run.dispose();
    });
  }
}
