/**
 * Reads one A2A stream event (the `result` of a streaming JSON-RPC response, or the bare body
 * of an HTTP+JSON SSE event) in either protocol version into one small shape the reducer works
 * on. A2A 1.0 ProtoJSON wraps the payload under `task` / `message` / `statusUpdate` /
 * `artifactUpdate`; A2A 0.3 puts it directly in `result` with a `kind` discriminator. The SDK's
 * in-memory `StreamResponse` (`payload.$case`) is turned into the 1.0 JSON by the SDK itself
 * (`StreamResponse.toJSON`), so it is not read here.
 */

/** Task states, spelled once for both versions (1.0 `TASK_STATE_INPUT_REQUIRED` = 0.3 `input-required`). */
export type TaskPhase =
  | 'submitted'
  | 'working'
  | 'input-required'
  | 'auth-required'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'rejected'
  | 'unknown';

export const TERMINAL_TASK_PHASES: readonly TaskPhase[] = ['completed', 'failed', 'canceled', 'rejected'];
/** States after which a server closes the stream and the task waits for the client. */
export const INTERRUPTED_TASK_PHASES: readonly TaskPhase[] = ['input-required', 'auth-required'];

export interface StreamStatus {
  state: TaskPhase;
  /** The text parts of `status.message`, joined; undefined when it has none. */
  text?: string;
  timestamp?: string;
}

export interface StreamArtifact {
  artifactId: string;
  name?: string;
  /** The raw parts, in whichever wire shape they came. */
  parts: unknown[];
  append: boolean;
}

export type StreamEvent =
  | { kind: 'task'; taskId: string; contextId?: string; status?: StreamStatus; artifacts: StreamArtifact[] }
  | { kind: 'message'; taskId?: string; contextId?: string; text?: string }
  | { kind: 'status'; taskId?: string; contextId?: string; status: StreamStatus }
  | { kind: 'artifact'; taskId?: string; contextId?: string; artifact: StreamArtifact };

export type StreamEventReading = { ok: true; event: StreamEvent } | { ok: false; reason: string };

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const optString = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

const STATE_BY_WIRE_NAME: Readonly<Record<string, TaskPhase>> = {
  // A2A 1.0 ProtoJSON enum names
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_AUTH_REQUIRED: 'auth-required',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_UNSPECIFIED: 'unknown',
  // A2A 0.3 kebab-case values
  submitted: 'submitted',
  working: 'working',
  'input-required': 'input-required',
  'auth-required': 'auth-required',
  completed: 'completed',
  failed: 'failed',
  canceled: 'canceled',
  rejected: 'rejected',
  unknown: 'unknown',
};

export function isTerminalPhase(state: TaskPhase | undefined): boolean {
  return state !== undefined && TERMINAL_TASK_PHASES.includes(state);
}

/** Terminal or interrupted: the stream is over and will not resume by itself. */
export function isSettledPhase(state: TaskPhase | undefined): boolean {
  return isTerminalPhase(state) || (state !== undefined && INTERRUPTED_TASK_PHASES.includes(state));
}

/** The text of a text part in any shape: 1.0 wire `{text}`, 0.3 `{kind:"text",text}`, SDK `{content:{$case:"text"}}`. */
function partText(part: unknown): string | undefined {
  if (!isRecord(part)) return undefined;
  if (typeof part.text === 'string' && (part.kind === undefined || part.kind === 'text')) return part.text;
  const content = part.content;
  if (isRecord(content) && content.$case === 'text' && typeof content.value === 'string') return content.value;
  return undefined;
}

/** The text parts of a parts array joined (empty text parts are skipped), or undefined. */
export function textOfParts(parts: unknown): string | undefined {
  if (!Array.isArray(parts)) return undefined;
  const texts = parts.map(partText).filter((t): t is string => t !== undefined && t.length > 0);
  return texts.length > 0 ? texts.join('') : undefined;
}

/** Whether the parts hold any text part, even an empty one (an empty answer piece clears the answer). */
export function hasTextPart(parts: unknown): boolean {
  return Array.isArray(parts) && parts.some((part) => partText(part) !== undefined);
}

function readStatus(raw: unknown): StreamStatus | string {
  if (!isRecord(raw)) return 'status is missing';
  const state = typeof raw.state === 'string' ? STATE_BY_WIRE_NAME[raw.state] : undefined;
  if (!state) return `unknown task state ${JSON.stringify(raw.state)}`;
  const status: StreamStatus = { state };
  const text = isRecord(raw.message) ? textOfParts(raw.message.parts) : undefined;
  if (text !== undefined) status.text = text;
  const timestamp = optString(raw.timestamp);
  if (timestamp) status.timestamp = timestamp;
  return status;
}

function readArtifact(raw: unknown, append: unknown): StreamArtifact | string {
  if (!isRecord(raw)) return 'artifact is missing';
  const artifactId = optString(raw.artifactId);
  if (!artifactId) return 'artifact has no artifactId';
  if (!Array.isArray(raw.parts)) return `artifact ${artifactId} has no parts array`;
  const artifact: StreamArtifact = { artifactId, parts: raw.parts, append: append === true };
  const name = optString(raw.name);
  if (name) artifact.name = name;
  return artifact;
}

function readTask(raw: Rec): StreamEventReading {
  const taskId = optString(raw.id);
  if (!taskId) return { ok: false, reason: 'task has no id' };
  const artifacts: StreamArtifact[] = [];
  if (raw.artifacts !== undefined) {
    if (!Array.isArray(raw.artifacts)) return { ok: false, reason: `task ${taskId}: artifacts is not an array` };
    for (const a of raw.artifacts) {
      const artifact = readArtifact(a, false);
      if (typeof artifact === 'string') return { ok: false, reason: `task ${taskId}: ${artifact}` };
      artifacts.push(artifact);
    }
  }
  const event: StreamEvent = { kind: 'task', taskId, artifacts };
  const contextId = optString(raw.contextId);
  if (contextId) event.contextId = contextId;
  if (raw.status !== undefined) {
    const status = readStatus(raw.status);
    if (typeof status === 'string') return { ok: false, reason: `task ${taskId}: ${status}` };
    event.status = status;
  }
  return { ok: true, event };
}

function ids(raw: Rec): { taskId?: string; contextId?: string } {
  const out: { taskId?: string; contextId?: string } = {};
  const taskId = optString(raw.taskId);
  const contextId = optString(raw.contextId);
  if (taskId) out.taskId = taskId;
  if (contextId) out.contextId = contextId;
  return out;
}

function readMessage(raw: Rec): StreamEventReading {
  const event: StreamEvent = { kind: 'message', ...ids(raw) };
  const text = textOfParts(raw.parts);
  if (text !== undefined) event.text = text;
  return { ok: true, event };
}

function readStatusUpdate(raw: Rec): StreamEventReading {
  const status = readStatus(raw.status);
  if (typeof status === 'string') return { ok: false, reason: `status update: ${status}` };
  return { ok: true, event: { kind: 'status', ...ids(raw), status } };
}

function readArtifactUpdate(raw: Rec): StreamEventReading {
  const artifact = readArtifact(raw.artifact, raw.append);
  if (typeof artifact === 'string') return { ok: false, reason: `artifact update: ${artifact}` };
  return { ok: true, event: { kind: 'artifact', ...ids(raw), artifact } };
}

const V03_READERS: Readonly<Record<string, (raw: Rec) => StreamEventReading>> = {
  task: readTask,
  message: readMessage,
  'status-update': readStatusUpdate,
  'artifact-update': readArtifactUpdate,
};

const V10_READERS: ReadonlyArray<[string, (raw: Rec) => StreamEventReading]> = [
  ['task', readTask],
  ['message', readMessage],
  ['statusUpdate', readStatusUpdate],
  ['artifactUpdate', readArtifactUpdate],
];

/**
 * Reads one stream event; never throws. Says why when the input is neither a 1.0
 * `StreamResponse` nor a 0.3 streaming result.
 */
export function readStreamEvent(data: unknown): StreamEventReading {
  try {
    if (!isRecord(data)) return { ok: false, reason: 'stream event is not a JSON object' };
    if (typeof data.kind === 'string') {
      const reader = V03_READERS[data.kind];
      return reader ? reader(data) : { ok: false, reason: `unknown A2A 0.3 event kind ${JSON.stringify(data.kind)}` };
    }
    for (const [key, reader] of V10_READERS) {
      const payload = data[key];
      if (isRecord(payload)) return reader(payload);
    }
    const keys = Object.keys(data).slice(0, 5).join(', ');
    return { ok: false, reason: `not an A2A stream event (keys: ${keys || 'none'})` };
  } catch (err) {
    return { ok: false, reason: `stream event could not be read: ${err instanceof Error ? err.message : String(err)}` };
  }
}
