/**
 * The executor's public vocabulary, fixed first so the runtime can be built against it.
 * The executor turns one agent run into a cold Observable of these events.
 */
import type { BaseMessage } from '@langchain/core/messages';
import type { Observable } from 'rxjs';
import type { ToolCallArtifactData } from '../extensions';

/** One tool call the model asked for in a turn (what narration is made from). */
export interface TurnToolCall {
  toolCallId: string;
  name: string;
  args: unknown;
}

export type ExecutorEvent =
  /**
   * Narration. Step 0 is "thinking", emitted the instant the run starts; each later step is
   * one model turn that calls tools, with those calls in `tools` so a narrator can phrase them.
   * A delegated agent's narration comes without `tools`, with the step of the turn that delegated.
   */
  | {
      type: 'progress';
      text: string;
      step: number;
      tools?: TurnToolCall[];
      /** What the model wrote in that turn before calling the tools (narration, not answer). */
      said?: string;
    }
  /** One tool-call-v1 frame, emitted the moment its phase happens. */
  | { type: 'toolFrame'; frame: ToolCallArtifactData }
  /**
   * A piece of the final answer as the model writes it, coalesced. `append: false` starts the
   * answer afresh, replacing what was sent before (an empty one withdraws text that turned out
   * to be narration, when the model went on to call tools); `last` ends it. The pieces from
   * the last `append: false` to the `last` one concatenate to the reply's text exactly.
   */
  | { type: 'answer'; text: string; append: boolean; last: boolean }
  /** The agent's final answer: the last AI message and its text (after its `last` answer piece). */
  | { type: 'reply'; message: BaseMessage; text: string }
  /** The run failed (model error, time budget, graph error); the run ends after it. */
  | { type: 'error'; error: string };

/** The user's text, or LangChain messages (history, then the new one). */
export type ExecutorInput = string | BaseMessage[];

export interface ExecutorRunOptions {
  /** Correlates every event of this run (the A2A task id). */
  correlationId: string;
  /**
   * Aborting it closes the open tools with `failed: "cancelled"` frames, aborts the graph and
   * the tools, then completes the Observable.
   */
  signal?: AbortSignal;
  /**
   * The controller of `signal`, when the caller lets the executor abort it too: an executor that
   * stops its own work (its time budget ran out, it failed, its subscriber left) aborts this one
   * instead of making a controller of its own, so a run makes one AbortSignal, not two (on Node
   * 20 each costs ~5 µs and hidden classes of its own in the old generation). The caller must
   * not read such an abort as a cancel: by then the run's events have ended it, or the caller
   * has unsubscribed.
   */
  controller?: AbortController;
  /**
   * The metadata of the request that started the run (A2A message metadata over the request's),
   * handed to the tools as `configurable.requestMetadata` (remote-agent tools read the
   * delegation depth there).
   */
  metadata?: Readonly<Record<string, unknown>>;
}

/**
 * DI token and contract for whatever runs agents. ExecutorModule binds it to DeepAgentExecutor;
 * a backend may bind its own. `run` is cold: subscribing starts the run, unsubscribing aborts it.
 */
export abstract class AgentExecutor {
  /**
   * True when the executor opens the `execute_tool` spans of its tool calls itself (the default
   * agent does, so a tool's body runs inside its span). Otherwise the runtime makes them from
   * the run's frames, so every agent's tool calls are traced.
   */
  get tracesToolCalls(): boolean {
    return false;
  }

  abstract run(input: ExecutorInput, options: ExecutorRunOptions): Observable<ExecutorEvent>;
}
