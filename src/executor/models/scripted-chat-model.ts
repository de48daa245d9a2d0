import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { sleep } from '../abortable';
import { OfflineChatModel, readCurrentTurn } from './offline-chat-model';

export interface ScriptedToolCall {
  name: string;
  args?: Record<string, unknown>;
  /** Given as is (even ""); by default `call_<history length>_<index>`, or none with `omitIds`. */
  id?: string;
}

interface TurnTiming {
  /** Waits this long first (aborted with the run). */
  delayMs?: number;
}

export type ScriptedTurn =
  | ({ toolCalls: ScriptedToolCall[] } & TurnTiming)
  | ({ text: string } & TurnTiming)
  /** The model call fails with this message. */
  | ({ error: string } & TurnTiming)
  /** The model call never settles and ignores its abort signal, like a stuck connection. */
  | { hang: true };

export interface ScriptedChatModelOptions {
  turns: ScriptedTurn[];
  /** Tool calls without an explicit id get none at all (models that omit ids). */
  omitIds?: boolean;
}

/**
 * A deterministic chat model for tests and benchmarks: turn k of each request (counted from
 * the last user message) plays `turns[k]`. Stateless, so one instance serves concurrent runs.
 */
export class ScriptedChatModel extends OfflineChatModel {
  private readonly turns: ScriptedTurn[];
  private readonly omitIds: boolean;

  constructor(options: ScriptedChatModelOptions) {
    super({});
    this.turns = options.turns;
    this.omitIds = options.omitIds ?? false;
  }

  static override lc_name(): string {
    return 'ScriptedChatModel';
  }

  _llmType(): string {
    return 'toolstream-scripted';
  }

  async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<ChatResult> {
    const index = readCurrentTurn(messages).modelTurns;
    const turn = this.turns[index];
    if (!turn) throw new Error(`ScriptedChatModel: the script has no turn ${index + 1} (it has ${this.turns.length})`);
    if ('hang' in turn) return new Promise<never>(() => undefined);
    if (turn.delayMs) await sleep(turn.delayMs, options.signal);
    if ('error' in turn) throw new Error(turn.error);
    if ('text' in turn) return this.result(new AIMessage(turn.text));
    return this.result(
      new AIMessage({
        content: '',
        tool_calls: turn.toolCalls.map((call, i) => ({
          name: call.name,
          args: call.args ?? {},
          id: call.id ?? (this.omitIds ? undefined : `call_${messages.length}_${i}`),
          type: 'tool_call' as const,
        })),
      }),
    );
  }
}
