/**
 * Cursor-driven extraction of tool-call-v1 frames from an agent's accumulated messages, as
 * `streamMode: "values"` yields them: each call reads only the messages after the cursor,
 * each message once, so a run of n messages costs O(n) in all, never O(n²).
 */
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { ToolCallArtifactData } from '../../extensions';
import type { TurnToolCall } from '../executor.types';
import { contentText, toolErrorText, toolResultValue } from './tool-output';

/** A started tool call still waiting for its result. */
export interface PendingToolCall {
  readonly toolCallId: string;
  readonly name: string;
  /** The model gave no id: the result will carry none either and is paired by order. */
  readonly anonymous: boolean;
}

export interface FrameCursor {
  /** Index of the first message not read yet. */
  readonly next: number;
  /** Calls started and not yet answered, oldest first. */
  readonly pending: readonly PendingToolCall[];
}

/** One model turn that called tools; its `started` frames begin at `frames[at]`. */
export interface ToolTurn {
  readonly at: number;
  readonly calls: readonly TurnToolCall[];
  /** The text the model wrote along with the calls ("" when none). */
  readonly said: string;
}

export interface ExtractedFrames {
  frames: ToolCallArtifactData[];
  turns: ToolTurn[];
  cursor: FrameCursor;
}

export const START_CURSOR: FrameCursor = { next: 0, pending: [] };

/** A cursor that skips the first `count` messages (history that must not yield frames). */
export function cursorAt(count: number): FrameCursor {
  return { next: count, pending: [] };
}

/**
 * The id given to a call the model left without one. Deterministic, so the same state
 * always yields the same frames; the default agent assigns real ids before the tools run,
 * so this only serves agents that do not.
 */
export const fallbackToolCallId = (messageIndex: number, callIndex: number): string =>
  `call_m${messageIndex}_${callIndex}`;

/**
 * Frames for the messages after `cursor`: a `started` frame per tool call on an AI message
 * (`args` = the parsed arguments), a `completed` or `failed` frame per tool-result message
 * (`status: "error"` → `failed`, with the tool's own message). Results that carry no call id
 * pair with the oldest anonymous call. Pure: returns a new cursor, changes nothing it is given.
 * `settled` names calls whose terminal frame the caller already has (from LangGraph's `tools`
 * stream, which reports each result before the state does): their results are paired but yield
 * no frame, so their content is not read back (JSON.parse) only to be dropped.
 */
export function extractToolFrames(
  messages: readonly BaseMessage[],
  cursor: FrameCursor = START_CURSOR,
  settled?: (toolCallId: string) => boolean,
): ExtractedFrames {
  const frames: ToolCallArtifactData[] = [];
  const turns: ToolTurn[] = [];
  const pending = cursor.pending.slice();
  // A call started in this very read is a new one even when its id was settled (reused ids).
  const startedNow = settled ? new Set<string>() : undefined;
  // A state that shrank (messages removed by the graph) has nothing new to read.
  const from = Math.min(cursor.next, messages.length);
  for (let index = from; index < messages.length; index++) {
    const message = messages[index];
    if (AIMessage.isInstance(message)) {
      const toolCalls = message.tool_calls ?? [];
      if (toolCalls.length === 0) continue;
      const calls = toolCalls.map((call, j): TurnToolCall => ({
        toolCallId: call.id || fallbackToolCallId(index, j),
        name: call.name,
        args: call.args,
      }));
      turns.push({ at: frames.length, calls, said: contentText(message.content).trim() });
      calls.forEach((call, j) => {
        pending.push({ toolCallId: call.toolCallId, name: call.name, anonymous: !toolCalls[j].id });
        startedNow?.add(call.toolCallId);
        frames.push({ toolCallId: call.toolCallId, name: call.name, phase: 'started', args: call.args });
      });
    } else if (ToolMessage.isInstance(message)) {
      const at = message.tool_call_id
        ? pending.findIndex((p) => p.toolCallId === message.tool_call_id)
        : pending.findIndex((p) => p.anonymous);
      const call = at >= 0 ? pending.splice(at, 1)[0] : undefined;
      const toolCallId = message.tool_call_id || call?.toolCallId || fallbackToolCallId(index, 0);
      if (settled?.(toolCallId) && !startedNow?.has(toolCallId)) continue;
      const name = message.name || call?.name || 'unknown';
      frames.push(
        message.status === 'error'
          ? { toolCallId, name, phase: 'failed', error: toolErrorText(message.content) }
          : { toolCallId, name, phase: 'completed', result: toolResultValue(message) },
      );
    }
  }
  return { frames, turns, cursor: { next: messages.length, pending } };
}
