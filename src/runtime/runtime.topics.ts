/**
 * The bus vocabulary, named and typed in one place. Payloads are plain JSON so that another
 * transport (a real broker) can carry them unchanged.
 */
import type { ToolCallArtifactData } from '../extensions';
import type { TraceCarrier } from '../tracing';

/** Dispatch: run an agent for this correlationId. */
export const SKILL_REQUEST_TOPIC = 'agent.skill.request';
/** Abort the run of this correlationId (open tools end `failed: "cancelled"`). */
export const SKILL_CANCEL_TOPIC = 'agent.skill.cancel';

export type TaskTopicKind = 'progress' | 'toolframe' | 'answer' | 'reply';

/** `agent.skill.{kind}.{correlationId}` */
export function taskTopic(kind: TaskTopicKind, correlationId: string): string {
  return `agent.skill.${kind}.${correlationId}`;
}

/** One earlier turn of the conversation. */
export interface ChatTurn {
  role: 'user' | 'agent';
  text: string;
}

export interface SkillRequest {
  correlationId: string;
  /** The new user message, as text. */
  message: string;
  /** Earlier turns of the same conversation, oldest first. */
  history?: ChatTurn[];
  contextId?: string;
  /** The request's metadata (A2A message metadata over the request's), handed to the run's tools. */
  metadata?: Record<string, unknown>;
  /**
   * The trace context of the task's span as plain strings (W3C `traceparent` / `tracestate`),
   * which the run continues; absent when tracing is off.
   */
  trace?: TraceCarrier;
}

export interface SkillCancel {
  correlationId: string;
  reason?: string;
}

export interface ProgressPayload {
  text: string;
  step: number;
}

export interface ToolFramePayload {
  frame: ToolCallArtifactData;
}

/**
 * A piece of the answer as the model writes it. `append: false` starts the answer afresh
 * (an empty one withdraws what was sent); `last` ends it, and the reply follows.
 */
export interface AnswerPayload {
  text: string;
  append: boolean;
  last: boolean;
}

export type ReplyPayload =
  | { status: 'completed'; text: string }
  | { status: 'failed'; error: string }
  | { status: 'cancelled'; reason: string };

export interface TaskTopicPayloads {
  progress: ProgressPayload;
  toolframe: ToolFramePayload;
  answer: AnswerPayload;
  reply: ReplyPayload;
}
