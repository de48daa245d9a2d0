import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { MessagesAgent } from './agent/messages-agent';
import { DEFAULT_ANSWER_CHUNKING, type AnswerChunking } from './answer/answer-stream';
import {
  DEFAULT_MAX_FIELD_BYTES,
  DEFAULT_REDACT_KEYS,
  MIN_MAX_FIELD_BYTES,
  type FrameHygieneOptions,
} from './frames/sanitize-for-frame';

export interface ExecutorModuleOptions extends FrameHygieneOptions {
  /** Chat model of the default agent; must support bindTools. Default: by environment (see chatModelFromEnv). */
  model?: BaseChatModel;
  /** Tools of the default agent (required unless `agent` is given). */
  tools?: StructuredToolInterface[];
  /** Any compiled LangGraph graph with a `messages` state, replacing the default agent (and `model`, `tools`, `toolTimeoutMs`). */
  agent?: MessagesAgent;
  /** Time budget of a run: past it, open tools fail, then the run ends with an `error` event. Unbounded when unset. */
  runTimeoutMs?: number;
  /**
   * Graph steps a run may take (LangGraph's recursionLimit; a model turn and a tools step are
   * one step each, so the default 200 allows about 100 tool-calling turns). Past it the run ends
   * with an `error` event.
   */
  maxSteps?: number;
  /** Time budget of each tool call of the default agent: past it the call fails, the run goes on. Unbounded when unset. */
  toolTimeoutMs?: number;
  /**
   * How the streamed answer is coalesced into `answer` events: a piece leaves `flushMs` after
   * its first character or once it holds `flushChars` characters, whichever comes first.
   * Default `{ flushMs: 20, flushChars: 64 }`; `{ flushMs: 0, flushChars: 0 }` sends every token.
   */
  answerChunking?: Partial<AnswerChunking>;
}

/** The options the executor runs with, checked and defaulted. */
export interface ExecutorSettings {
  hygiene: Required<FrameHygieneOptions>;
  runTimeoutMs?: number;
  maxSteps: number;
  answerChunking: AnswerChunking;
}

export const DEFAULT_MAX_STEPS = 200;

/** setTimeout's largest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function checkDuration(name: string, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new Error(`ExecutorModule: ${name} must be a whole number of milliseconds between 1 and ${MAX_TIMER_MS}, got ${String(value)}`);
  }
}

/** Checks the options and fills in the defaults; every problem is a specific error at startup. */
export function resolveExecutorSettings(options: ExecutorModuleOptions = {}): ExecutorSettings {
  const { maxFieldBytes = DEFAULT_MAX_FIELD_BYTES, redactKeys = DEFAULT_REDACT_KEYS } = options;
  if (!Number.isInteger(maxFieldBytes) || maxFieldBytes < MIN_MAX_FIELD_BYTES) {
    throw new Error(`ExecutorModule: maxFieldBytes must be an integer of at least ${MIN_MAX_FIELD_BYTES}, got ${String(maxFieldBytes)}`);
  }
  if (!Array.isArray(redactKeys) || !redactKeys.every((k) => typeof k === 'string' && k.trim() !== '')) {
    throw new Error('ExecutorModule: redactKeys must be a list of non-empty strings');
  }
  checkDuration('runTimeoutMs', options.runTimeoutMs);
  checkDuration('toolTimeoutMs', options.toolTimeoutMs);
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  if (!Number.isInteger(maxSteps) || maxSteps < 2) {
    throw new Error(`ExecutorModule: maxSteps must be an integer of at least 2, got ${String(options.maxSteps)}`);
  }
  if (options.agent !== undefined) {
    if (typeof options.agent?.stream !== 'function') {
      throw new Error('ExecutorModule: agent must be a compiled LangGraph graph (it has no stream() method)');
    }
    const ignored = (['model', 'tools', 'toolTimeoutMs'] as const).filter((k) => options[k] !== undefined);
    if (ignored.length > 0) {
      throw new Error(
        `ExecutorModule: agent replaces the default agent, so ${ignored.join(', ')} would be ignored; build them into your agent (withToolTimeout bounds its tools)`,
      );
    }
  }
  if (options.tools !== undefined && !Array.isArray(options.tools)) {
    throw new Error('ExecutorModule: tools must be a list of LangChain tools');
  }
  if (options.agent === undefined && options.tools === undefined) {
    throw new Error('ExecutorModule: give it tools (a list of LangChain tools) for the default agent, or an agent of your own');
  }
  const answerChunking = { ...DEFAULT_ANSWER_CHUNKING, ...options.answerChunking };
  for (const key of ['flushMs', 'flushChars'] as const) {
    const value = answerChunking[key];
    if (!Number.isInteger(value) || value < 0 || value > MAX_TIMER_MS) {
      throw new Error(`ExecutorModule: answerChunking.${key} must be a whole number from 0 to ${MAX_TIMER_MS}, got ${String(value)}`);
    }
  }
  return { hygiene: { maxFieldBytes, redactKeys }, runTimeoutMs: options.runTimeoutMs, maxSteps, answerChunking };
}
