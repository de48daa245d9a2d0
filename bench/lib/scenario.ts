/**
 * The scripted run every server under test plays: the same frames, the same pacing, so the
 * three architectures differ only in how they carry a frame from "published" to the wire.
 *
 * The client asks for a scenario in the text of its message (JSON), so one unmodified A2A
 * request drives all three servers.
 */
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { ToolCallArtifactData } from '../../src/extensions';

export interface Scenario {
  /** Tool calls in the task; each yields a `started` then a `completed` frame. */
  toolCalls: number;
  /**
   * Time the model "thinks" before each tool call, in ms. 0 means zero-latency: the run only
   * yields to the event loop between calls, the way an awaited zero-latency tool does.
   */
  intervalMs: number;
  /** Emit one `started` frame, then hold the stream open without emitting until aborted. */
  idle: boolean;
}

/** A task with no tool call (the empty-task section's): the request, the task's status events, the stream's set-up and end. */
export const EMPTY_TASK: Scenario = { toolCalls: 0, intervalMs: 0, idle: false };

/** The scripted run's narration before its first tool call (a WORKING status's message) and its answer after the last (an artifact): every server writes both. */
export const SCENARIO_NARRATION = 'thinking';
export const SCENARIO_ANSWER = 'done';

export const FRAMES_PER_TOOL_CALL = 2;
/** Name of the field, in each frame's args / result, that carries the publish time. */
export const PUBLISHED_AT_FIELD = 'publishedAtUs';
const TOOL_NAME = 'bench_tool';

/** Microseconds on the machine's monotonic clock: comparable between processes on one host. */
export function nowUs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e6 + ns / 1e3;
}

export function scenarioText(scenario: Scenario): string {
  return JSON.stringify(scenario);
}

/** Reads the scenario out of a user message; anything else is a clear error. */
export function parseScenario(text: string): Scenario {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`bench scenario must be JSON, got ${JSON.stringify(text.slice(0, 60))}`);
  }
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const toolCalls = o.toolCalls ?? 0;
  const intervalMs = o.intervalMs ?? 0;
  if (typeof toolCalls !== 'number' || !Number.isInteger(toolCalls) || toolCalls < 0) {
    throw new Error('bench scenario: toolCalls must be a non-negative integer');
  }
  if (typeof intervalMs !== 'number' || !(intervalMs >= 0)) {
    throw new Error('bench scenario: intervalMs must be a non-negative number');
  }
  return { toolCalls, intervalMs, idle: o.idle === true };
}

function callId(i: number): string {
  return `call_${i}`;
}

/** A frame stamped with the time it is published. */
export function startedFrame(i: number): ToolCallArtifactData {
  return { toolCallId: callId(i), name: TOOL_NAME, phase: 'started', args: { seq: i, [PUBLISHED_AT_FIELD]: nowUs() } };
}

export function completedFrame(i: number): ToolCallArtifactData {
  return { toolCallId: callId(i), name: TOOL_NAME, phase: 'completed', result: { seq: i, [PUBLISHED_AT_FIELD]: nowUs() } };
}

/**
 * Plays a scenario: publishes each frame through `publish` at the moment it happens.
 * Resolves when the script is done, or when `signal` aborts (idle scenarios wait for that).
 */
export async function playScenario(
  scenario: Scenario,
  publish: (frame: ToolCallArtifactData) => void,
  signal: AbortSignal,
): Promise<void> {
  if (scenario.idle) {
    publish(startedFrame(0));
    if (signal.aborted) return;
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    return;
  }
  // Paced streams start at a random phase of the interval, as independent agents would;
  // otherwise every stream's tool calls fire in the same timer tick, a burst no real load has.
  if (scenario.intervalMs > 0) await sleep(Math.random() * scenario.intervalMs);
  for (let i = 0; i < scenario.toolCalls && !signal.aborted; i++) {
    if (scenario.intervalMs > 0) await sleep(scenario.intervalMs);
    else await nextTurn();
    if (signal.aborted) return;
    publish(startedFrame(i));
    publish(completedFrame(i));
  }
}
