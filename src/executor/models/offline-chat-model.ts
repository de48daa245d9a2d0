/**
 * Shared base of the offline chat models (the demo planner and the scripted test model):
 * real LangChain chat models, so they go through bindTools, callbacks and abort signals
 * exactly like a hosted model does.
 */
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from '@langchain/core/language_models/chat_models';
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { sleep } from '../abortable';
import { contentText, toolErrorText, toolResultValue } from '../frames/tool-output';

export interface OfflineChatModelCallOptions extends BaseChatModelCallOptions {
  /** The tools bound with bindTools. */
  tools?: BindToolsInput[];
}

/** What one tool call of the current request came back with. */
export interface ToolOutcome {
  toolCallId: string;
  name: string;
  args: Record<string, unknown>;
  ok: boolean;
  /** The result (JSON content read back into data) when ok. */
  value?: unknown;
  /** The tool's own error message when not ok. */
  error?: string;
}

/** The current request: the last user message and what happened after it. */
export interface CurrentTurn {
  /** Text of the last human message ("" if there is none). */
  request: string;
  /** AI messages since that request (0 on the first model turn). */
  modelTurns: number;
  /** Tool results since that request, in the order they arrived. */
  outcomes: ToolOutcome[];
}

export function readCurrentTurn(messages: readonly BaseMessage[]): CurrentTurn {
  let start = messages.length - 1;
  while (start >= 0 && !HumanMessage.isInstance(messages[start])) start--;
  const request = start >= 0 ? messages[start].text : '';
  const calls = new Map<string, { name: string; args: Record<string, unknown> }>();
  const outcomes: ToolOutcome[] = [];
  let modelTurns = 0;
  for (const message of messages.slice(start + 1)) {
    if (AIMessage.isInstance(message)) {
      modelTurns++;
      for (const call of message.tool_calls ?? []) calls.set(call.id ?? '', { name: call.name, args: call.args });
    } else if (ToolMessage.isInstance(message)) {
      const call = calls.get(message.tool_call_id);
      const ok = message.status !== 'error';
      outcomes.push({
        toolCallId: message.tool_call_id,
        name: call?.name ?? message.name ?? 'tool',
        args: call?.args ?? {},
        ok,
        ...(ok ? { value: toolResultValue(message) } : { error: toolErrorText(message.content) }),
      });
    }
  }
  return { request, modelTurns, outcomes };
}

/**
 * `text` cut at word starts into at most `count` pieces of about equal word counts; the pieces
 * concatenate to `text` exactly.
 */
export function splitIntoPieces(text: string, count: number): string[] {
  const words = text.split(/(?<=\s)(?=\S)/).filter((w) => w !== '');
  const pieces = Math.min(count, words.length);
  const out: string[] = [];
  for (let i = 0; i < pieces; i++) {
    out.push(words.slice(Math.floor((i * words.length) / pieces), Math.floor(((i + 1) * words.length) / pieces)).join(''));
  }
  return out;
}

/** How many pieces an offline model streams a reply's text in, and the pause between them. */
export const OFFLINE_REPLY_PIECES = 4;
export const OFFLINE_PIECE_DELAY_MS = 40;

export abstract class OfflineChatModel extends BaseChatModel<OfflineChatModelCallOptions> {
  /** Pause between streamed pieces, so a reader sees the answer grow as with a hosted model. */
  protected pieceDelayMs = OFFLINE_PIECE_DELAY_MS;

  /**
   * Streaming (what LangGraph's `messages` stream mode asks for): the reply `_generate` makes,
   * its text in a few pieces, then its tool calls in one chunk, as a hosted model sends them.
   */
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const message = (await this._generate(messages, options, runManager)).generations[0].message as AIMessage;
    yield* this.streamReply(message, splitIntoPieces(contentText(message.content), OFFLINE_REPLY_PIECES), this.pieceDelayMs, options, runManager);
  }

  /** Streams `pieces` (the reply's text), then the reply's tool calls. */
  protected async *streamReply(
    message: AIMessage,
    pieces: readonly string[],
    delayMs: number,
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    for (const [i, text] of pieces.entries()) {
      if (i > 0 && delayMs > 0) await sleep(delayMs, options.signal);
      const chunk = new ChatGenerationChunk({ text, message: new AIMessageChunk({ content: text }) });
      yield chunk;
      await runManager?.handleLLMNewToken(text, undefined, undefined, undefined, undefined, { chunk });
    }
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return;
    const chunk = new ChatGenerationChunk({
      text: '',
      message: new AIMessageChunk({
        content: '',
        tool_call_chunks: calls.map((call, index) => ({ type: 'tool_call_chunk' as const, name: call.name, args: JSON.stringify(call.args), id: call.id, index })),
      }),
    });
    yield chunk;
    await runManager?.handleLLMNewToken('', undefined, undefined, undefined, undefined, { chunk });
  }

  override bindTools(tools: BindToolsInput[], kwargs?: Partial<OfflineChatModelCallOptions>) {
    return this.withConfig({ ...kwargs, tools });
  }

  /** Names of the tools bound to this call. */
  protected boundToolNames(options: this['ParsedCallOptions']): Set<string> {
    return new Set((options.tools ?? []).map((t) => convertToOpenAITool(t).function.name));
  }

  protected result(message: AIMessage): ChatResult {
    return { generations: [{ text: message.text, message }] };
  }
}
