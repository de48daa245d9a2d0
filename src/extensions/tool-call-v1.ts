/**
 * The tool-call-v1 contract (shared/spec/tool-call-v1.md): constants, the frame union,
 * and the emit / parse / validate helpers. Framework-free on purpose: no Nest here, so
 * clients (Node or browser) can import it alone.
 */
import type { AgentExtension, Part } from '@a2a-js/sdk';

export const TOOL_CALL_V1_EXTENSION_URI = 'https://proto-labs.ai/a2a/ext/tool-call-v1';
export const TOOL_CALL_V1_MIME_TYPE = 'application/vnd.protolabs.tool-call-v1+json';
/** The transport-level media type of the DataPart; never used to recognise a frame. */
export const TOOL_CALL_V1_PART_MEDIA_TYPE = 'application/json';
/** The artifact name under which frames ride `artifact-update` events. */
export const TOOL_CALL_V1_ARTIFACT_NAME = 'tool-call';

export interface ToolCallFrameBase {
  /** Stable id correlating the frames of one invocation. */
  toolCallId: string;
  /** Tool name, e.g. "github_create_issue". */
  name: string;
  /**
   * Optional, beyond the spec's union: ISO 8601 time at which the producer saw this
   * phase happen. Lets a client compute true durations also when frames are replayed
   * after a reconnect. Consumers that do not know it ignore it.
   */
  timestamp?: string;
  /**
   * Optional, beyond the spec's union: the `toolCallId` of the call whose work this frame is
   * part of (a tool call made by a remote agent that a local call delegated to). Clients that
   * do not know it still see a flat, correct timeline; clients that do draw a tree.
   */
  parentToolCallId?: string;
}

export type ToolCallStartedFrame = ToolCallFrameBase & { phase: 'started'; args?: unknown };
export type ToolCallCompletedFrame = ToolCallFrameBase & { phase: 'completed'; result?: unknown };
export type ToolCallFailedFrame = ToolCallFrameBase & { phase: 'failed'; error?: string };

export type ToolCallArtifactData = ToolCallStartedFrame | ToolCallCompletedFrame | ToolCallFailedFrame;
export type ToolCallPhase = ToolCallArtifactData['phase'];

export const TOOL_CALL_PHASES: readonly ToolCallPhase[] = ['started', 'completed', 'failed'];

/** The field each phase may carry; a field of another phase makes a frame invalid. */
const PHASE_FIELD: Record<ToolCallPhase, 'args' | 'result' | 'error'> = {
  started: 'args',
  completed: 'result',
  failed: 'error',
};

/** The entry an agent card declares under `capabilities.extensions`. */
export function toolCallV1AgentExtension(description?: string): AgentExtension {
  return {
    uri: TOOL_CALL_V1_EXTENSION_URI,
    description:
      description ??
      'Streams a per-tool lifecycle timeline (started, then completed or failed, keyed by toolCallId) as artifact-update DataParts while the task is working.',
    required: false,
    params: undefined,
  };
}

/** Builds the A2A 1.0 DataPart carrying one frame (for an `artifact-update` event). */
export function emitToolCall(frame: ToolCallArtifactData): Part {
  return {
    content: { $case: 'data', value: frame },
    metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE },
    filename: '',
    mediaType: TOOL_CALL_V1_PART_MEDIA_TYPE,
  };
}

export type ToolCallValidation =
  | { ok: true; frame: ToolCallArtifactData }
  | { ok: false; reason: string };

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function isPlainRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function validatePayload(payload: unknown): ToolCallValidation {
  const checked = checkPayload(payload);
  return typeof checked === 'string' ? { ok: false, reason: checked } : { ok: true, frame: checked };
}

/** The payload as a fresh frame, or why it is not one (no result object: the bus checks every frame of every task). */
function checkPayload(payload: unknown): ToolCallArtifactData | string {
  if (!isPlainRecord(payload)) return `payload must be an object, got ${describe(payload)}`;
  const { toolCallId, name, phase } = payload;
  if (!hasOwn(payload, 'toolCallId')) return 'toolCallId is missing';
  if (typeof toolCallId !== 'string') return `toolCallId must be a string, got ${describe(toolCallId)}`;
  if (toolCallId.length === 0) return 'toolCallId must not be empty';
  if (!hasOwn(payload, 'name')) return 'name is missing';
  if (typeof name !== 'string') return `name must be a string, got ${describe(name)}`;
  if (name.length === 0) return 'name must not be empty';
  if (!hasOwn(payload, 'phase')) return 'phase is missing';
  if (phase !== 'started' && phase !== 'completed' && phase !== 'failed') {
    const shown = typeof phase === 'string' ? JSON.stringify(phase.slice(0, 40)) : describe(phase);
    return `phase must be one of started, completed, failed; got ${shown}`;
  }
  const p: ToolCallPhase = phase;
  // Each phase's field by name, in TOOL_CALL_PHASES' order: a field looked up by a variable
  // name (PHASE_FIELD[other], payload[field]) is a megamorphic keyed load, on every frame.
  // A field that is not `in` the payload is not its own: the absent fields (most of these, on
  // every frame) are answered without a call to hasOwnProperty.
  if (p !== 'started' && 'args' in payload && hasOwn(payload, 'args')) return `"args" belongs to phase started, not ${p}`;
  if (p !== 'completed' && 'result' in payload && hasOwn(payload, 'result')) return `"result" belongs to phase completed, not ${p}`;
  if (p !== 'failed' && 'error' in payload && hasOwn(payload, 'error')) return `"error" belongs to phase failed, not ${p}`;
  const timestamp = payload.timestamp;
  if (typeof timestamp !== 'string' && 'timestamp' in payload && hasOwn(payload, 'timestamp')) return `timestamp must be a string, got ${describe(timestamp)}`;
  const parent = payload.parentToolCallId;
  if (parent !== undefined && hasOwn(payload, 'parentToolCallId')) {
    if (typeof parent !== 'string') return `parentToolCallId must be a string, got ${describe(parent)}`;
    if (parent.length === 0) return 'parentToolCallId must not be empty';
  }
  const parentId = typeof parent === 'string' ? parent : undefined;
  const at = typeof timestamp === 'string' ? timestamp : undefined;
  if (p === 'failed') {
    const error = payload.error;
    // An `error: undefined` (which the type allows, and JSON drops) is an absent error.
    if (error !== undefined && typeof error !== 'string') return `error must be a string, got ${describe(error)}`;
    return freshFrame(toolCallId, name, parentId, at, p, typeof error === 'string', error);
  }
  if (p === 'started') {
    const present = hasOwn(payload, 'args');
    return freshFrame(toolCallId, name, parentId, at, p, present, present ? payload.args : undefined);
  }
  const present = hasOwn(payload, 'result');
  return freshFrame(toolCallId, name, parentId, at, p, present, present ? payload.result : undefined);
}

/**
 * A fresh frame of the known fields only: hostile extra keys (`__proto__`, getters, megabytes
 * of noise) never travel further than the validation. In wire order, without spreads (spreading
 * the partial frame was most of the validation's cost). The common shapes (no parent, the
 * phase's field present) are one literal each: a frame built field by field outgrew its
 * literal's room, and each one got a second store for its fields (with the result object
 * around it, 118 B per frame in the heap samples).
 */
function freshFrame(toolCallId: string, name: string, parent: string | undefined, timestamp: string | undefined, phase: ToolCallPhase, present: boolean, value: unknown): ToolCallArtifactData {
  if (parent === undefined && present) {
    if (timestamp === undefined) {
      if (phase === 'started') return { toolCallId, name, phase, args: value };
      if (phase === 'completed') return { toolCallId, name, phase, result: value };
      return { toolCallId, name, phase, error: value as string };
    }
    if (phase === 'started') return { toolCallId, name, timestamp, phase, args: value };
    if (phase === 'completed') return { toolCallId, name, timestamp, phase, result: value };
    return { toolCallId, name, timestamp, phase, error: value as string };
  }
  const frame: ToolCallFrameBase & { phase?: ToolCallPhase; args?: unknown; result?: unknown; error?: string } = { toolCallId, name };
  if (parent !== undefined) frame.parentToolCallId = parent;
  if (timestamp !== undefined) frame.timestamp = timestamp;
  frame.phase = phase;
  if (present) frame[PHASE_FIELD[phase]] = value as string;
  return frame as ToolCallArtifactData;
}

type PartInspection = { kind: 'not-tool-call'; reason: string } | { kind: 'tool-call'; payload: unknown };

/**
 * Finds the data payload of a part in any of the three shapes a consumer meets: the SDK's
 * in-memory Part (`content.$case === "data"`), A2A 1.0 wire JSON (`data` + `metadata`) and
 * A2A 0.3 wire JSON (`kind: "data"`). Matches on `metadata.mimeType`, never `mediaType`.
 */
function inspectPart(part: unknown): PartInspection {
  if (!isPlainRecord(part)) return { kind: 'not-tool-call', reason: `part must be an object, got ${describe(part)}` };
  const metadata = part.metadata;
  if (!isPlainRecord(metadata) || metadata.mimeType !== TOOL_CALL_V1_MIME_TYPE) {
    return { kind: 'not-tool-call', reason: `part metadata.mimeType is not ${TOOL_CALL_V1_MIME_TYPE}` };
  }
  const content = part.content;
  if (isPlainRecord(content)) {
    if (content.$case === 'data' && hasOwn(content, 'value')) return { kind: 'tool-call', payload: content.value };
    return { kind: 'not-tool-call', reason: 'part content is not a data part' };
  }
  if (hasOwn(part, 'kind') && part.kind !== 'data') {
    return { kind: 'not-tool-call', reason: 'A2A 0.3 part kind is not "data"' };
  }
  if (hasOwn(part, 'data')) return { kind: 'tool-call', payload: part.data };
  return { kind: 'not-tool-call', reason: 'part carries no data' };
}

/**
 * Validates one part (any of the three shapes) and says exactly why it is not a frame.
 * Never throws, whatever it is given.
 */
export function validateToolCall(part: unknown): ToolCallValidation {
  try {
    const found = inspectPart(part);
    if (found.kind === 'not-tool-call') return { ok: false, reason: found.reason };
    return validatePayload(found.payload);
  } catch (err) {
    // Proxies and throwing getters: hostile input is rejected, not propagated.
    return { ok: false, reason: `part could not be read: ${err instanceof Error ? err.message : 'unknown error'}` };
  }
}

/** Validates a bare payload (the frame object itself, outside any part). */
export function validateToolCallFrame(payload: unknown): ToolCallValidation {
  const checked = checkToolCallFrame(payload);
  return typeof checked === 'string' ? { ok: false, reason: checked } : { ok: true, frame: checked };
}

/** validateToolCallFrame without its result object: the frame, or the reason (a string) it is not one. */
export function checkToolCallFrame(payload: unknown): ToolCallArtifactData | string {
  try {
    return checkPayload(payload);
  } catch (err) {
    return `payload could not be read: ${err instanceof Error ? err.message : 'unknown error'}`;
  }
}

/** Visits each part; a hostile array (throwing getters, proxies) ends the walk, never throws. */
function eachFrame(parts: unknown, visit: (frame: ToolCallArtifactData) => boolean): void {
  try {
    if (!Array.isArray(parts)) return;
    for (const part of parts) {
      const v = validateToolCall(part);
      if (v.ok && !visit(v.frame)) return;
    }
  } catch {
    // nothing more can be read from this array
  }
}

/** The first valid tool-call-v1 frame in a parts array, or undefined. */
export function parseToolCall(parts: unknown): ToolCallArtifactData | undefined {
  let first: ToolCallArtifactData | undefined;
  eachFrame(parts, (frame) => {
    first = frame;
    return false;
  });
  return first;
}

/** Every valid tool-call-v1 frame in a parts array, in order. */
export function parseToolCalls(parts: unknown): ToolCallArtifactData[] {
  const frames: ToolCallArtifactData[] = [];
  eachFrame(parts, (frame) => {
    frames.push(frame);
    return true;
  });
  return frames;
}
