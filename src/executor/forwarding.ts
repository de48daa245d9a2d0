/**
 * How a tool puts another agent's work into the run that called it: it writes chunks on
 * LangGraph's `custom` stream (the writer LangGraph hands every tool in its config), and the
 * executor turns them into this run's own events. So a delegated agent's frames and narration
 * travel like any frame of the run: over the bus, into the task's log, replay and all.
 */
import { validateToolCallFrame, type ToolCallArtifactData } from '../extensions';

export const FORWARDED_CHUNK = 'toolstream.forwarded';

/**
 * One forwarded event of the delegated work of the call `callId` (the id of the tool call, as
 * the model gave it, that delegated). A frame keeps its own ids; the executor makes them unique
 * in the run and nests them under the delegating call.
 */
export type ForwardedChunk =
  | { kind: typeof FORWARDED_CHUNK; callId: string; frame: ToolCallArtifactData }
  | { kind: typeof FORWARDED_CHUNK; callId: string; narration: string };

export function isForwardedChunk(chunk: unknown): chunk is ForwardedChunk {
  if (typeof chunk !== 'object' || chunk === null) return false;
  const { kind, callId } = chunk as { kind?: unknown; callId?: unknown };
  return kind === FORWARDED_CHUNK && typeof callId === 'string' && callId.length > 0;
}

/** What a tool needs to forward: the id of its own call and the run's `custom` writer. */
export interface ForwardingChannel {
  readonly callId: string;
  /** One frame of the delegated agent, as it sent it (validated here; an invalid one is dropped). */
  frame(frame: unknown): void;
  /** One line of the delegated agent's narration, already phrased for this run. */
  narration(text: string): void;
}

interface ToolRunConfig {
  writer?: unknown;
  toolCall?: { id?: unknown };
  toolCallId?: unknown;
}

/**
 * The forwarding channel of a tool call, from the config LangGraph passed the tool; undefined
 * when the tool runs outside a graph streamed with the `custom` mode (nothing to forward to).
 */
export function forwardingChannel(config: unknown): ForwardingChannel | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const { writer, toolCall, toolCallId } = config as ToolRunConfig;
  const callId = typeof toolCall?.id === 'string' && toolCall.id ? toolCall.id : toolCallId;
  if (typeof writer !== 'function' || typeof callId !== 'string' || callId.length === 0) return undefined;
  const write = writer as (chunk: ForwardedChunk) => void;
  return {
    callId,
    frame(frame: unknown): void {
      const valid = validateToolCallFrame(frame);
      if (valid.ok) write({ kind: FORWARDED_CHUNK, callId, frame: valid.frame });
    },
    narration(text: string): void {
      if (text.trim()) write({ kind: FORWARDED_CHUNK, callId, narration: text });
    },
  };
}
