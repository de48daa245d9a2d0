import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { sleep } from '../abortable';
import { OfflineChatModel, readCurrentTurn, type OfflineChatModelCallOptions, type ToolOutcome } from './offline-chat-model';
import { describeTools, parseToolRequest, summarizeOutcomes, type PlannedCall, type ToolSignature } from './tool-request';

export interface OfflineToolModelOptions {
  /** Simulated model latency per turn, in ms (0 by default). */
  latencyMs?: number;
}

/**
 * The default model when no OpenAI-compatible endpoint is configured: offline, deterministic,
 * no key. It calls whatever tools are bound, by name: "stock_price ticker=ACME" or
 * `stock_price {"ticker":"ACME"}`, several clauses joined by "and" in parallel. Arguments are
 * read against each tool's schema; the tool itself refuses a bad one, naming it. Once the
 * results are in, it answers with a plain summary of each. A request it cannot read is answered
 * with the list of tools and their arguments.
 */
export class OfflineToolModel extends OfflineChatModel {
  private readonly latencyMs: number;

  constructor(options: OfflineToolModelOptions = {}) {
    super({});
    this.latencyMs = options.latencyMs ?? 0;
  }

  static override lc_name(): string {
    return 'OfflineToolModel';
  }

  _llmType(): string {
    return 'toolstream-offline';
  }

  async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<ChatResult> {
    if (this.latencyMs > 0) await sleep(this.latencyMs, options.signal);
    const turn = readCurrentTurn(messages);
    if (turn.modelTurns > 0) return this.result(new AIMessage(this.answer(turn.outcomes)));
    const tools = boundToolSignatures(options);
    const calls = this.plan(turn.request, tools);
    if (calls.length === 0) return this.result(new AIMessage(this.help(turn.request, tools)));
    return this.result(
      new AIMessage({
        content: '',
        // Unique within the conversation: the history length only grows.
        tool_calls: calls.map((call, i) => ({ ...call, id: `call_${messages.length}_${i}`, type: 'tool_call' as const })),
      }),
    );
  }

  /** The calls a request asks for; none when it cannot tell. */
  protected plan(request: string, tools: readonly ToolSignature[]): PlannedCall[] {
    return parseToolRequest(request, tools) ?? [];
  }

  /** The final answer, from what the tools returned. */
  protected answer(outcomes: readonly ToolOutcome[]): string {
    return summarizeOutcomes(outcomes);
  }

  /** The reply to a request it could not read. */
  protected help(_request: string, tools: readonly ToolSignature[]): string {
    return describeTools(tools);
  }
}

/** Name, description and JSON-schema parameters of each tool bound to this call. */
export function boundToolSignatures(options: OfflineChatModelCallOptions): ToolSignature[] {
  return (options.tools ?? []).map((t) => {
    const fn = convertToOpenAITool(t).function;
    return { name: fn.name, description: fn.description ?? '', parameters: (fn.parameters ?? {}) as ToolSignature['parameters'] };
  });
}
