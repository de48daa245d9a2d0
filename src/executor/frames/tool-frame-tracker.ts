/**
 * One run's frame bookkeeping. Two sources feed it: the `values` stream (state snapshots,
 * read through the extraction cursor) and the `tools` stream (each tool's real start, end
 * and error, as they happen). It emits every frame exactly once, in the order things
 * happened: a `started` before its terminal frame, a terminal frame the moment the first
 * source reports it, and nothing twice when the other source reports it again.
 */
import { BaseMessage } from '@langchain/core/messages';
import type { ToolCallArtifactData } from '../../extensions';
import { isoTime } from '../../common/iso-time';
import type { ExecutorEvent, TurnToolCall } from '../executor.types';
import { cursorAt, extractToolFrames, type FrameCursor, type ToolTurn } from './extract-tool-frames';
import { sanitizedFrameOf, sanitizeForFrame, type FrameHygieneOptions } from './sanitize-for-frame';
import { errorMessage, toolResultValue } from './tool-output';

/** A chunk of LangGraph's `tools` stream mode (see StreamToolsHandler). */
export type ToolStreamEvent =
  | { event: 'on_tool_start'; toolCallId?: string; name: string; input?: unknown }
  | { event: 'on_tool_event'; toolCallId?: string; name: string; data?: unknown }
  | { event: 'on_tool_end'; toolCallId?: string; name: string; output?: unknown }
  | { event: 'on_tool_error'; toolCallId?: string; name: string; error?: unknown };

const TOOL_STREAM_EVENTS = new Set(['on_tool_start', 'on_tool_event', 'on_tool_end', 'on_tool_error']);

export function isToolStreamEvent(chunk: unknown): chunk is ToolStreamEvent {
  if (typeof chunk !== 'object' || chunk === null) return false;
  const { event, name } = chunk as { event?: unknown; name?: unknown };
  return typeof event === 'string' && TOOL_STREAM_EVENTS.has(event) && typeof name === 'string';
}

/** The default narration of a turn, e.g. "running weather; running world_clock". */
export function describeTurn(calls: readonly TurnToolCall[]): string {
  return calls.map((call) => `running ${call.name}`).join('; ');
}

/** A forwarded call still open: its name, its parent, and the local call it was delegated under. */
interface OpenForwarded {
  name: string;
  parentToolCallId: string;
  root: string;
}

/** The error of forwarded calls still open when the call that delegated them ends without failing. */
export const DELEGATION_ENDED = 'the delegated agent ended before this call finished';

export class ToolFrameTracker {
  /** Unset until the first state snapshot, which is the run's input and yields no frames. */
  private cursor: FrameCursor | undefined;
  /** The id each call's frames carry, by the id the model gave it (they differ for a reused id). */
  private readonly frameIds = new Map<string, string>();
  /** Started and not yet ended: frame id → tool name. */
  private readonly open = new Map<string, string>();
  /** Forwarded calls (another agent's, nested under a local call) started and not yet ended. */
  private readonly forwardedOpen = new Map<string, OpenForwarded>();
  /** Every forwarded id seen, so a repeated or late frame adds nothing. */
  private readonly forwardedSeen = new Set<string>();
  private step = 0;
  /** A call whose terminal frame is out: its result in a later state snapshot adds nothing. */
  private readonly settled = (modelId: string): boolean => {
    const toolCallId = this.frameIds.get(modelId);
    return toolCallId !== undefined && !this.open.has(toolCallId);
  };

  constructor(
    private readonly hygiene: FrameHygieneOptions = {},
    /** Epoch milliseconds (a Date per frame was a measurable share of the tracker's cost). */
    private readonly now: () => number = Date.now,
  ) {}

  /** How many tools are running. */
  get openCount(): number {
    return this.open.size;
  }

  /** Step 0: the run has started, before the first model turn. */
  thinking(): ExecutorEvent {
    return { type: 'progress', text: 'thinking', step: 0 };
  }

  /** A `values` snapshot of the agent's messages. */
  fromValues(messages: readonly BaseMessage[]): ExecutorEvent[] {
    if (this.cursor === undefined) {
      this.cursor = cursorAt(messages.length);
      return [];
    }
    const { frames, turns, cursor } = extractToolFrames(messages, this.cursor, this.settled);
    this.cursor = cursor;
    const events: ExecutorEvent[] = [];
    let nextTurn = 0;
    frames.forEach((frame, i) => {
      while (nextTurn < turns.length && turns[nextTurn].at === i) {
        events.push(this.turnProgress(turns[nextTurn]));
        nextTurn++;
      }
      if (frame.phase === 'started') this.start(frame.toolCallId, frame.name, frame.args, events);
      else if (frame.phase === 'failed') this.end(frame.toolCallId, frame.name, 'failed', frame.error ?? '', events);
      else this.end(frame.toolCallId, frame.name, 'completed', frame.result, events);
    });
    return events;
  }

  /**
   * A `tools` stream event. Events without a call id are left to the `values` path, which
   * pairs anonymous results by order; two anonymous calls of one tool cannot be told apart here.
   */
  fromToolEvent(event: ToolStreamEvent): ExecutorEvent[] {
    const id = event.toolCallId;
    const events: ExecutorEvent[] = [];
    if (!id) return events;
    switch (event.event) {
      case 'on_tool_start':
        this.start(id, event.name, event.input, events);
        break;
      case 'on_tool_end': {
        const result = toolResultValue(event.output);
        // A structure read back from a message's JSON text is the frame's own: no copy of it when it is already clean.
        const parsed = typeof result === 'object' && result !== null && BaseMessage.isInstance(event.output) && typeof event.output.content === 'string';
        this.end(id, event.name, 'completed', result, events, parsed);
        break;
      }
      case 'on_tool_error':
        this.end(id, event.name, 'failed', errorMessage(event.error), events);
        break;
      case 'on_tool_event':
        break;
    }
    return events;
  }

  /** `failed` frames closing every open tool, forwarded ones first (cancel, time budget, run error). */
  closeOpen(error: string): ExecutorEvent[] {
    const events = this.closeForwarded(() => true, error);
    for (const [toolCallId, name] of this.open) {
      this.open.delete(toolCallId);
      events.push(this.frame(toolCallId, name, undefined, 'failed', error));
    }
    return events;
  }

  /**
   * A frame of another agent, forwarded by the tool call `callId` that delegated to it. Its id
   * is prefixed with the delegating call's frame id (unique in the run, whatever ids the other
   * agent uses) and it is nested under that call, keeping its own nesting below it. Nothing is
   * forwarded for a call that is not running: a late frame is dropped.
   */
  fromForwarded(callId: string, frame: ToolCallArtifactData): ExecutorEvent[] {
    const root = this.frameIds.get(callId);
    if (root === undefined || !this.open.has(root)) return [];
    const toolCallId = `${root}/${frame.toolCallId}`;
    const parentToolCallId = frame.parentToolCallId === undefined ? root : `${root}/${frame.parentToolCallId}`;
    const events: ExecutorEvent[] = [];
    if (!this.forwardedSeen.has(toolCallId)) {
      this.forwardedSeen.add(toolCallId);
      this.forwardedOpen.set(toolCallId, { name: frame.name, parentToolCallId, root });
      const args = frame.phase === 'started' ? frame.args : undefined;
      events.push(this.frame(toolCallId, frame.name, parentToolCallId, 'started', args));
    }
    const open = this.forwardedOpen.get(toolCallId);
    if (frame.phase === 'started' || open === undefined) return events;
    this.forwardedOpen.delete(toolCallId);
    const payload = frame.phase === 'failed' ? (frame.error ?? '') : frame.result;
    events.push(this.frame(toolCallId, open.name, open.parentToolCallId, frame.phase, payload));
    return events;
  }

  /** A line of another agent's narration, forwarded by the running call `callId`. */
  forwardedNarration(callId: string, text: string): ExecutorEvent[] {
    const root = this.frameIds.get(callId);
    if (root === undefined || !this.open.has(root)) return [];
    return [{ type: 'progress', text, step: this.step }];
  }

  /** Failed frames for the open forwarded calls that `which` selects, innermost (latest) first. */
  private closeForwarded(which: (call: OpenForwarded) => boolean, error: string): ExecutorEvent[] {
    const closing = [...this.forwardedOpen].filter(([, call]) => which(call)).reverse();
    return closing.map(([toolCallId, call]) => {
      this.forwardedOpen.delete(toolCallId);
      return this.frame(toolCallId, call.name, call.parentToolCallId, 'failed', error);
    });
  }

  private turnProgress({ calls, said }: ToolTurn): ExecutorEvent {
    this.step++;
    const tools = calls.map((call) => ({ ...call, args: sanitizeForFrame(call.args, this.hygiene) }));
    const event: ExecutorEvent = { type: 'progress', text: describeTurn(calls), step: this.step, tools };
    return said ? { ...event, said: sanitizeForFrame(said, { ...this.hygiene, redactKeys: [] }) as string } : event;
  }

  /**
   * Both sources report each start; the second report finds the call open and adds nothing.
   * A start for an id whose call already ended is a new call reusing the id (some models number
   * calls per reply): it gets a fresh id, and the frames that follow go to it. Events go into `out`.
   */
  private start(modelId: string, name: string, args: unknown, out: ExecutorEvent[]): void {
    let toolCallId = this.frameIds.get(modelId);
    if (toolCallId !== undefined && this.open.has(toolCallId)) return;
    toolCallId = toolCallId === undefined ? modelId : this.freshId(modelId);
    this.frameIds.set(modelId, toolCallId);
    this.open.set(toolCallId, name);
    out.push(this.frame(toolCallId, name, undefined, 'started', args));
  }

  /** A terminal frame; `payload` is the result (`completed`) or the error (`failed`), `owned` as in sanitizedFrameOf. */
  private end(modelId: string, name: string, phase: 'completed' | 'failed', payload: unknown, out: ExecutorEvent[], owned = false): void {
    // A result whose start was never seen still gets its `started` first, so pairs stay whole.
    if (!this.frameIds.has(modelId)) this.start(modelId, name, undefined, out);
    const toolCallId = this.frameIds.get(modelId) ?? modelId;
    const startedName = this.open.get(toolCallId);
    if (startedName === undefined) return;
    // What it delegated settles first, so no nested call outlives the call it belongs to.
    if (this.forwardedOpen.size > 0) {
      out.push(...this.closeForwarded((call) => call.root === toolCallId, phase === 'failed' ? (payload as string) : DELEGATION_ENDED));
    }
    this.open.delete(toolCallId);
    out.push(this.frame(toolCallId, startedName, undefined, phase, payload, owned));
  }

  /** `<id>~2`, `<id>~3`, …: the first not yet taken by any call of this run. */
  private freshId(modelId: string): string {
    const taken = new Set(this.frameIds.values());
    let n = 2;
    while (taken.has(`${modelId}~${n}`) || this.frameIds.has(`${modelId}~${n}`)) n++;
    return `${modelId}~${n}`;
  }

  /** A frame event, stamped now; the frame is built sanitised (no raw frame to copy). */
  private frame(
    toolCallId: string,
    name: string,
    parentToolCallId: string | undefined,
    phase: ToolCallArtifactData['phase'],
    payload: unknown,
    owned = false,
  ): ExecutorEvent {
    return { type: 'toolFrame', frame: sanitizedFrameOf(toolCallId, name, parentToolCallId, this.timestamp(), phase, payload, this.hygiene, owned) };
  }

  /** The clock's time as ISO 8601; frames of one millisecond, of every run, share one string (isoTime). */
  private timestamp(): string {
    return isoTime(this.now());
  }
}
