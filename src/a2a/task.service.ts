import { randomFillSync } from 'node:crypto';
import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import { TaskState, type Message } from '@a2a-js/sdk';
import { SpanKind, SpanStatusCode, context as otelContext, isSpanContextValid, trace, type Context, type Span } from '@opentelemetry/api';
import { AgentBus, type SkillRequest } from '../runtime';
import { SteadyMap } from '../common/steady-map';
import { A2A_TASK_ID, A2A_TASK_STATE, GEN_AI, GEN_AI_OPERATION, invokeAgentSpanName, toolstreamTracer, traceCarrier } from '../tracing';
import { A2A_CONFIG, A2A_ROLE } from './a2a.constants';
import type { A2aConfig, ToolstreamRole } from './a2a.module-definition';
import { echo, invalidParams, serviceUnavailable, tooManyLiveTasks } from './a2a-errors';
import type { CallerId } from './task-record';
import { TaskContentGuard } from './limits/task-content-guard';
import { ClientStreams } from './streams/client-streams';
import { TaskStore, type Conversation, type ListTasksQuery, type TaskPage, type TaskView, type WrittenTask } from './store/task-store';
import { TaskBusBinding, TOPICS_PER_TASK } from './task-bus-binding';
import { ownerKey, RedisTaskStore, unavailableIfDown } from './store/redis-task-store';
import { RedisLiveLimits } from './store/redis-live-limits';
import { RedisRunQueue, RUN_QUEUE_DEFAULTS } from './store/redis-run-queue';
import { followTask, type TaskEventStream, type FollowOptions } from './task-stream';
import { RunDeadlines } from './run-deadlines';

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

/** An input as a task may hold it, and the conversation it joins. */
interface Admission {
  admitted: StartTaskInput;
  conversation: Conversation;
}

/** A task this instance created, with what its run is dispatched with. */
interface Created {
  task: WrittenTask;
  runContext: Context;
}

/**
 * What `admitted` answers: what `create` made, with the input as admitted and its conversation,
 * in one object of one shape (not `made`'s fields copied into it: a generic copy per send).
 */
interface Admitted<T> {
  made: T;
  admitted: StartTaskInput;
  conversation: Conversation;
}

/** A task started for the stream that asked for it (see `startStreaming`). */
export interface StreamingStart {
  task: TaskView;
  events: TaskEventStream;
  release: () => void;
}

/** A send is either a new message, to start, or a retry of one whose task is still kept. */
export type ClaimedSend = { input: StartTaskInput; repeated?: undefined } | { repeated: TaskView };

/** Seconds a client refused for too many live tasks is told to wait (Retry-After). */
const LIVE_LIMIT_RETRY_AFTER_S = 5;
/** How long a retry waits for a concurrent send of the same message to create its task. */
const CLAIM_WAIT_MS = 2_000;
const CLAIM_POLL_MS = 10;
/** Waits for a claimed message's task at most; a claim whose task stayed missing over two waits outlived it. */
const CLAIM_ROUNDS = 4;

const TASK_SPAN_OPTIONS = { kind: SpanKind.INTERNAL };

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

/**
 * Random bytes for this many ids at a time (16 KiB): a fill costs about as much for 16 KiB as for
 * 2 KiB (~6 µs in a loop, dearer in the server, where it runs cold), so fewer fills per task.
 */
const IDS_PER_FILL = 1024;
const idBytes = Buffer.alloc(16 * IDS_PER_FILL);
let idsLeft = 0;
/** One id's text, rewritten in place for each new id: the dashes and the version stay. */
const idText = Buffer.from('00000000-0000-4000-8000-000000000000', 'latin1');
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
/** Where each of an id's 16 bytes goes in its text. */
const ID_BYTE_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/**
 * A random (version 4) UUID, as crypto.randomUUID makes them, from the same CSPRNG. The text is
 * written into a buffer and read as one string: randomUUID concatenates it from 20 pieces, ~0.5
 * KB of intermediate strings per id, and every task takes two (its id and its context's).
 */
export function newTaskId(): string {
  if (idsLeft === 0) {
    randomFillSync(idBytes);
    idsLeft = IDS_PER_FILL;
  }
  const from = 16 * --idsLeft;
  for (let i = 0; i < 16; i++) {
    let byte = idBytes[from + i];
    if (i === 6) byte = (byte & 0x0f) | 0x40;
    else if (i === 8) byte = (byte & 0x3f) | 0x80;
    idText[ID_BYTE_AT[i]] = HEX_DIGITS[byte >> 4];
    idText[ID_BYTE_AT[i] + 1] = HEX_DIGITS[byte & 0x0f];
  }
  return idText.toString('latin1');
}

/** Each state's label, made once (a regular expression and a lower-casing per finished task otherwise). */
const STATE_LABELS = new Map<TaskState, string>(
  Object.values(TaskState)
    .filter((state): state is TaskState => typeof state === 'number')
    .map((state) => [state, TaskState[state].replace(/^TASK_STATE_/, '').toLowerCase()]),
);

/** `TASK_STATE_COMPLETED` → `completed`: the label of a terminal state in metrics. */
export function taskStateLabel(state: TaskState): string {
  return STATE_LABELS.get(state) ?? 'unknown';
}

/**
 * The A2A front's tasks: admits and creates each in the TaskStore, binds its writer to its run's
 * bus topics for its lifetime (not to any one HTTP connection, so a client that reconnects finds
 * everything), cancels it, lists it, expires it, and serves its event stream with replay.
 */
@Injectable()
export class TaskService implements OnApplicationBootstrap {
  private readonly logger = new Logger(TaskService.name);
  /**
   * Tasks this instance writes that are not yet terminal. A SteadyMap: with tasks one at a time,
   * a Map would be emptied, and given a new (old-space) hash table, once per task.
   */
  private readonly live = new SteadyMap<WrittenTask>();
  /** Live tasks per caller, and admissions still being created (what maxLiveTasks* count). */
  private readonly livePerCaller = new Map<CallerId, number>();
  private admitting = 0;
  private readonly cancelling = new Set<string>();
  /** Runs this worker took whose request is not published yet (it checks for a cancel first). */
  private readonly starting = new Set<string>();
  private readonly streams = { open: 0 };
  private readonly content: TaskContentGuard;
  private readonly binding: TaskBusBinding;
  private readonly finishedTasks: Record<string, number> = {};
  /** Redis mode: runs go through the durable run queue to whichever worker takes them. */
  private readonly queue?: RedisRunQueue;
  /** Redis mode: maxLiveTasks and maxLiveTasksPerCaller hold across every instance on the Redis. */
  private readonly liveLimits?: RedisLiveLimits;
  private readonly role: ToolstreamRole;
  /** `invoke_agent <agent name>`, made once. */
  private readonly taskSpanName: string;
  /** One timer for every live task's run deadline (see RunDeadlines). */
  private readonly deadlines: RunDeadlines;

  constructor(
    private readonly bus: AgentBus,
    @Inject(A2A_CONFIG) private readonly config: A2aConfig,
    private readonly store: TaskStore,
    @Optional() private readonly clientStreams?: ClientStreams,
    @Optional() @Inject(A2A_ROLE) role?: ToolstreamRole,
  ) {
    this.role = role ?? 'all';
    this.taskSpanName = invokeAgentSpanName(config.card.name);
    this.content = new TaskContentGuard(config);
    this.binding = new TaskBusBinding(bus, this.content);
    this.deadlines = new RunDeadlines(
      config.runDeadlineMs,
      (id) => this.live.has(id),
      (id) => {
        const task = this.live.get(id);
        if (task) this.overrun(task);
      },
    );
    if (store instanceof RedisTaskStore) {
      const leaseMs = config.redis?.leaseMs ?? RUN_QUEUE_DEFAULTS.leaseMs;
      this.liveLimits = new RedisLiveLimits({
        redis: store.redis,
        key: store.key('live', 'server'),
        callerSet: (caller) => store.key('live', 'caller', ownerKey(caller)),
        taskKey: (id) => store.key('task', id),
        maxLiveTasks: config.maxLiveTasks,
        maxLiveTasksPerCaller: config.maxLiveTasksPerCaller,
        leaseMs,
        retryAfterSeconds: LIVE_LIMIT_RETRY_AFTER_S,
        guard: unavailableIfDown,
      });
      const limits = this.liveLimits;
      this.queue = new RedisRunQueue(store, {
        leaseMs,
        maxQueuedRuns: config.redis?.maxQueuedRuns ?? RUN_QUEUE_DEFAULTS.maxQueuedRuns,
        maxConcurrentRuns: config.redis?.maxConcurrentRuns ?? RUN_QUEUE_DEFAULTS.maxConcurrentRuns,
        taskTtlMs: config.taskTtlMs,
        queueTimeoutMs: config.redis?.queueTimeoutMs ?? config.runDeadlineMs,
        // A task the queue itself ended (cancelled while queued, worker lost): its live slot is free.
        ended: (task) => limits.release(task.id, task.owner),
      });
    }
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

  /** Redis mode: every instance reaps runs whose worker was lost; roles all and worker take runs. */
  onApplicationBootstrap(): void {
    if (!this.queue) return;
    this.queue.startReaper();
    if (this.role !== 'api') {
      this.queue.startWorker(
        (task, request) => this.runTaken(task, request),
        (id) => this.leaseLost(id),
      );
    }
  }

  /** Takes no more runs from the queue (a draining worker finishes the ones it has). */
  stopTakingRuns(): Promise<void> {
    return this.queue?.stop() ?? Promise.resolve();
  }

  /** Cancels the tasks still live (their streams get the final event) and closes the store; A2aDrainService calls it on shutdown. */
  async close(): Promise<void> {
    await this.stopTakingRuns();
    for (const task of this.live.values()) task.cancel('the server is shutting down');
    this.deadlines.stop();
    this.liveLimits?.stop();
    await this.store.close();
  }

  /**
   * Sends are idempotent per caller and messageId: a message this caller already sent, while
   * the task it started is kept, answers with that task (no second run); another caller's equal
   * messageId is another message. A new message comes back with its task id claimed, for
   * `start` / `startStreaming`.
   */
  claim(input: StartTaskInput, missing: string[] = []): ClaimedSend | Promise<ClaimedSend> {
    const messageId = input.message.messageId;
    if (!messageId) return { input };
    const taskId = newTaskId();
    const earlier = this.store.claimMessage(input.caller, messageId, taskId);
    // A store that claims at once (the in-memory one) answers a new message without a promise.
    if (earlier instanceof Promise) return earlier.then((found) => this.claimed(input, messageId, taskId, found, missing));
    return this.claimed(input, messageId, taskId, earlier, missing);
  }

  private claimed(input: StartTaskInput, messageId: string, taskId: string, earlier: string | undefined, missing: string[]): ClaimedSend | Promise<ClaimedSend> {
    if (earlier === undefined) return { input: startInputWith(input, input.message, input.text, taskId) };
    return this.claimedBefore(input, messageId, taskId, earlier, missing);
  }

  /** A message claimed before: its task (a retry), or, if the claim outlived its task, a new claim. */
  private async claimedBefore(input: StartTaskInput, messageId: string, taskId: string, earlier: string, missing: string[]): Promise<ClaimedSend> {
    // Its task stayed missing over two whole waits: the claim outlived it (it expired or was
    // evicted without its claim); this send is the message's first again.
    if (missing.length >= 2 && missing.slice(-2).every((id) => id === earlier)) {
      if (await this.store.replaceMessageClaim(input.caller, messageId, earlier, taskId)) return { input: startInputWith(input, input.message, input.text, taskId) };
    }
    // A concurrent send of the same message may still be creating its task.
    for (let waited = 0; waited <= CLAIM_WAIT_MS; waited += CLAIM_POLL_MS) {
      const task = await this.store.get(earlier);
      if (task) return { repeated: task };
      await new Promise((resolve) => setTimeout(resolve, CLAIM_POLL_MS));
    }
    if (missing.length + 1 >= CLAIM_ROUNDS) {
      throw serviceUnavailable(`The message ${echo(messageId)} is claimed by a send whose task does not exist yet; retry later`, LIVE_LIMIT_RETRY_AFTER_S);
    }
    // Its creation failed and gave the claim back (this send is the message's first), or it is still being created.
    return this.claim(input, [...missing, earlier]);
  }

  /**
   * Creates a task, subscribes to its topics, then publishes the run request (in that order: an
   * in-process run may answer synchronously).
   */
  async start(input: StartTaskInput): Promise<TaskView> {
    if (this.queue) return this.enqueue(input);
    const {
      made: { task, runContext },
      admitted,
      conversation,
    } = await this.admitAndCreate(input);
    this.dispatch(task, admitted, conversation, runContext);
    return task;
  }

  /**
   * Starts a task for the stream that asked for it: that stream gets every event from the Task
   * on, also those a fast run publishes before the stream is subscribed (the log holds them,
   * past its cap if need be, until the stream attaches or `release` is called).
   */
  startStreaming(input: StartTaskInput, options: Omit<FollowOptions, 'after'>): StreamingStart | Promise<StreamingStart> {
    if (this.queue) {
      // The task's first event is in Redis before the run is queued: the stream reads from it.
      return this.enqueue(input).then((queued) => ({ task: queued, events: followTask(queued, options, this.streams, 0), release: () => undefined }));
    }
    // Synchronous when the store creates at once (the in-memory one): no promise on every stream's path.
    const created = this.admitAndCreate(input);
    return created instanceof Promise ? created.then((c) => this.startedStreaming(c, options)) : this.startedStreaming(created, options);
  }

  private startedStreaming({ made: { task, runContext }, admitted, conversation }: Admitted<Created>, options: Omit<FollowOptions, 'after'>): StreamingStart {
    const release = task.hold(0);
    this.dispatch(task, admitted, conversation, runContext);
    // One stream, which releases the hold once it has attached (from the first event on).
    return { task, events: followTask(task, options, this.streams, 0, release), release };
  }

  /**
   * The input as a task may hold it (the server's credentials scrubbed from it), if its
   * conversation has room: one caller's context holds at most `maxHistoryLength` tasks, each a
   * turn of the history handed to the agent.
   */
  private admit(input: StartTaskInput): Admission | Promise<Admission> {
    const contextId = input.message.contextId;
    // A new conversation is admitted at once: no promise on the path of every send that names no context.
    if (!contextId) return this.admitTo(input, { tasks: 0, turns: [] });
    return this.store.conversation(contextId, input.caller).then((conversation) => this.admitTo(input, conversation));
  }

  private admitTo(input: StartTaskInput, conversation: Conversation): Admission {
    const contextId = input.message.contextId;
    if (conversation.tasks >= this.config.maxHistoryLength) {
      throw invalidParams([
        {
          field: 'message.contextId',
          description: `conversation ${echo(contextId ?? '')} already holds ${conversation.tasks} messages, the limit (maxHistoryLength); start a new conversation (send no contextId)`,
        },
      ]);
    }
    return { admitted: startInputWith(input, this.content.message(input.message), this.content.text(input.text), input.taskId), conversation };
  }

  /**
   * Admission and creation as one step for the live-task limits: a task counts against them
   * from its admission on, so concurrent requests cannot all slip past the check.
   */
  private admitAndCreate(input: StartTaskInput): Admitted<Created> | Promise<Admitted<Created>> {
    return this.admitted(input, this.createTask);
  }

  /** `create` as the callback `admitted` takes: made once, not a closure per send. */
  private readonly createTask = (admitted: StartTaskInput): Created | Promise<Created> => this.create(admitted);

  /**
   * Checks the live-task limits, admits the input and runs `create` on it, counted as live from
   * the start. With this instance's own limits, and an admission and a creation that need no
   * wait (a new conversation, the in-memory store), all of it is done at once, without a promise.
   */
  private admitted<T extends { task: TaskView }>(
    input: StartTaskInput,
    create: (admitted: StartTaskInput, conversation: Conversation) => T | Promise<T>,
  ): Admitted<T> | Promise<Admitted<T>> {
    const limits = this.liveLimits;
    if (limits) return this.admittedShared(limits, input, create);
    if (this.live.size + this.admitting >= this.config.maxLiveTasks) {
      this.releaseClaim(input);
      throw tooManyLiveTasks('server', this.config.maxLiveTasks, 'maxLiveTasks', LIVE_LIMIT_RETRY_AFTER_S);
    }
    if ((this.livePerCaller.get(input.caller) ?? 0) >= this.config.maxLiveTasksPerCaller) {
      this.releaseClaim(input);
      throw tooManyLiveTasks('caller', this.config.maxLiveTasksPerCaller, 'maxLiveTasksPerCaller', LIVE_LIMIT_RETRY_AFTER_S);
    }
    this.admitting += 1;
    this.countLive(input.caller, 1);
    let task: TaskView | undefined;
    let pending: Promise<Admitted<T>> | undefined;
    try {
      const admission = this.admit(input);
      if (admission instanceof Promise) {
        pending = admission.then(({ admitted, conversation }) => createAdmitted(create, admitted, conversation));
      } else {
        const created = createAdmitted(create, admission.admitted, admission.conversation);
        if (!(created instanceof Promise)) {
          task = created.made.task;
          return created;
        }
        pending = created;
      }
      return pending.then(
        (result) => {
          this.endAdmission(input, result.made.task);
          return result;
        },
        (err: unknown) => {
          this.endAdmission(input, undefined);
          throw err;
        },
      );
    } finally {
      if (!pending) this.endAdmission(input, task);
    }
  }

  /** An admission by this instance's own limits is over: the task counts as live, or (none made) not at all. */
  private endAdmission(input: StartTaskInput, task: TaskView | undefined): void {
    this.admitting -= 1;
    if (task) return;
    this.countLive(input.caller, -1);
    this.releaseClaim(input);
  }

  /**
   * Gives back the claim of a send whose task was not made (refused, or its creation failed):
   * a retry of the message (as after a 429 with Retry-After) is its first send again, and no
   * claim of a task that will never exist is kept.
   */
  private releaseClaim(input: StartTaskInput): void {
    if (input.taskId) this.store.releaseMessage(input.caller, input.message.messageId, input.taskId);
  }

  /** `admitted` with the limits shared in Redis. */
  private async admittedShared<T extends { task: TaskView }>(
    limits: RedisLiveLimits,
    input: StartTaskInput,
    create: (admitted: StartTaskInput, conversation: Conversation) => T | Promise<T>,
  ): Promise<Admitted<T>> {
    // Shared limits: the task's slot is taken in Redis (both limits in one atomic step).
    try {
      await limits.admit(input.taskId as string, input.caller);
    } catch (err) {
      this.releaseClaim(input);
      throw err;
    }
    let task: TaskView | undefined;
    try {
      const admission = this.admit(input);
      const { admitted, conversation } = admission instanceof Promise ? await admission : admission;
      const created = await createAdmitted(create, admitted, conversation);
      task = created.made.task;
      return created;
    } finally {
      if (!task) {
        limits.release(input.taskId as string, input.caller);
        this.releaseClaim(input);
      }
    }
  }

  private countLive(caller: CallerId, delta: number): void {
    const count = (this.livePerCaller.get(caller) ?? 0) + delta;
    // A caller with none left keeps a zero while it is the only entry: emptying a Map makes V8
    // allocate it a new table (per task, for tasks of one caller one at a time), which the
    // young generation then promotes. So at most one zero is kept.
    if (count > 0 || this.livePerCaller.size === 1) this.livePerCaller.set(caller, count);
    else this.livePerCaller.delete(caller);
  }

  /** The task, bound to its topics, and the context of its `invoke_agent` span for the run. */
  private create(input: StartTaskInput): Created | Promise<Created> {
    const id = input.taskId ?? newTaskId();
    const contextId = input.message.contextId || newTaskId();
    const task = this.store.create({
      id,
      contextId,
      owner: input.caller,
      message: messageIn(input.message, id, contextId),
      text: input.text,
    });
    return task instanceof Promise ? task.then((created) => this.created(created, input)) : this.created(task, input);
  }

  private created(task: WrittenTask, input: StartTaskInput): Created {
    const parent = input.traceContext ?? otelContext.active();
    const span = this.startTaskSpan(task, parent);
    this.track(task, span, input.caller);
    // A span that records nothing and carries no trace (no tracer, no caller trace) adds nothing
    // to the context: the run gets the caller's, and no context (a Map copy) is made per task.
    return { task, runContext: span.isRecording() || isSpanContextValid(span.spanContext()) ? trace.setSpan(parent, span) : parent };
  }

  /**
   * A task this instance writes, for its lifetime: bound to its run's topics, held to the run
   * deadline, and expired once it settles. With its span: a task created here, which counts
   * against its caller's live tasks and ends its span as it settles; without: a run taken from
   * the queue, whose shared live slot is released then. One settle callback per task.
   */
  private track(task: WrittenTask, span?: Span, caller?: CallerId): void {
    const id = task.id;
    this.live.set(id, task);
    const unbind = this.binding.bind(id, task);
    // A run that never answers must not hold the task and its streams forever.
    this.deadlines.add(id);
    task.whenSettled(() => {
      unbind();
      this.live.delete(id);
      this.deadlines.settled();
      this.cancelling.delete(id);
      const state = taskStateLabel(task.state);
      this.finishedTasks[state] = (this.finishedTasks[state] ?? 0) + 1;
      this.store.expire(id, this.config.taskTtlMs);
      if (span) {
        this.countLive(caller, -1);
        endTaskSpan(span, task);
      } else {
        this.liveLimits?.release(id, task.owner);
      }
    });
  }

  /**
   * Queue mode: admits the task, then creates it and queues its run in one step (a worker takes
   * it; this instance follows it from the store like any reader).
   */
  private async enqueue(input: StartTaskInput): Promise<TaskView> {
    const queue = this.queue as RedisRunQueue;
    const limits = this.liveLimits as RedisLiveLimits;
    let view: TaskView | undefined;
    // The id first: the task's live slot is taken under it.
    const {
      made: { task },
    } = await this.admitted(startInputWith(input, input.message, input.text, input.taskId ?? newTaskId()), async (admitted, conversation) => {
      const id = admitted.taskId as string;
      const contextId = admitted.message.contextId || newTaskId();
      const parent = admitted.traceContext ?? otelContext.active();
      const init = { id, contextId, owner: admitted.caller, message: messageIn(admitted.message, id, contextId), text: admitted.text };
      // The span starts here: the run, wherever it runs, continues it.
      const span = this.startTaskSpan(init, parent);
      const request: SkillRequest = {
        correlationId: id,
        message: admitted.text,
        history: conversation.turns,
        contextId,
        metadata: admitted.metadata,
        trace: traceCarrier(trace.setSpan(parent, span)),
      };
      try {
        view = await queue.enqueue(init, request);
      } catch (err) {
        span.end();
        throw err;
      }
      const created = view;
      // This front renews the slot until it sees the task end (the worker does too, once it runs it).
      limits.hold(id, admitted.caller);
      created.whenSettled(() => {
        limits.release(id, admitted.caller);
        endTaskSpan(span, created);
      });
      return { task: created };
    });
    return task;
  }

  /** A run this worker took from the queue: it writes the task and runs it on its local bus. */
  private runTaken(task: WrittenTask, request: SkillRequest): void {
    // The worker renews the task's live slot too: it still counts if its front dies.
    this.liveLimits?.hold(task.id, task.owner);
    this.track(task);
    this.starting.add(task.id);
    void this.startRun(task, request);
  }

  /**
   * Starts a run taken from the queue unless it was cancelled meanwhile: a CancelTask published
   * while this worker was taking the run (before it was registered here) reached no one, but
   * left a flag in Redis, read now that any later cancel reaches this instance.
   */
  private async startRun(task: WrittenTask, request: SkillRequest): Promise<void> {
    let reason: string | undefined;
    try {
      reason = await this.queue?.cancelFlag(task.id);
    } catch (err) {
      // Unreadable: the run starts; the canceller asks again after cancelTimeoutMs, and reaches it.
      this.logger.warn(`task ${task.id}: reading its cancel flag failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.starting.delete(task.id);
    if (task.isTerminal) return;
    if (reason !== undefined) return task.cancel(reason);
    try {
      this.bus.publishRequest(request);
    } catch (err) {
      task.fail(`the run could not be dispatched: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Another instance took over a task this worker runs (it stalled past its lease): the run stops here. */
  private leaseLost(id: string): void {
    const task = this.live.get(id);
    if (!task) return;
    this.logger.error(`task ${id}: this worker lost the run's lease (it stalled for longer than leaseMs); the run is stopped`);
    try {
      this.bus.publishCancel({ correlationId: id, reason: 'this worker lost the run lease' });
    } finally {
      task.cancel('this worker lost the run lease');
    }
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
  private startTaskSpan(task: Pick<TaskView, 'id' | 'contextId'>, parent: Context): Span {
    const span = toolstreamTracer().startSpan(this.taskSpanName, TASK_SPAN_OPTIONS, parent);
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
      // Still queued: cancelled here, no worker will run it.
      if (await this.queue?.cancelQueued(task.id, reason)) return;
      // A worker took it: flagged first, for a worker still registering it (it misses the publish).
      await this.queue?.flagCancel(task.id, reason);
      // Another instance writes it: ask that one, and wait (a bounded time) for the end. Asked
      // twice: a worker that was just taking the run from the queue when the first request came
      // had not registered it yet, and a request to no one is lost.
      const waitFor = (ms: number) => Promise.race([task.settled, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
      await this.store.requestCancel(task.id, reason);
      await waitFor(this.config.cancelTimeoutMs);
      if (!task.isTerminal) {
        await this.store.requestCancel(task.id, reason);
        await waitFor(this.config.cancelTimeoutMs);
      }
      return;
    }
    if (this.starting.has(task.id)) {
      // Taken from the queue, its run not started yet: it never starts.
      this.live.get(task.id)?.cancel(reason);
      return task.settled;
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
  follow(task: TaskView, options: FollowOptions): TaskEventStream {
    return followTask(task, options, this.streams);
  }

  /** Tasks written here and not yet terminal (what a drain waits for). */
  running(): WrittenTask[] {
    return this.live.values();
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

/** Runs `create` on an admitted input; what it made, with the input and its conversation (at once if `create` is). */
function createAdmitted<T extends object>(
  create: (admitted: StartTaskInput, conversation: Conversation) => T | Promise<T>,
  admitted: StartTaskInput,
  conversation: Conversation,
): Admitted<T> | Promise<Admitted<T>> {
  const created = create(admitted, conversation);
  if (created instanceof Promise) return created.then((made) => ({ made, admitted, conversation }));
  return { made: created, admitted, conversation };
}

/**
 * The input with this message, text and task id, the rest as `input` has them: one literal of
 * the input's one shape, where withFields' copy (Object.assign into an empty object, grown past
 * its in-object room) was a generic copy and a property store more, twice per send.
 * `satisfies`: a field StartTaskInput gains and this list does not pass on is a compile error.
 */
function startInputWith(input: StartTaskInput, message: Message, text: string, taskId: string | undefined): StartTaskInput {
  return {
    message,
    text,
    caller: input.caller,
    metadata: input.metadata,
    taskId,
    traceContext: input.traceContext,
  } satisfies { [K in keyof StartTaskInput]-?: unknown };
}

/** The message stamped with its task and context, every other field as it came (one literal, as `startInputWith`). */
function messageIn(message: Message, taskId: string, contextId: string): Message {
  return {
    messageId: message.messageId,
    contextId,
    taskId,
    role: message.role,
    parts: message.parts,
    metadata: message.metadata,
    extensions: message.extensions,
    referenceTaskIds: message.referenceTaskIds,
  } satisfies { [K in keyof Message]-?: unknown };
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
