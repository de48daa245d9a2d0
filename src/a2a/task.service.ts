import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { TaskState, type Message } from '@a2a-js/sdk';
import { SpanKind, SpanStatusCode, context as otelContext, trace, type Context, type Span } from '@opentelemetry/api';
import { Observable } from 'rxjs';
import { AgentBus } from '../runtime';
import { A2A_TASK_ID, A2A_TASK_STATE, GEN_AI, GEN_AI_OPERATION, invokeAgentSpanName, toolstreamTracer, traceCarrier } from '../tracing';
import { A2A_CONFIG } from './a2a.constants';
import type { A2aConfig } from './a2a.module-definition';
import { echo, invalidParams, tooManyLiveTasks } from './a2a-errors';
import type { TaskEvent } from './task-event';
import type { CallerId } from './task-record';
import { TaskContentGuard } from './limits/task-content-guard';
import { ClientStreams } from './streams/client-streams';
import { TaskStore, type Conversation, type ListTasksQuery, type TaskPage, type TaskView, type WrittenTask } from './store/task-store';
import { TaskBusBinding, TOPICS_PER_TASK } from './task-bus-binding';
import { followTask, type FollowOptions } from './task-stream';

export { StreamOverrunError, type FollowOptions, type StreamPace } from './task-stream';
export type { ListTasksQuery, TaskPage } from './store/task-store';

export interface StartTaskInput {
  /** The user's message (its taskId and contextId are stamped here). */
  message: Message;
  /** The message as the plain text the agent reads. */
  text: string;
  caller: CallerId;
  metadata?: Record<string, unknown>;
  /** The id claimed for the task with its message (see `claim`); unset: a fresh one. */
  taskId?: string;
  /** The caller's trace context: the task's `invoke_agent` span continues it. */
  traceContext?: Context;
}

/** A send is either a new message, to start, or a retry of one whose task is still kept. */
export type ClaimedSend = { input: StartTaskInput; repeated?: undefined } | { repeated: TaskView };

/** Seconds a client refused for too many live tasks is told to wait (Retry-After). */
const LIVE_LIMIT_RETRY_AFTER_S = 5;
/** How long a retry waits for a concurrent send of the same message to create its task. */
const CLAIM_WAIT_MS = 2_000;
const CLAIM_POLL_MS = 10;

/** Counts for tests and operations; every one returns to its baseline once tasks end and streams close. */
export interface A2aMetrics {
  /** Tasks in the store (running, or finished and not yet expired). */
  tasks: number;
  /** Tasks not yet in a terminal state, written by this instance. */
  liveTasks: number;
  /** Bus topic subscriptions held by live tasks (four per task: progress, toolframe, answer, reply). */
  topicSubscriptions: number;
  /** Event streams open to clients. */
  openStreams: number;
  /** Tool frames from the bus that failed tool-call-v1 validation (logged, not forwarded); only grows. */
  rejectedFrames: number;
  /** Streams closed because their client stopped reading (stalledStreamTimeoutMs); a count since start. */
  stalledStreamsClosed: number;
  /** Tool frames from the bus accepted into tasks; only grows. */
  frames: number;
  /** Tasks written here that reached each terminal state (`completed`, `failed`, `canceled`, `rejected`); only grows. */
  finishedTasks: Record<string, number>;
}

/** `TASK_STATE_COMPLETED` → `completed`: the label of a terminal state in metrics. */
export function taskStateLabel(state: TaskState): string {
  const name = TaskState[state] as string | undefined;
  return name ? name.replace(/^TASK_STATE_/, '').toLowerCase() : 'unknown';
}

/**
 * The A2A front's tasks: admits and creates each in the TaskStore, binds its writer to its run's
 * bus topics for its lifetime (not to any one HTTP connection, so a client that reconnects finds
 * everything), cancels it, lists it, expires it, and serves its event stream with replay.
 */
@Injectable()
export class TaskService {
  private readonly logger = new Logger(TaskService.name);
  /** Tasks this instance writes that are not yet terminal. */
  private readonly live = new Map<string, WrittenTask>();
  /** Live tasks per caller, and admissions still being created (what maxLiveTasks* count). */
  private readonly livePerCaller = new Map<CallerId, number>();
  private admitting = 0;
  private readonly cancelling = new Set<string>();
  private readonly streams = { open: 0 };
  private readonly content: TaskContentGuard;
  private readonly binding: TaskBusBinding;
  private readonly finishedTasks: Record<string, number> = {};

  constructor(
    private readonly bus: AgentBus,
    @Inject(A2A_CONFIG) private readonly config: A2aConfig,
    private readonly store: TaskStore,
    @Optional() private readonly clientStreams?: ClientStreams,
  ) {
    this.content = new TaskContentGuard(config);
    this.binding = new TaskBusBinding(bus, this.content);
    // A CancelTask that reached another instance: this one runs the task.
    store.onCancelRequest((id, reason) => {
      const task = this.live.get(id);
      if (task) void this.cancel(task, reason);
    });
    // A task the store can no longer keep (its events could not be stored): it fails, its run stops.
    store.onWriteFailure((id, reason) => {
      const task = this.live.get(id);
      if (task) this.failAndStop(task, reason);
    });
  }

  /** Cancels the tasks still live (their streams get the final event) and closes the store; A2aDrainService calls it on shutdown. */
  async close(): Promise<void> {
    for (const task of this.live.values()) task.cancel('the server is shutting down');
    await this.store.close();
  }

  /**
   * Sends are idempotent per caller and messageId: a message this caller already sent, while
   * the task it started is kept, answers with that task (no second run); another caller's equal
   * messageId is another message. A new message comes back with its task id claimed, for
   * `start` / `startStreaming`.
   */
  async claim(input: StartTaskInput): Promise<ClaimedSend> {
    const messageId = input.message.messageId;
    if (!messageId) return { input };
    const taskId = randomUUID();
    const earlier = await this.store.claimMessage(input.caller, messageId, taskId);
    if (earlier === undefined) return { input: { ...input, taskId } };
    // A concurrent send of the same message may still be creating its task.
    for (let waited = 0; waited <= CLAIM_WAIT_MS; waited += CLAIM_POLL_MS) {
      const task = await this.store.get(earlier);
      if (task) return { repeated: task };
      await new Promise((resolve) => setTimeout(resolve, CLAIM_POLL_MS));
    }
    // Its creation failed and gave the claim back: this send is the message's first.
    return this.claim(input);
  }

  /**
   * Creates a task, subscribes to its topics, then publishes the run request (in that order: an
   * in-process run may answer synchronously).
   */
  async start(input: StartTaskInput): Promise<WrittenTask> {
    const { task, runContext, admitted, conversation } = await this.admitAndCreate(input);
    this.dispatch(task, admitted, conversation, runContext);
    return task;
  }

  /**
   * Starts a task for the stream that asked for it: that stream gets every event from the Task
   * on, also those a fast run publishes before the stream is subscribed (the log holds them,
   * past its cap if need be, until the stream attaches or `release` is called).
   */
  async startStreaming(
    input: StartTaskInput,
    options: Omit<FollowOptions, 'after'>,
  ): Promise<{ task: WrittenTask; events: Observable<TaskEvent>; release: () => void }> {
    const { task, runContext, admitted, conversation } = await this.admitAndCreate(input);
    const release = task.hold(0);
    this.dispatch(task, admitted, conversation, runContext);
    const events = new Observable<TaskEvent>((subscriber) => {
      const subscription = this.follow(task, { ...options, after: 0 }).subscribe(subscriber);
      release();
      return subscription;
    });
    return { task, events, release };
  }

  /**
   * The input as a task may hold it (the server's credentials scrubbed from it), if its
   * conversation has room: one caller's context holds at most `maxHistoryLength` tasks, each a
   * turn of the history handed to the agent.
   */
  private async admit(input: StartTaskInput): Promise<{ admitted: StartTaskInput; conversation: Conversation }> {
    const contextId = input.message.contextId;
    const conversation = contextId ? await this.store.conversation(contextId, input.caller) : { tasks: 0, turns: [] };
    if (conversation.tasks >= this.config.maxHistoryLength) {
      throw invalidParams([
        {
          field: 'message.contextId',
          description: `conversation ${echo(contextId ?? '')} already holds ${conversation.tasks} messages, the limit (maxHistoryLength); start a new conversation (send no contextId)`,
        },
      ]);
    }
    return { admitted: { ...input, message: this.content.message(input.message), text: this.content.text(input.text) }, conversation };
  }

  /**
   * Admission and creation as one step for the live-task limits: a task counts against them
   * from its admission on, so concurrent requests cannot all slip past the check.
   */
  private async admitAndCreate(
    input: StartTaskInput,
  ): Promise<{ task: WrittenTask; runContext: Context; admitted: StartTaskInput; conversation: Conversation }> {
    if (this.live.size + this.admitting >= this.config.maxLiveTasks) {
      throw tooManyLiveTasks('server', this.config.maxLiveTasks, 'maxLiveTasks', LIVE_LIMIT_RETRY_AFTER_S);
    }
    if ((this.livePerCaller.get(input.caller) ?? 0) >= this.config.maxLiveTasksPerCaller) {
      throw tooManyLiveTasks('caller', this.config.maxLiveTasksPerCaller, 'maxLiveTasksPerCaller', LIVE_LIMIT_RETRY_AFTER_S);
    }
    this.admitting += 1;
    this.countLive(input.caller, 1);
    let task: WrittenTask | undefined;
    try {
      const { admitted, conversation } = await this.admit(input);
      const created = await this.create(admitted);
      task = created.task;
      return { ...created, admitted, conversation };
    } finally {
      this.admitting -= 1;
      if (!task) this.countLive(input.caller, -1);
      if (!task && input.taskId) this.store.releaseMessage(input.caller, input.message.messageId, input.taskId);
    }
  }

  private countLive(caller: CallerId, delta: number): void {
    const count = (this.livePerCaller.get(caller) ?? 0) + delta;
    if (count > 0) this.livePerCaller.set(caller, count);
    else this.livePerCaller.delete(caller);
  }

  /** The task, bound to its topics, and the context of its `invoke_agent` span for the run. */
  private async create(input: StartTaskInput): Promise<{ task: WrittenTask; runContext: Context }> {
    const id = input.taskId ?? randomUUID();
    const contextId = input.message.contextId || randomUUID();
    const task = await this.store.create({
      id,
      contextId,
      owner: input.caller,
      message: { ...input.message, taskId: id, contextId },
      text: input.text,
    });
    this.live.set(id, task);
    const parent = input.traceContext ?? otelContext.active();
    const span = this.startTaskSpan(task, parent);
    const subscription = this.binding.bind(id, task);
    // A run that never answers must not hold the task and its streams forever.
    const deadline = setTimeout(() => this.overrun(task), this.config.runDeadlineMs);
    deadline.unref();
    task.whenSettled(() => {
      clearTimeout(deadline);
      subscription.unsubscribe();
      this.live.delete(id);
      this.countLive(input.caller, -1);
      this.cancelling.delete(id);
      const state = taskStateLabel(task.state);
      this.finishedTasks[state] = (this.finishedTasks[state] ?? 0) + 1;
      this.store.expire(id, this.config.taskTtlMs);
      endTaskSpan(span, task);
    });
    return { task, runContext: trace.setSpan(parent, span) };
  }

  /** The run deadline passed: the task fails at once, and the run is asked to stop. */
  private overrun(task: WrittenTask): void {
    this.failAndStop(task, `the run did not finish within ${this.config.runDeadlineMs} ms (runDeadlineMs)`);
  }

  /** The task fails at once (not CANCELED), and its run is asked to stop. */
  private failAndStop(task: WrittenTask, reason: string): void {
    task.fail(reason);
    try {
      this.bus.publishCancel({ correlationId: task.id, reason });
    } catch (err) {
      this.logger.error(`publishing the cancel of task ${task.id} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** `invoke_agent <agent name>`: the whole task, from its creation to its terminal state. */
  private startTaskSpan(task: TaskView, parent: Context): Span {
    const span = toolstreamTracer().startSpan(invokeAgentSpanName(this.config.card.name), { kind: SpanKind.INTERNAL }, parent);
    if (span.isRecording()) {
      span.setAttribute(GEN_AI.operationName, GEN_AI_OPERATION.invokeAgent);
      span.setAttribute(GEN_AI.agentName, this.config.card.name);
      span.setAttribute(GEN_AI.conversationId, task.contextId);
      span.setAttribute(A2A_TASK_ID, task.id);
    }
    return span;
  }

  private dispatch(task: WrittenTask, input: StartTaskInput, conversation: Conversation, runContext: Context): void {
    try {
      this.bus.publishRequest({
        correlationId: task.id,
        message: input.text,
        history: conversation.turns,
        contextId: task.contextId,
        metadata: input.metadata,
        // The run continues the task's span, in whichever process it runs.
        trace: traceCarrier(runContext),
      });
    } catch (err) {
      task.fail(`the run could not be dispatched: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /**
   * The task, if it exists and this caller may see it. Ownership is the one filter: other
   * callers' tasks read as not found.
   */
  async find(id: string, caller: CallerId): Promise<TaskView | undefined> {
    const task = await this.store.get(id);
    return task && task.owner === caller ? task : undefined;
  }

  /** Visible tasks, most recently updated first, in pages chained by an opaque cursor. */
  list(caller: CallerId, query: ListTasksQuery): Promise<TaskPage> {
    return this.store.list(caller, query);
  }

  /**
   * Asks the runtime to cancel the run; it closes the open tools and answers "cancelled". If it
   * does not answer in time the task is settled as cancelled here. Resolves once the task is
   * terminal (which may be another state, when the run finished first).
   */
  async cancel(task: TaskView, reason: string): Promise<void> {
    if (!task.isTerminal && !this.live.has(task.id)) {
      // Another instance writes it: ask that one, and wait (a bounded time) for the end.
      await this.store.requestCancel(task.id, reason);
      await Promise.race([task.settled, new Promise((resolve) => setTimeout(resolve, this.config.cancelTimeoutMs * 2).unref())]);
      return;
    }
    if (!task.isTerminal && !this.cancelling.has(task.id)) {
      this.cancelling.add(task.id);
      const writer = this.live.get(task.id);
      const timer = setTimeout(() => writer?.cancel(reason), this.config.cancelTimeoutMs);
      timer.unref();
      task.whenSettled(() => clearTimeout(timer));
      try {
        this.bus.publishCancel({ correlationId: task.id, reason });
      } catch (err) {
        this.logger.error(`publishing the cancel of task ${task.id} failed: ${err instanceof Error ? err.message : String(err)}`);
        writer?.cancel(reason);
      }
    }
    await task.settled;
  }

  /** Streams following the task on other instances (0 in the embedded store). */
  followersElsewhere(id: string): Promise<number> {
    return this.store.followersElsewhere(id);
  }

  /** The task's events for one stream (see followTask): replay after `after`, or a snapshot, then live. */
  follow(task: TaskView, options: FollowOptions): Observable<TaskEvent> {
    return followTask(task, options, this.streams);
  }

  /** Tasks written here and not yet terminal (what a drain waits for). */
  running(): WrittenTask[] {
    return [...this.live.values()];
  }

  metrics(): A2aMetrics {
    return {
      tasks: this.store.size(),
      liveTasks: this.binding.boundTasks,
      topicSubscriptions: this.binding.boundTasks * TOPICS_PER_TASK,
      openStreams: this.streams.open,
      rejectedFrames: this.binding.rejectedFrames,
      stalledStreamsClosed: this.clientStreams?.stalledStreamsClosed ?? 0,
      frames: this.binding.acceptedFrames,
      finishedTasks: { ...this.finishedTasks },
    };
  }
}

/** Ends a task's span with its terminal state; a failed task's span has error status and its message. */
function endTaskSpan(span: Span, task: TaskView): void {
  if (span.isRecording()) {
    span.setAttribute(A2A_TASK_STATE, TaskState[task.state] ?? String(task.state));
    if (task.state === TaskState.TASK_STATE_FAILED || task.state === TaskState.TASK_STATE_REJECTED) {
      const part = task.snapshot({ historyLength: 0 }).status?.message?.parts[0]?.content;
      span.setStatus({ code: SpanStatusCode.ERROR, message: part?.$case === 'text' ? part.value : taskStateLabel(task.state) });
      span.setAttribute(GEN_AI.errorType, taskStateLabel(task.state));
    }
  }
  span.end();
}
