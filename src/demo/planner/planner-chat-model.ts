import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { sleep } from '../../executor/abortable';
import { OfflineChatModel, readCurrentTurn } from '../../executor/models/offline-chat-model';
import { composeAnswer, PLANNER_HELP } from './planner-answer';
import { planToolCalls } from './planner-plan';

export interface PlannerChatModelOptions {
  /** Simulated model latency per turn, in ms (0 by default). */
  latencyMs?: number;
}

/**
 * The default model: offline and deterministic, no key, no network. On a new request it
 * plans calls of the bound tools (several at once when the request asks for several things);
 * once the results are in, it answers from them in plain sentences.
 */
export class PlannerChatModel extends OfflineChatModel {
  private readonly latencyMs: number;

  constructor(options: PlannerChatModelOptions = {}) {
    super({});
    this.latencyMs = options.latencyMs ?? 0;
  }

  static override lc_name(): string {
    return 'PlannerChatModel';
  }

  _llmType(): string {
    return 'toolstream-planner';
  }

  async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<ChatResult> {
    if (this.latencyMs > 0) await sleep(this.latencyMs, options.signal);
    const turn = readCurrentTurn(messages);
    if (turn.modelTurns > 0) return this.result(new AIMessage(composeAnswer(turn.outcomes)));
    const calls = planToolCalls(turn.request, this.boundToolNames(options));
    if (calls.length === 0) return this.result(new AIMessage(PLANNER_HELP));
    return this.result(
      new AIMessage({
        content: '',
        // Unique within the conversation: the history length only grows.
        tool_calls: calls.map((call, i) => ({ ...call, id: `call_${messages.length}_${i}`, type: 'tool_call' as const })),
      }),
    );
  }
}
