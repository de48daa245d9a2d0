import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatGenerationChunk, ChatResult } from '@langchain/core/outputs';
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
  /** Tool calls, after `text` when given (what the model says before calling them). */
  | ({ toolCalls: ScriptedToolCall[]; text?: string } & TurnTiming)
  /**
   * An answer. Streamed (LangGraph's `messages` mode) as `chunks` when given, which must
   * concatenate to `text`, `chunkDelayMs` apart; else in a few pieces at once.
   */
  | ({ text: string; chunks?: string[]; chunkDelayMs?: number } & TurnTiming)
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
    options.turns.forEach((turn, i) => {
      if ('chunks' in turn && turn.chunks !== undefined && turn.chunks.join('') !== turn.text) {
        throw new Error(`ScriptedChatModel: the chunks of turn ${i + 1} do not concatenate to its text`);
      }
    });
    this.turns = options.turns;
    this.omitIds = options.omitIds ?? false;
    this.pieceDelayMs = 0;
  }

  static override lc_name(): string {
    return 'ScriptedChatModel';
  }

  _llmType(): string {
    return 'toolstream-scripted';
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const turn = this.turnFor(messages);
    if (!('text' in turn) || !('chunks' in turn) || turn.chunks === undefined) {
      yield* super._streamResponseChunks(messages, options, runManager);
      return;
    }
    const message = (await this._generate(messages, options)).generations[0].message as AIMessage;
    yield* this.streamReply(message, turn.chunks, turn.chunkDelayMs ?? 0, options, runManager);
  }

  private turnFor(messages: BaseMessage[]): ScriptedTurn {
    const index = readCurrentTurn(messages).modelTurns;
    const turn = this.turns[index];
    if (!turn) throw new Error(`ScriptedChatModel: the script has no turn ${index + 1} (it has ${this.turns.length})`);
    return turn;
  }

  async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<ChatResult> {
    const turn = this.turnFor(messages);
    if ('hang' in turn) return new Promise<never>(() => undefined);
    if (turn.delayMs) await sleep(turn.delayMs, options.signal);
    if ('error' in turn) throw new Error(turn.error);
    if (!('toolCalls' in turn)) return this.result(new AIMessage(turn.text));
    return this.result(
      new AIMessage({
        content: turn.text ?? '',
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
