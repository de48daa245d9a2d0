import { Logger } from '@nestjs/common';
import { Subscription } from 'rxjs';
// From its own file, not the package's index: a name re-exported by `export *` is a getter on
// the compiled module, which every tool frame would call.
import { checkToolCallFrame } from '../extensions/tool-call-v1';
import type { AgentBus, TaskTopicPayloads } from '../runtime';
import type { TaskContentGuard } from './limits/task-content-guard';
import type { TaskWriter } from './store/task-store';

/** Bus topic subscriptions a bound task holds: progress, toolframe, answer, reply. */
export const TOPICS_PER_TASK = 4;

/**
 * Binds a task's writer to its run's bus topics: narration, tool frames and the reply become the
 * task's events. Bus payloads may come from another process, so each is checked (and capped,
 * and scrubbed of the server's credentials) before it touches the task.
 */
export class TaskBusBinding {
  private readonly logger = new Logger(TaskBusBinding.name);
  private bound = 0;
  private rejected = 0;
  private accepted = 0;

  constructor(
    private readonly bus: AgentBus,
    private readonly content: TaskContentGuard,
  ) {}

  /** Tasks bound right now. */
  get boundTasks(): number {
    return this.bound;
  }

  /** Tool frames that failed tool-call-v1 validation (logged, not forwarded). */
  get rejectedFrames(): number {
    return this.rejected;
  }

  /** Tool frames accepted into tasks (only grows). */
  get acceptedFrames(): number {
    return this.accepted;
  }

  /**
   * The task's four topics in one subscription; the caller ends it when the task settles. One
   * bus call, no operator chain: every frame of every task passes here, and every task binds.
   */
  bind(taskId: string, writer: TaskWriter): Subscription {
    this.bound += 1;
    const answer = { scrub: this.content.textStream() };
    const stop = this.bus.listenTask(taskId, {
      progress: (payload) => this.applyProgress(taskId, writer, payload),
      toolframe: (payload) => this.applyToolFrame(taskId, writer, payload),
      answer: (payload) => this.applyAnswer(taskId, writer, answer, payload),
      reply: (payload) => this.applyReply(taskId, writer, payload),
    });
    return new Subscription(() => {
      this.bound -= 1;
      stop();
    });
  }

  private applyProgress(taskId: string, writer: TaskWriter, payload: unknown): void {
    const text = (payload as { text?: unknown } | undefined)?.text;
    if (typeof text === 'string' && text.length > 0) writer.narrate(this.content.narration(text));
    else this.logger.warn(`task ${taskId}: a progress payload without text was ignored`);
  }

  /** Every frame of every task: one call per topic, no message object around the payload. */
  private applyToolFrame(taskId: string, writer: TaskWriter, payload: unknown): void {
    // The frame or why it is not one: no result object per frame.
    const checked = checkToolCallFrame((payload as { frame?: unknown } | undefined)?.frame);
    if (typeof checked !== 'string') {
      this.accepted += 1;
      writer.toolFrame(this.content.frame(checked));
    } else {
      this.rejected += 1;
      this.logger.warn(`task ${taskId}: a tool frame was rejected: ${checked}`);
    }
  }

  /** A piece of the streamed answer, scrubbed across piece boundaries (a new answer starts a new scrub). */
  private applyAnswer(taskId: string, writer: TaskWriter, answer: { scrub: (piece: string, last: boolean) => string }, payload: unknown): void {
    const { text, append, last } = (payload ?? {}) as Partial<Record<'text' | 'append' | 'last', unknown>>;
    if (typeof text !== 'string' || typeof append !== 'boolean' || typeof last !== 'boolean') {
      this.logger.warn(`task ${taskId}: an answer payload without text, append and last was ignored`);
      return;
    }
    if (!append) answer.scrub = this.content.textStream();
    const out = answer.scrub(text, last);
    // A piece held back whole (it may begin a secret) goes out with the next one.
    if (out === '' && append && !last) return;
    writer.answer(out, append, last);
  }

  private applyReply(taskId: string, writer: TaskWriter, reply: TaskTopicPayloads['reply'] | undefined): void {
    switch (reply?.status) {
      case 'completed':
        writer.complete(typeof reply.text === 'string' ? this.content.text(reply.text) : '');
        return;
      case 'failed':
        writer.fail(typeof reply.error === 'string' && reply.error ? this.content.text(reply.error) : 'the agent run failed');
        return;
      case 'cancelled':
        writer.cancel(typeof reply.reason === 'string' && reply.reason ? this.content.text(reply.reason) : 'cancelled');
        return;
      default:
        this.logger.warn(`task ${taskId}: a reply without a known status was ignored`);
    }
  }
}
