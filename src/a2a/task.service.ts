import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, Optional, type OnModuleDestroy } from '@nestjs/common';
import type { Message, TaskState } from '@a2a-js/sdk';
import { Observable, map, merge, type Subscription } from 'rxjs';
import { validateToolCallFrame } from '../extensions';
import { AgentBus, type ChatTurn, type TaskTopicPayloads } from '../runtime';
import { A2A_CONFIG } from './a2a.constants';
import type { A2aConfig } from './a2a.module-definition';
import { echo, invalidParams } from './a2a-errors';
import { TaskEvent } from './task-event';
import { TaskRecord, type CallerId, type TaskListener } from './task-record';
import { TaskContentGuard } from './limits/task-content-guard';
import { ClientStreams } from './streams/client-streams';

export interface StartTaskInput {
  /** The user's message (its taskId and contextId are stamped here). */
  message: Message;
  /** The message as the plain text the agent reads. */
  text: string;
  caller: CallerId;
  metadata?: Record<string, unknown>;
}

export interface ListTasksQuery {
  contextId?: string;
  state?: TaskState;
  /** Only tasks whose status changed after this time (ms since epoch). */
  statusAfter?: number;
  pageSize: number;
  pageToken?: string;
}

export interface TaskPage {
  tasks: TaskRecord[];
  nextPageToken: string;
  totalSize: number;
}

/** A consumer's pace: whether it takes an event now, and a call back when it does again. */
export interface StreamPace {
  ready(): boolean;
  /** Calls `callback` once the consumer can take events again; returns the function that stops waiting. */
  whenReady(callback: () => void): () => void;
}

export interface FollowOptions {
  /** Replay the events after this sequence number (Last-Event-ID); unset: a Task snapshot first. */
  after?: number;
  /** Whether tool-call-v1 frames are delivered (extension activation). */
  toolFrames: boolean;
  /** The consumer's pace; events wait in the task's log while it is busy. */
  pace?: StreamPace;
}

/** A paced stream fell so far behind that the task's log no longer holds its next events. */
export class StreamOverrunError extends Error {
  constructor(taskId: string, cursor: number) {
    super(`the stream of task ${taskId} fell behind the retained events after ${cursor}; resume with Last-Event-ID`);
    this.name = 'StreamOverrunError';
  }
}

/** Events a stream takes per event-loop turn before it lets the writer (and other requests) run. */
const EVENTS_PER_TURN = 256;

/** Counts for tests and operations; every one returns to its baseline once tasks end and streams close. */
export interface A2aMetrics {
  /** Tasks in memory (running, or finished and not yet expired). */
  tasks: number;
  /** Tasks not yet in a terminal state. */
  liveTasks: number;
  /** Bus topic subscriptions held by live tasks (three per task: progress, toolframe, reply). */
  topicSubscriptions: number;
  /** Event streams open to clients. */
  openStreams: number;
  /** Tool frames from the bus that failed tool-call-v1 validation (logged, not forwarded). */
  rejectedFrames: number;
  /** Streams closed because their client stopped reading (stalledStreamTimeoutMs); a count since start. */
  stalledStreamsClosed: number;
}

type TopicMessage = { [K in keyof TaskTopicPayloads]: { kind: K; payload: TaskTopicPayloads[K] } }[keyof TaskTopicPayloads];

const TOPICS_PER_TASK = 3;

/**
 * Owns every task: creates it, binds it to its bus topics for its lifetime (not to any one HTTP
 * connection, so a client that reconnects finds everything), cancels it, lists it, expires it,
 * and serves its event stream with replay.
 */
@Injectable()
export class TaskService implements OnModuleDestroy {
  private readonly logger = new Logger(TaskService.name);
  private readonly tasks = new Map<string, TaskRecord>();
  private readonly contexts = new Map<string, Set<TaskRecord>>();
  private readonly expiries = new Map<string, NodeJS.Timeout>();
  private readonly cancelling = new Set<string>();
  private boundTasks = 0;
  private openStreams = 0;
  private rejectedFrames = 0;
  private readonly content: TaskContentGuard;

  constructor(
    private readonly bus: AgentBus,
    @Inject(A2A_CONFIG) private readonly config: A2aConfig,
    @Optional() private readonly clientStreams?: ClientStreams,
  ) {
    this.content = new TaskContentGuard(config);
  }

  onModuleDestroy(): void {
    for (const task of this.tasks.values()) task.cancel('the server is shutting down');
    for (const timer of this.expiries.values()) clearTimeout(timer);
    this.expiries.clear();
  }

  /**
   * Creates a task, subscribes to its topics, then publishes the run request (in that order: an
   * in-process run may answer synchronously).
   */
  start(input: StartTaskInput): TaskRecord {
    const admitted = this.admit(input);
    const task = this.create(admitted);
    this.dispatch(task, admitted);
    return task;
  }

  /**
   * Starts a task for the stream that asked for it: that stream gets every event from the Task
   * on, also those a fast run publishes before the stream is subscribed (the log holds them,
   * past its cap if need be, until the stream attaches or `release` is called).
   */
  startStreaming(
    input: StartTaskInput,
    options: Omit<FollowOptions, 'after'>,
  ): { task: TaskRecord; events: Observable<TaskEvent>; release: () => void } {
    const admitted = this.admit(input);
    const task = this.create(admitted);
    const release = task.hold(0);
    this.dispatch(task, admitted);
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
  private admit(input: StartTaskInput): StartTaskInput {
    const contextId = input.message.contextId;
    const held = contextId ? this.contextTasks(contextId, input.caller).length : 0;
    if (held >= this.config.maxHistoryLength) {
      throw invalidParams([
        {
          field: 'message.contextId',
          description: `conversation ${echo(contextId ?? '')} already holds ${held} messages, the limit (maxHistoryLength); start a new conversation (send no contextId)`,
        },
      ]);
    }
    return { ...input, message: this.content.message(input.message), text: this.content.text(input.text) };
  }

  private create(input: StartTaskInput): TaskRecord {
    const id = randomUUID();
    const contextId = input.message.contextId || randomUUID();
    const task = new TaskRecord({
      id,
      contextId,
      owner: input.caller,
      message: { ...input.message, taskId: id, contextId },
      text: input.text,
      maxEvents: this.config.maxEventsPerTask,
    });
    this.tasks.set(id, task);
    let context = this.contexts.get(contextId);
    if (!context) this.contexts.set(contextId, (context = new Set()));
    context.add(task);

    const subscription = this.bindTopics(task);
    this.boundTasks += 1;
    task.whenSettled(() => {
      subscription.unsubscribe();
      this.boundTasks -= 1;
      this.cancelling.delete(id);
      this.scheduleExpiry(task);
    });
    return task;
  }

  private dispatch(task: TaskRecord, input: StartTaskInput): void {
    const history = this.contextHistory(task);
    try {
      this.bus.publishRequest({ correlationId: task.id, message: input.text, history, contextId: task.contextId, metadata: input.metadata });
    } catch (err) {
      task.fail(`the run could not be dispatched: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /**
   * The task, if it exists and this caller may see it. Ownership is the one filter: issue 7's
   * authentication passes real caller ids and other callers' tasks read as not found.
   */
  find(id: string, caller: CallerId): TaskRecord | undefined {
    const task = this.tasks.get(id);
    return task && this.visibleTo(task, caller) ? task : undefined;
  }

  /** Visible tasks, most recently updated first, in pages chained by an opaque cursor. */
  list(caller: CallerId, query: ListTasksQuery): TaskPage {
    const matching = [...this.tasks.values()]
      .filter(
        (task) =>
          this.visibleTo(task, caller) &&
          (query.contextId === undefined || task.contextId === query.contextId) &&
          (query.state === undefined || task.state === query.state) &&
          (query.statusAfter === undefined || task.statusTime > query.statusAfter),
      )
      .sort(byRecency);
    let from = 0;
    if (query.pageToken) {
      const cursor = decodeCursor(query.pageToken);
      from = matching.findIndex((task) => byRecency(task, cursor) > 0);
      if (from < 0) from = matching.length;
    }
    const page = matching.slice(from, from + query.pageSize);
    const last = page[page.length - 1];
    const more = from + page.length < matching.length;
    return { tasks: page, nextPageToken: more && last ? encodeCursor(last) : '', totalSize: matching.length };
  }

  /**
   * Asks the runtime to cancel the run; it closes the open tools and answers "cancelled". If it
   * does not answer in time the task is settled as cancelled here. Resolves once the task is
   * terminal (which may be another state, when the run finished first).
   */
  async cancel(task: TaskRecord, reason: string): Promise<void> {
    if (!task.isTerminal && !this.cancelling.has(task.id)) {
      this.cancelling.add(task.id);
      const timer = setTimeout(() => task.cancel(reason), this.config.cancelTimeoutMs);
      timer.unref();
      task.whenSettled(() => clearTimeout(timer));
      try {
        this.bus.publishCancel({ correlationId: task.id, reason });
      } catch (err) {
        this.logger.error(`publishing the cancel of task ${task.id} failed: ${err instanceof Error ? err.message : String(err)}`);
        task.cancel(reason);
      }
    }
    await task.settled;
  }

  /**
   * The task's events for one stream: after `after` (replay, then live) or, without it or when
   * those events are no longer retained, a Task snapshot and then the live events. Completes
   * after the terminal status. Paced: at most EVENTS_PER_TURN per event-loop turn, and none
   * while `pace` says the consumer is busy; a consumer so slow that its next events leave the
   * log gets StreamOverrunError.
   */
  follow(task: TaskRecord, options: FollowOptions): Observable<TaskEvent> {
    return new Observable<TaskEvent>((subscriber) => {
      this.openStreams += 1;
      let cursor = options.after;
      if (cursor === undefined || !task.log.retainsAfter(cursor)) {
        cursor = task.log.lastSeq;
        subscriber.next(new TaskEvent(cursor, { payload: { $case: 'task', value: task.snapshot() } }));
      }
      let budget = EVENTS_PER_TURN;
      let nextTurn: NodeJS.Immediate | undefined;
      let stopWaiting: (() => void) | undefined;
      const listener: TaskListener = {
        cursor,
        ready: () => {
          if (nextTurn || stopWaiting) return false;
          if (budget === 0) {
            nextTurn = setImmediate(() => {
              nextTurn = undefined;
              budget = EVENTS_PER_TURN;
              task.resume(listener);
            });
            return false;
          }
          if (options.pace && !options.pace.ready()) {
            stopWaiting = options.pace.whenReady(() => {
              stopWaiting = undefined;
              task.resume(listener);
            });
            return false;
          }
          budget -= 1;
          return true;
        },
        push: (event) => {
          if (event.isToolFrame && !options.toolFrames) return;
          subscriber.next(event);
          if (event.terminal) subscriber.complete();
        },
        overrun: () => subscriber.error(new StreamOverrunError(task.id, listener.cursor)),
      };
      const stop = task.isTerminal && cursor >= task.log.lastSeq ? undefined : task.follow(listener);
      if (!stop) subscriber.complete();
      return () => {
        stop?.();
        if (nextTurn) clearImmediate(nextTurn);
        stopWaiting?.();
        this.openStreams -= 1;
      };
    });
  }

  /** Tasks not yet in a terminal state. */
  running(): TaskRecord[] {
    return [...this.tasks.values()].filter((task) => !task.isTerminal);
  }

  metrics(): A2aMetrics {
    return {
      tasks: this.tasks.size,
      liveTasks: this.boundTasks,
      topicSubscriptions: this.boundTasks * TOPICS_PER_TASK,
      openStreams: this.openStreams,
      rejectedFrames: this.rejectedFrames,
      stalledStreamsClosed: this.clientStreams?.stalledStreamsClosed ?? 0,
    };
  }

  private visibleTo(task: TaskRecord, caller: CallerId): boolean {
    return task.owner === caller;
  }

  /** The task's three topics merged into one subscription that lives as long as the task runs. */
  private bindTopics(task: TaskRecord): Subscription {
    return merge(
      this.bus.topic$('progress', task.id).pipe(map((payload): TopicMessage => ({ kind: 'progress', payload }))),
      this.bus.topic$('toolframe', task.id).pipe(map((payload): TopicMessage => ({ kind: 'toolframe', payload }))),
      this.bus.topic$('reply', task.id).pipe(map((payload): TopicMessage => ({ kind: 'reply', payload }))),
    ).subscribe((message) => this.apply(task, message));
  }

  /** Bus payloads may come from another process: each is checked before it touches the task. */
  private apply(task: TaskRecord, message: TopicMessage): void {
    switch (message.kind) {
      case 'progress': {
        const text = (message.payload as { text?: unknown } | undefined)?.text;
        if (typeof text === 'string' && text.length > 0) task.narrate(this.content.narration(text));
        else this.logger.warn(`task ${task.id}: a progress payload without text was ignored`);
        return;
      }
      case 'toolframe': {
        const checked = validateToolCallFrame((message.payload as { frame?: unknown } | undefined)?.frame);
        if (checked.ok) {
          task.toolFrame(this.content.frame(checked.frame));
        } else {
          this.rejectedFrames += 1;
          this.logger.warn(`task ${task.id}: a tool frame was rejected: ${checked.reason}`);
        }
        return;
      }
      case 'reply':
        this.applyReply(task, message.payload);
        return;
    }
  }

  private applyReply(task: TaskRecord, reply: TaskTopicPayloads['reply'] | undefined): void {
    switch (reply?.status) {
      case 'completed':
        task.complete(typeof reply.text === 'string' ? this.content.text(reply.text) : '');
        return;
      case 'failed':
        task.fail(typeof reply.error === 'string' && reply.error ? this.content.text(reply.error) : 'the agent run failed');
        return;
      case 'cancelled':
        task.cancel(typeof reply.reason === 'string' && reply.reason ? this.content.text(reply.reason) : 'cancelled');
        return;
      default:
        this.logger.warn(`task ${task.id}: a reply without a known status was ignored`);
    }
  }

  /** The tasks of a conversation that this caller may see: another caller's never join its history. */
  private contextTasks(contextId: string, caller: CallerId): TaskRecord[] {
    return [...(this.contexts.get(contextId) ?? [])].filter((task) => this.visibleTo(task, caller));
  }

  /** The earlier turns of a task's conversation: each answered task's question and answer. */
  private contextHistory(current: TaskRecord): ChatTurn[] {
    const turns: ChatTurn[] = [];
    for (const earlier of this.contextTasks(current.contextId, current.owner)) {
      if (earlier === current || earlier.answerText === undefined) continue;
      turns.push({ role: 'user', text: earlier.userText }, { role: 'agent', text: earlier.answerText });
    }
    return turns;
  }

  private scheduleExpiry(task: TaskRecord): void {
    const timer = setTimeout(() => this.forget(task), this.config.taskTtlMs);
    timer.unref();
    this.expiries.set(task.id, timer);
  }

  private forget(task: TaskRecord): void {
    this.expiries.delete(task.id);
    this.tasks.delete(task.id);
    const context = this.contexts.get(task.contextId);
    context?.delete(task);
    if (context?.size === 0) this.contexts.delete(task.contextId);
  }
}

/** Most recently updated first; ties by id, so the order (and the cursor) is total. */
function byRecency(a: { statusTime: number; id: string }, b: { statusTime: number; id: string }): number {
  return b.statusTime - a.statusTime || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function encodeCursor(task: TaskRecord): string {
  return Buffer.from(JSON.stringify([task.statusTime, task.id])).toString('base64url');
}

function decodeCursor(token: string): { statusTime: number; id: string } {
  try {
    const [statusTime, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof statusTime === 'number' && typeof id === 'string') return { statusTime, id };
  } catch {
    // falls through to the error below
  }
  throw invalidParams([{ field: 'pageToken', description: 'is not a page token this server issued' }]);
}
