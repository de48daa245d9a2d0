import { Logger } from '@nestjs/common';
// From its own file, not the package's index: a name re-exported by `export *` is a getter on
// the compiled module, which every tool frame would call.
import { checkToolCallFrame } from '../extensions/tool-call-v1';
import type { AgentBus, TaskTopicPayloads } from '../runtime';
import type { TaskContentGuard } from './limits/task-content-guard';
import type { TaskWriter } from './store/task-store';

/** Scrubs an answer piece by piece (see TaskContentGuard.textStream). */
type Scrub = (piece: string, last: boolean) => string;

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
   * The task's four topics in one subscription; the caller ends it (the returned function) when
   * the task settles. One bus call, no operator chain: every frame of every task passes here, and
   * every task binds. The answer's scrub is made with the first piece of an answer (a task may
   * send none), and the end is a function, not an RxJS Subscription around one.
   */
  bind(taskId: string, writer: TaskWriter): () => void {
    this.bound += 1;
    let scrub: Scrub | undefined;
    let listening = true;
    const stop = this.bus.listenTask(taskId, {
      progress: (payload) => this.applyProgress(taskId, writer, payload),
      toolframe: (payload) => this.applyToolFrame(taskId, writer, payload),
      answer: (payload) => {
        scrub = this.applyAnswer(taskId, writer, scrub, payload);
      },
      reply: (payload) => this.applyReply(taskId, writer, payload),
    });
    return () => {
      if (!listening) return;
      listening = false;
      this.bound -= 1;
      stop();
    };
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
      writer.toolFrame(this.content.checkedFrame(checked));
    } else {
      this.rejected += 1;
      this.logger.warn(`task ${taskId}: a tool frame was rejected: ${checked}`);
    }
  }

  /**
   * A piece of the streamed answer, scrubbed across piece boundaries; returns the scrub for the
   * next piece (a new answer, not appended, starts a new one).
   */
  private applyAnswer(taskId: string, writer: TaskWriter, scrub: Scrub | undefined, payload: unknown): Scrub | undefined {
    const { text, append, last } = (payload ?? {}) as Partial<Record<'text' | 'append' | 'last', unknown>>;
    if (typeof text !== 'string' || typeof append !== 'boolean' || typeof last !== 'boolean') {
      this.logger.warn(`task ${taskId}: an answer payload without text, append and last was ignored`);
      return scrub;
    }
    if (!append || !scrub) scrub = this.content.textStream();
    const out = scrub(text, last);
    // A piece held back whole (it may begin a secret) goes out with the next one.
    if (out === '' && append && !last) return scrub;
    writer.answer(out, append, last);
    return scrub;
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
