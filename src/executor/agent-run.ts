/**
 * One run of an agent, driving one subscriber: the body of DeepAgentExecutor.run's cold
 * Observable. It streams the graph with `["values", "tools", "messages", "custom"]`
 * (`custom` carries the work of agents that tools delegate to, see forwarding.ts), turns chunks
 * into events through a ToolFrameTracker (frames) and an AnswerStream (the answer as it is
 * written), and ends exactly once: with a reply, an error, a cancel (abort of
 * `options.signal`), or silently on unsubscribe.
 */
import { AIMessage, AIMessageChunk, BaseMessage, HumanMessage } from '@langchain/core/messages';
import { context } from '@opentelemetry/api';
import type { Subscriber } from 'rxjs';
import { inSampledTrace, withTaskId } from '../tracing';
import { AnswerStream } from './answer/answer-stream';
import type { MessagesAgent } from './agent/messages-agent';
import { ModelSpansHandler } from './agent/model-spans';
import { tracesItsToolCalls } from './agent/tool-agent';
import type { ExecutorSettings } from './executor-module-options';
import type { ExecutorEvent, ExecutorInput, ExecutorRunOptions } from './executor.types';
import { isForwardedChunk } from './forwarding';
import { isToolStreamEvent, ToolFrameTracker } from './frames/tool-frame-tracker';
import { contentText, errorMessage } from './frames/tool-output';

/** The error of each tool still open when the run is cancelled. */
export const CANCELLED = 'cancelled';

/** The run's messages, or why the input cannot be run. */
export function inputMessages(input: ExecutorInput): BaseMessage[] | string {
  if (typeof input === 'string') {
    return input.trim() === '' ? 'input is empty: send the user text or a list of messages' : [new HumanMessage(input)];
  }
  if (!Array.isArray(input) || input.length === 0) return 'input must be the user text or a non-empty list of LangChain messages';
  const bad = input.findIndex((m) => !BaseMessage.isInstance(m));
  return bad >= 0 ? `input message ${bad} is not a LangChain message` : input.slice();
}

/** Text for a reply out of a LangGraph interrupt's value: the question put to the user. */
function interruptText(value: unknown): string {
  if (typeof value === 'string') return value;
  const fields = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  for (const key of ['question', 'message', 'prompt']) if (typeof fields[key] === 'string') return fields[key] as string;
  return errorMessage(value);
}

export class AgentRun {
  /** Aborts the graph and its tools: the caller's controller of `options.signal` when it lends it (one signal per run). */
  private readonly controller: AbortController;
  private readonly tracker: ToolFrameTracker;
  private readonly answer: AnswerStream;
  private ended = false;
  /** The graph's stream ran to its end: nothing of it runs any more. */
  private graphDone = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastMessages: readonly BaseMessage[] = [];
  private interrupt: { value: unknown } | undefined;
  private readonly onCancel = (): void => {
    this.answer.flush();
    this.end(this.tracker.closeOpen(CANCELLED));
  };

  constructor(
    private readonly agent: MessagesAgent,
    private readonly settings: ExecutorSettings,
    private readonly subscriber: Subscriber<ExecutorEvent>,
    private readonly options: ExecutorRunOptions,
  ) {
    this.controller = options.controller ?? new AbortController();
    this.tracker = new ToolFrameTracker(settings.hygiene);
    this.answer = new AnswerStream((event) => this.emit([event]), settings.answerChunking);
  }

  start(input: ExecutorInput): void {
    const signal = this.options.signal;
    if (signal?.aborted) {
      this.end([]);
      return;
    }
    const messages = inputMessages(input);
    if (typeof messages === 'string') {
      this.end([{ type: 'error', error: messages }]);
      return;
    }
    // Motion before the first model turn, which may take seconds.
    this.subscriber.next(this.tracker.thinking());
    signal?.addEventListener('abort', this.onCancel, { once: true });
    const budget = this.settings.runTimeoutMs;
    if (budget !== undefined) this.timer = setTimeout(() => this.fail(`run timed out after ${budget} ms`), budget);
    // The run's model and tool spans nest under the active span and name the task.
    void context.with(withTaskId(context.active(), this.options.correlationId), () => this.consume(messages));
  }

  /** Unsubscribe: stop the graph and the tools, emit nothing more. */
  dispose(): void {
    if (this.ended) return;
    this.ended = true;
    this.release();
  }

  private async consume(messages: BaseMessage[]): Promise<void> {
    try {
      const stream = await this.agent.stream(
        { messages },
        {
          streamMode: ['values', 'tools', 'messages', 'custom'],
          signal: this.controller.signal,
          recursionLimit: this.settings.maxSteps,
          configurable: { thread_id: this.options.correlationId, requestMetadata: this.options.metadata ?? {} },
          // Agents other than the default one get their model calls' spans from a callback; only
          // when the run is in a sampled trace, so an untraced run pays nothing.
          ...(!tracesItsToolCalls(this.agent) && inSampledTrace()
            ? { callbacks: [new ModelSpansHandler(context.active(), this.options.correlationId)] }
            : {}),
        },
      );
      for await (const chunk of stream) {
        if (this.ended) return;
        this.onChunk(chunk);
      }
      this.graphDone = true;
      if (!this.ended) this.finish();
    } catch (err) {
      // Left unset: a graph that failed may still have sibling tools running (one tool threw while
      // others of the same step had not settled), and the abort on release stops them.
      // After an abort the graph rejects; the run has already ended then.
      if (!this.ended) this.fail(errorMessage(err));
    }
  }

  private onChunk(chunk: unknown): void {
    if (!Array.isArray(chunk) || chunk.length !== 2) return;
    // Indexed, not destructured: destructuring goes through the array iterator on every chunk.
    const mode: unknown = chunk[0];
    const data: unknown = chunk[1];
    if (mode === 'messages' && Array.isArray(data)) {
      this.onMessageChunk(data[0], data[1]);
    } else if (mode === 'tools' && isToolStreamEvent(data)) {
      this.emit(this.tracker.fromToolEvent(data));
    } else if (mode === 'custom') {
      // Another agent's work, forwarded by the tool call that delegated to it.
      if (!isForwardedChunk(data)) return;
      this.emit('frame' in data ? this.tracker.fromForwarded(data.callId, data.frame) : this.tracker.forwardedNarration(data.callId, data.narration));
    } else if (mode === 'values' && typeof data === 'object' && data !== null) {
      const state = data as { messages?: unknown; __interrupt__?: unknown };
      if (Array.isArray(state.messages)) {
        this.lastMessages = state.messages as BaseMessage[];
        const newest = this.lastMessages[this.lastMessages.length - 1];
        // A turn that called tools (known at the latest now) wrote narration, not answer.
        if (newest !== undefined && AIMessage.isInstance(newest) && newest.tool_calls?.length) this.answer.withdraw();
        this.emit(this.tracker.fromValues(this.lastMessages));
      }
      // A paused graph (interrupt) is waiting for input, not failing: its tool stays open.
      if (Array.isArray(state.__interrupt__) && state.__interrupt__.length > 0) {
        this.interrupt = { value: (state.__interrupt__[0] as { value?: unknown }).value };
      }
    }
  }

  /**
   * A `messages` chunk: a chat model's token, or a node's whole output message (which the
   * state already brings). Only tokens are answer, and only while no tool runs: text written
   * then comes from a model inside a tool. One model call is told from the next by the graph
   * task it runs in (servers may give every completion the same id).
   */
  private onMessageChunk(message: unknown, metadata: unknown): void {
    if (!AIMessageChunk.isInstance(message)) return;
    const meta = (typeof metadata === 'object' && metadata !== null ? metadata : {}) as Record<string, unknown>;
    if (meta.ls_model_type !== 'chat') return;
    const id = `${String(meta.langgraph_checkpoint_ns ?? '')}|${message.id ?? ''}`;
    if (message.tool_call_chunks?.length) {
      this.answer.withdraw(id);
      return;
    }
    if (this.tracker.openCount === 0) this.answer.write(id, contentText(message.content));
  }

  /** The graph ran to its end: the reply is its last AI message, or the interrupt's question. */
  private finish(): void {
    if (this.interrupt) {
      const text = interruptText(this.interrupt.value);
      this.reply(new AIMessage(text), text);
      return;
    }
    const last = this.lastMessages[this.lastMessages.length - 1];
    if (last !== undefined && AIMessage.isInstance(last) && !last.tool_calls?.length) {
      this.reply(last, contentText(last.content));
      return;
    }
    this.fail('the agent ended without a final answer');
  }

  private reply(message: BaseMessage, text: string): void {
    this.answer.finish(text);
    this.end([{ type: 'reply', message, text }]);
  }

  /** Model error, graph error or time budget: open tools fail with the same reason. */
  private fail(error: string): void {
    if (this.ended) return;
    this.answer.flush();
    this.end([...this.tracker.closeOpen(error), { type: 'error', error }]);
  }

  private end(events: ExecutorEvent[]): void {
    if (this.ended) return;
    this.emit(events);
    this.ended = true;
    this.release();
    this.subscriber.complete();
  }

  private emit(events: ExecutorEvent[]): void {
    for (const event of events) {
      // A consumer may unsubscribe from inside next(); nothing reaches it after that.
      if (this.subscriber.closed) return;
      this.subscriber.next(event);
    }
  }

  private release(): void {
    clearTimeout(this.timer);
    this.answer.dispose();
    this.options.signal?.removeEventListener('abort', this.onCancel);
    // A running (or failed) graph stops with its tools. One whose stream ran to its end has
    // nothing left to stop, and aborting it anyway cost an Error (its stack) and an abort event
    // through every signal LangGraph and LangChain derived from this one (AbortSignal.any).
    if (!this.graphDone) this.controller.abort(new Error(CANCELLED));
  }
}
