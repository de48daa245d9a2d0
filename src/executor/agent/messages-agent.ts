import type { BaseMessage } from '@langchain/core/messages';

/** How the executor streams an agent: state snapshots, live per-tool events and model tokens. */
export interface MessagesAgentStreamOptions {
  streamMode: Array<'values' | 'tools' | 'messages' | 'custom'>;
  signal: AbortSignal;
  /** LangGraph's step budget (each model turn and each tools step is one step). */
  recursionLimit: number;
  /**
   * `thread_id` is the run's correlationId, for agents compiled with a checkpointer;
   * `requestMetadata` the metadata of the request that started the run, for tools to read.
   */
  configurable: { thread_id: string; requestMetadata?: Readonly<Record<string, unknown>> };
}

/**
 * What the executor needs of an agent: a compiled LangGraph graph whose state has a
 * `messages` channel (MessagesAnnotation or a superset), streamed with `streamMode`
 * `["values", "tools", "messages", "custom"]`. Any `StateGraph(...).compile()` over such a state fits.
 */
export interface MessagesAgent {
  stream(input: { messages: BaseMessage[] }, options: MessagesAgentStreamOptions): Promise<AsyncIterable<unknown>>;
}
