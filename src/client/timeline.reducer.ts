/**
 * The tool timeline as a pure reducer: `(state, input) => state`. It never mutates its input
 * and returns the very same state object when an input changes nothing (a replayed event, a
 * duplicate frame), so "replaying twice changes nothing" is an identity check and a renderer
 * can skip work by comparing references. Entries that did not change keep their identity too.
 */
import {
  TOOL_CALL_V1_MIME_TYPE,
  validateToolCall,
  type ToolCallArtifactData,
} from '../extensions/tool-call-v1';
import {
  isSettledPhase,
  hasTextPart,
  isTerminalPhase,
  readStreamEvent,
  textOfParts,
  type StreamArtifact,
  type StreamEvent,
  type StreamStatus,
  type TaskPhase,
} from './stream-event';
import { ToolTable } from './tool-table';

export type ToolPhase = 'running' | 'completed' | 'failed';

export interface ToolCallEntry {
  toolCallId: string;
  name: string;
  /** The call this one is part of (a delegated agent's call nested under the call that delegated). */
  parentToolCallId?: string;
  phase: ToolPhase;
  args?: unknown;
  result?: unknown;
  error?: string;
  /** Epoch ms: the frame's own `timestamp` when it has one, else when the client received it. */
  startedAt?: number;
  endedAt?: number;
  /**
   * Where its `started` / terminal frame came among the timeline's tool frames (0, 1, 2...):
   * the order the producer sent them in. It tells which tools overlapped where the frames'
   * millisecond timestamps tie (a fast tool can start and end within the millisecond its
   * turn's other tools start in).
   */
  startOrder?: number;
  endOrder?: number;
  durationMs?: number;
  /** False for a terminal frame whose `started` frame was never seen (it is still shown). */
  startSeen: boolean;
}

export interface TimelineState {
  taskId?: string;
  contextId?: string;
  taskState?: TaskPhase;
  /** The latest narration line (text of a non-terminal `status.message`). */
  narration?: string;
  /** The text of the latest status message, terminal ones included (e.g. why a task failed). */
  statusText?: string;
  /** The answer: text of the non-tool-call artifacts, or of a direct reply message. */
  answer?: string;
  /** Task ended (terminal or interrupted) or the agent answered with a bare message. */
  done: boolean;
  /** Per toolCallId, in order of first appearance: parallel tools keep their place. */
  tools: ToolTable;
  /** How many tool frames changed an entry so far: the next frame's `startOrder` / `endOrder`. */
  toolFrames: number;
  /** Text per answer artifact id, in first-seen order. */
  artifacts: ReadonlyMap<string, string>;
  /** The SSE id of the last event applied: what a resume sends as `Last-Event-ID`. */
  lastEventId?: string;
  /**
   * Client clock minus producer clock, as best seen: the least (receipt time − frame timestamp)
   * over the frames received. Lets a view tick the time of a running tool on the client's
   * clock although its start is on the producer's.
   */
  clockOffsetMs?: number;
  /** Highest integer SSE id applied: integer ids are a per-task sequence, replays sit below it. */
  lastSequence?: number;
  /** The latest non-integer SSE ids applied (a window: a resume replays only recent ones). */
  seenEventIds: readonly string[];
  /** What could not be used and why (bad events, bad frames, conflicting frames); the latest 50. */
  problems: readonly string[];
}

export interface TimelineInput {
  /** A 1.0 `StreamResponse` (ProtoJSON) or a 0.3 streaming result. */
  data: unknown;
  /** The SSE `id:` of the event, if it had one. */
  eventId?: string;
  /** Epoch ms at which the client received it; the fallback clock for frames without `timestamp`. */
  receivedAt: number;
}

const MAX_PROBLEMS = 50;
const SEEN_ID_WINDOW = 256;

export const initialTimelineState: TimelineState = Object.freeze({
  done: false,
  tools: ToolTable.empty,
  toolFrames: 0,
  artifacts: new Map<string, string>(),
  seenEventIds: [],
  problems: [],
});

export function createTimelineState(): TimelineState {
  return initialTimelineState;
}

const INTEGER_ID = /^\d{1,15}$/;

function alreadyApplied(state: TimelineState, eventId: string): boolean {
  if (INTEGER_ID.test(eventId)) return state.lastSequence !== undefined && Number(eventId) <= state.lastSequence;
  return state.seenEventIds.includes(eventId);
}

function markApplied(state: TimelineState, eventId: string): TimelineState {
  if (INTEGER_ID.test(eventId)) return { ...state, lastEventId: eventId, lastSequence: Number(eventId) };
  return { ...state, lastEventId: eventId, seenEventIds: [...state.seenEventIds.slice(1 - SEEN_ID_WINDOW), eventId] };
}

function withProblem(state: TimelineState, problem: string): TimelineState {
  // The same problem twice (a replayed bad event) changes nothing.
  if (state.problems.includes(problem)) return state;
  const problems = [...state.problems, problem];
  return { ...state, problems: problems.length > MAX_PROBLEMS ? problems.slice(-MAX_PROBLEMS) : problems };
}

/** Epoch ms of a frame's phase: its `timestamp` if valid, else the receipt time. */
function frameTime(frame: ToolCallArtifactData, receivedAt: number): { at: number; problem?: string } {
  if (frame.timestamp === undefined) return { at: receivedAt };
  const at = Date.parse(frame.timestamp);
  if (Number.isNaN(at)) {
    return {
      at: receivedAt,
      problem: `tool call ${frame.toolCallId}: timestamp ${JSON.stringify(frame.timestamp)} is not a date; used receipt time`,
    };
  }
  return { at };
}

function withDuration(entry: ToolCallEntry): ToolCallEntry {
  if (entry.startedAt === undefined || entry.endedAt === undefined) return entry;
  return { ...entry, durationMs: Math.max(0, entry.endedAt - entry.startedAt) };
}

/** A new entry for the frame's call, linked to its parent when the frame names one. */
function newEntry(frame: ToolCallArtifactData, startSeen: boolean): ToolCallEntry {
  const entry: ToolCallEntry = { toolCallId: frame.toolCallId, name: frame.name, phase: 'running', startSeen };
  if (frame.parentToolCallId !== undefined && frame.parentToolCallId !== frame.toolCallId) entry.parentToolCallId = frame.parentToolCallId;
  return entry;
}

/** The entry after one frame, or the same entry when the frame adds nothing (a replay). */
function applyFrameToEntry(
  entry: ToolCallEntry | undefined,
  frame: ToolCallArtifactData,
  at: number,
  order: number,
): { entry: ToolCallEntry; problem?: string } | undefined {
  if (frame.phase === 'started') {
    if (entry?.startSeen) return undefined;
    const started: ToolCallEntry = {
      ...(entry ?? newEntry(frame, true)),
      startSeen: true,
      startedAt: at,
      startOrder: order,
    };
    if (frame.args !== undefined) started.args = frame.args;
    return { entry: withDuration(started) };
  }
  if (entry && entry.phase !== 'running') {
    if (entry.phase === frame.phase) return undefined;
    return {
      entry,
      problem: `tool call ${frame.toolCallId}: ignored a ${frame.phase} frame after it had ${entry.phase}`,
    };
  }
  const ended: ToolCallEntry = {
    ...(entry ?? newEntry(frame, false)),
    phase: frame.phase,
    endedAt: at,
    endOrder: order,
  };
  if (frame.phase === 'completed' && frame.result !== undefined) ended.result = frame.result;
  if (frame.phase === 'failed' && frame.error !== undefined) ended.error = frame.error;
  return { entry: withDuration(ended) };
}

function applyFrame(state: TimelineState, frame: ToolCallArtifactData, receivedAt: number): TimelineState {
  const { at, problem: timeProblem } = frameTime(frame, receivedAt);
  const previous = state.tools.get(frame.toolCallId);
  const applied = applyFrameToEntry(previous, frame, at, state.toolFrames);
  if (!applied) return state;
  let next = state;
  if (applied.entry !== previous) {
    next = { ...state, tools: state.tools.set(applied.entry), toolFrames: state.toolFrames + 1 };
    const offset = receivedAt - at;
    if (state.clockOffsetMs === undefined || offset < state.clockOffsetMs) next.clockOffsetMs = offset;
  }
  if (timeProblem) next = withProblem(next, timeProblem);
  if (applied.problem) next = withProblem(next, applied.problem);
  return next;
}

function isToolCallPart(part: unknown): boolean {
  if (typeof part !== 'object' || part === null) return false;
  const metadata = (part as { metadata?: unknown }).metadata;
  return (
    typeof metadata === 'object' &&
    metadata !== null &&
    (metadata as { mimeType?: unknown }).mimeType === TOOL_CALL_V1_MIME_TYPE
  );
}

function joinAnswer(artifacts: ReadonlyMap<string, string>): string | undefined {
  const texts = [...artifacts.values()].filter((t) => t.length > 0);
  return texts.length > 0 ? texts.join('\n\n') : undefined;
}

function applyArtifact(state: TimelineState, artifact: StreamArtifact, receivedAt: number): TimelineState {
  let next = state;
  const otherParts: unknown[] = [];
  for (const part of artifact.parts) {
    if (!isToolCallPart(part)) {
      otherParts.push(part);
      continue;
    }
    const v = validateToolCall(part);
    next = v.ok
      ? applyFrame(next, v.frame, receivedAt)
      : withProblem(next, `artifact ${artifact.artifactId}: invalid tool-call-v1 frame: ${v.reason}`);
  }
  const text = textOfParts(otherParts) ?? (hasTextPart(otherParts) ? '' : undefined);
  if (text === undefined) return next;
  const before = next.artifacts.get(artifact.artifactId);
  const after = artifact.append && before !== undefined ? before + text : text;
  if (after === before) return next;
  const artifacts = new Map(next.artifacts).set(artifact.artifactId, after);
  return { ...next, artifacts, answer: joinAnswer(artifacts) };
}

function applyStatus(state: TimelineState, status: StreamStatus, receivedAt: number): TimelineState {
  // A terminal task stays terminal: a late or replayed older status must not revive it.
  if (isTerminalPhase(state.taskState) && !isTerminalPhase(status.state)) return state;
  const next: TimelineState = { ...state, taskState: status.state, done: state.done || isSettledPhase(status.state) };
  if (status.text !== undefined) {
    next.statusText = status.text;
    if (!isSettledPhase(status.state)) next.narration = status.text;
    // A server that answers in the final status message rather than in an artifact.
    if (status.state === 'completed' && next.artifacts.size === 0) next.answer = status.text;
  }
  // A task that ended leaves no tool running, whatever frames went missing.
  if (isTerminalPhase(status.state) && status.state !== 'completed') {
    return settleTimeline(sameTimeline(state, next) ? state : next, status.text ?? `the task ${status.state}`, receivedAt);
  }
  return sameTimeline(state, next) ? state : next;
}

/**
 * The view's task ended (stopped, failed, canceled, gone after a server restart, connection
 * given up): every tool still running fails with `reason`, so no spinner or timer outlives the
 * task, and the timeline is done. Returns the same state when nothing was running and it was done.
 */
export function settleTimeline(state: TimelineState, reason: string, at: number): TimelineState {
  // Tool times are on the producer's clock; `at` is the client's.
  const endedAt = at - (state.clockOffsetMs ?? 0);
  let tools = state.tools;
  for (const entry of state.tools) {
    if (entry.phase === 'running') {
      tools = tools.set(withDuration({ ...entry, phase: 'failed', error: reason, endedAt: Math.max(endedAt, entry.startedAt ?? endedAt), endOrder: state.toolFrames }));
    }
  }
  if (tools === state.tools && state.done) return state;
  return { ...state, tools, toolFrames: tools === state.tools ? state.toolFrames : state.toolFrames + 1, done: true };
}

const STATUS_KEYS = ['taskState', 'done', 'narration', 'statusText', 'answer', 'taskId', 'contextId'] as const;

function sameTimeline(a: TimelineState, b: TimelineState): boolean {
  return STATUS_KEYS.every((k) => a[k] === b[k]);
}

function withIds(state: TimelineState, taskId: string | undefined, contextId: string | undefined): TimelineState {
  const next = { ...state };
  if (taskId && !state.taskId) next.taskId = taskId;
  if (contextId && !state.contextId) next.contextId = contextId;
  return sameTimeline(state, next) ? state : next;
}

function applyEvent(state: TimelineState, event: StreamEvent, receivedAt: number): TimelineState {
  if (event.taskId && state.taskId && event.taskId !== state.taskId) {
    return withProblem(state, `ignored an event of task ${event.taskId}: this timeline follows task ${state.taskId}`);
  }
  let next = withIds(state, event.taskId, event.contextId);
  switch (event.kind) {
    case 'task':
      // A snapshot (first event, or after a resubscribe): its artifacts replay through the
      // same idempotent path, so frames already seen change nothing.
      for (const artifact of event.artifacts) next = applyArtifact(next, { ...artifact, append: false }, receivedAt);
      return event.status ? applyStatus(next, event.status, receivedAt) : next;
    case 'status':
      return applyStatus(next, event.status, receivedAt);
    case 'artifact':
      return applyArtifact(next, event.artifact, receivedAt);
    case 'message': {
      const reply: TimelineState = { ...next, done: true };
      if (event.text !== undefined) reply.answer = event.text;
      return sameTimeline(next, reply) ? next : reply;
    }
  }
}

/**
 * Applies one stream event. Events whose SSE id was already applied are ignored; tool frames
 * are idempotent by (toolCallId, phase); a terminal frame for an unknown id still makes an
 * entry; unreadable events and frames are recorded in `problems`, never thrown.
 */
export function reduceTimeline(state: TimelineState, input: TimelineInput): TimelineState {
  if (input.eventId !== undefined && alreadyApplied(state, input.eventId)) return state;
  const reading = readStreamEvent(input.data);
  let next = reading.ok
    ? applyEvent(state, reading.event, input.receivedAt)
    : withProblem(state, `unreadable stream event: ${reading.reason}`);
  if (input.eventId !== undefined) next = markApplied(next, input.eventId);
  return next;
}
