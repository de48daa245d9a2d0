import type { ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import {
  ListTasksRequest,
  SendMessageRequest,
  Task,
  TaskState,
  taskStateToJSON,
  type AgentExtension,
  type Message,
} from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { A2A_CONFIG, A2A_EXTENSIONS, type ProtocolVersion } from './a2a.constants';
import type { A2aConfig } from './a2a.module-definition';
import { negotiate, type A2aCallContext, type NegotiationSource } from './a2a-call-context';
import { callerOf } from './auth/a2a-auth.guard';
import { checkTextLength } from './limits/message-limits.pipe';
import {
  contentTypeNotSupported,
  echo,
  invalidParams,
  pushNotificationNotSupported,
  taskNotCancelable,
  taskNotFound,
  unsupportedOperation,
} from './a2a-errors';
import type { ListTasksRequestDto, TaskIdRequestDto, GetTaskRequestDto } from './dto/task-requests.dto';
import { DEFAULT_PAGE_SIZE } from './dto/task-requests.dto';
import type { SendMessageRequestDto } from './dto/send-message.dto';
import type { MessageSendParamsV03Dto } from './dto/send-message-v03.dto';
import { acceptsOutput, messageFromV03, messageText } from './message-content';
import { ResponseWriter, TaskSseStream, type StreamFraming } from './sse-framing';
import type { TaskEventStream } from './task-stream';
import type { TaskView } from './store/task-store';
import { StreamOverrunError, TaskService, type ClaimedSend, type StartTaskInput, type StreamingStart, type StreamPace } from './task.service';
import { ClientStreams } from './streams/client-streams';

const v03 = new V03PushNotificationSerializer();
/** No acceptedOutputModes: any output (one shared empty list, not one per send). */
const ANY_OUTPUT_MODE: readonly string[] = Object.freeze([]);

/** A send request in the SDK's 1.0 shape, whichever protocol version it arrived in. */
export type SendRequest = Pick<SendMessageRequest, 'message' | 'configuration' | 'metadata'> & { message: Message };

/** A stream ready to be written: its task and its SSE stream. */
export interface TaskStream {
  task: TaskView;
  sse: TaskSseStream;
}

/**
 * The A2A operations, independent of binding and protocol version: both controllers call these,
 * so JSON-RPC and HTTP+JSON, 0.3 and 1.0, behave alike and stream through the same pipeline.
 */
@Injectable()
export class A2aService {
  /** Responses this server closed itself (a stream too slow to keep): no client left, nothing to cancel. */
  private readonly closedByServer = new WeakSet<ServerResponse>();

  constructor(
    private readonly tasks: TaskService,
    @Inject(A2A_CONFIG) private readonly config: A2aConfig,
    @Inject(A2A_EXTENSIONS) private readonly extensions: AgentExtension[],
    private readonly clientStreams: ClientStreams,
  ) {}

  /** Version and extension negotiation for one request, with the caller A2aAuthGuard resolved. */
  negotiate(source: NegotiationSource): A2aCallContext {
    return negotiate(source, this.extensions, this.config.toolFramesWhenNoExtensionHeader, callerOf(source));
  }

  /** A 1.0 SendMessageRequest body, validated, in the SDK's shape. */
  fromV1(dto: SendMessageRequestDto): SendRequest {
    if (dto.configuration?.taskPushNotificationConfig) throw pushNotificationNotSupported();
    const request = SendMessageRequest.fromJSON(dto);
    return { message: request.message ?? messageRequired(), configuration: request.configuration, metadata: request.metadata };
  }

  /** 0.3 MessageSendParams, validated, in the SDK's 1.0 shape (0.3 `blocking` defaults to false). */
  fromV03(dto: MessageSendParamsV03Dto): SendRequest {
    const configuration = dto.configuration;
    if (configuration?.pushNotificationConfig) throw pushNotificationNotSupported();
    return {
      message: messageFromV03(dto.message),
      configuration: configuration && {
        acceptedOutputModes: configuration.acceptedOutputModes ?? [],
        historyLength: configuration.historyLength,
        returnImmediately: configuration.blocking !== true,
        taskPushNotificationConfig: undefined,
      },
      metadata: dto.metadata,
    };
  }

  /**
   * SendMessage: starts a task and, unless `returnImmediately`, waits until it is terminal.
   * The caller leaving before that cancels it (option `cancelOnDisconnect`).
   */
  async sendMessage(request: SendRequest, ctx: A2aCallContext, response: ServerResponse): Promise<Task> {
    const claimed = await this.tasks.claim(request.message.taskId ? await this.refuseTaskId(request.message.taskId, ctx) : this.startInput(request, ctx));
    // A retry of a message already sent answers with its task, which runs once.
    const task = claimed.repeated ?? (await this.tasks.start(claimed.input));
    if (!request.configuration?.returnImmediately) {
      if (!claimed.repeated) this.cancelIfClientLeaves(response, task);
      await task.settled;
      // Read again: a task another instance ran is terminal now, which this copy's snapshot is not.
      const final = (await this.tasks.find(task.id, ctx.caller)) ?? task;
      return final.snapshot({ historyLength: request.configuration?.historyLength });
    }
    return task.snapshot({ historyLength: request.configuration?.historyLength });
  }

  /**
   * SendStreamingMessage: starts a task and streams all of it, from its first event (the Task).
   * A retry of a message already sent follows that message's task instead: from its start, or
   * from `lastEventId`.
   */
  streamMessage(
    request: SendRequest,
    ctx: A2aCallContext,
    framing: StreamFraming,
    response: ServerResponse,
    lastEventId?: string,
  ): TaskStream | Promise<TaskStream> {
    if (request.message.taskId) return this.refuseTaskId(request.message.taskId, ctx);
    // At once when the store claims and creates at once (the in-memory one): no promise on every stream's path.
    const claimed = this.tasks.claim(this.startInput(request, ctx));
    if (claimed instanceof Promise) return claimed.then((send) => this.streamClaimed(send, ctx, framing, response, lastEventId));
    return this.streamClaimed(claimed, ctx, framing, response, lastEventId);
  }

  private streamClaimed(
    claimed: ClaimedSend,
    ctx: A2aCallContext,
    framing: StreamFraming,
    response: ServerResponse,
    lastEventId: string | undefined,
  ): TaskStream | Promise<TaskStream> {
    if (claimed.repeated) {
      const task = claimed.repeated;
      let after: number | undefined = lastEventId === undefined ? 0 : parseLastEventId(lastEventId, task);
      // A finished task with nothing after: the Task as it is now.
      if (task.isTerminal && after >= task.lastSeq) after = undefined;
      const pace = responsePace(response, framing);
      const events = this.tasks.follow(task, { after, toolFrames: ctx.toolFrames, pace });
      return { task, sse: this.frame(events, ctx, framing, response, pace) };
    }
    const pace = responsePace(response, framing);
    const started = this.tasks.startStreaming(claimed.input, { toolFrames: ctx.toolFrames, pace });
    if (started instanceof Promise) return started.then((start) => this.streamStarted(start, ctx, framing, response, pace));
    return this.streamStarted(started, ctx, framing, response, pace);
  }

  private streamStarted({ task, events, release }: StreamingStart, ctx: A2aCallContext, framing: StreamFraming, response: ServerResponse, pace: StreamPace): TaskStream {
    // A client gone before its stream attached must not pin the task's events for good.
    return { task, sse: this.frame(events, ctx, framing, response, pace, this.whenClientLeaves(response, task, release)) };
  }

  async getTask(dto: GetTaskRequestDto, ctx: A2aCallContext): Promise<Task> {
    return (await this.require(dto.id, ctx)).snapshot({ historyLength: dto.historyLength });
  }

  /** ListTasks, in ProtoJSON with `nextPageToken` always present (A2A 1.0, section 3.1.4). */
  async listTasks(dto: ListTasksRequestDto, ctx: A2aCallContext): Promise<Record<string, unknown>> {
    const request = ListTasksRequest.fromJSON(dto);
    const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
    const page = await this.tasks.list(ctx.caller, {
      contextId: request.contextId || undefined,
      state: request.status === TaskState.TASK_STATE_UNSPECIFIED ? undefined : request.status,
      statusAfter: request.statusTimestampAfter ? Date.parse(request.statusTimestampAfter) : undefined,
      pageSize,
      pageToken: request.pageToken || undefined,
    });
    const tasks = page.tasks.map((task) =>
      Task.toJSON(task.snapshot({ historyLength: request.historyLength, includeArtifacts: request.includeArtifacts ?? false })),
    );
    return { tasks, nextPageToken: page.nextPageToken, pageSize, totalSize: page.totalSize };
  }

  /** CancelTask: resolves with the task once it is terminal. */
  async cancelTask(dto: TaskIdRequestDto, ctx: A2aCallContext): Promise<Task> {
    const task = await this.require(dto.id, ctx);
    if (task.isTerminal) throw taskNotCancelable(task.id, taskStateToJSON(task.state));
    await this.tasks.cancel(task, 'cancelled by the client');
    // Read again: the task may live on another instance, whose final state this copy lacks.
    return ((await this.tasks.find(task.id, ctx.caller)) ?? task).snapshot();
  }

  /**
   * SubscribeToTask: without Last-Event-ID, a Task snapshot then the live events (a terminal
   * task is -32004, as the spec says); with it, exactly the events after it, then live.
   */
  async subscribe(
    dto: TaskIdRequestDto,
    lastEventId: string | undefined,
    ctx: A2aCallContext,
    framing: StreamFraming,
    response: ServerResponse,
  ): Promise<TaskStream> {
    const task = await this.require(dto.id, ctx);
    const after = lastEventId === undefined ? undefined : parseLastEventId(lastEventId, task);
    if (task.isTerminal && (after === undefined || after >= task.lastSeq)) {
      throw unsupportedOperation(`Task ${task.id} is ${taskStateToJSON(task.state)}: there is nothing left to stream`, {
        taskId: task.id,
      });
    }
    const pace = responsePace(response, framing);
    const events = this.tasks.follow(task, { after, toolFrames: ctx.toolFrames, pace });
    return { task, sse: this.frame(events, ctx, framing, response, pace) };
  }

  /** A task as the JSON of a protocol version (1.0 ProtoJSON, or the 0.3 `kind: "task"` object). */
  taskJson(task: Task, version: ProtocolVersion): string {
    return version === '1.0' ? JSON.stringify(Task.toJSON(task)) : v03.serialize({ payload: { $case: 'task', value: task } }).body;
  }

  /**
   * The one stream pipeline: a task's events (replayed, then live), framed for the binding and
   * version, kept alive. A client too slow for the log's retention is disconnected, so that it
   * resumes with Last-Event-ID rather than read a stream with a hole.
   */
  private frame(
    events: TaskEventStream,
    ctx: A2aCallContext,
    framing: StreamFraming,
    response: ServerResponse,
    pace: StreamPace,
    closed?: () => void,
  ): TaskSseStream {
    // `closed` (the started task's whenClientLeaves) runs in the tracking's own close listener: one listener per stream, not two.
    this.clientStreams.track(response, () => this.closeByServer(response), closed);
    const endsQuietly = (err: unknown): boolean => {
      if (!(err instanceof StreamOverrunError)) return false;
      this.closeByServer(response);
      return true;
    };
    return new TaskSseStream(events, ctx.version, framing, this.config.keepAliveMs, endsQuietly, pace instanceof ResponseWriter ? pace : undefined);
  }

  /**
   * Closes a stream too slow to keep: its client is gone or not reading, so its task is not
   * cancelled. The connection is reset, so the kernel drops what the client left unread.
   */
  private closeByServer(response: ServerResponse): void {
    this.closedByServer.add(response);
    if (response.socket && !response.socket.destroyed) response.socket.resetAndDestroy();
    else response.destroy();
  }

  /**
   * A send naming a task is refused: that task takes no more messages (or it is not found).
   * Apart from startInput, which is synchronous: most sends name no task, and each await on
   * every send's path is a promise and a microtask more.
   */
  private async refuseTaskId(taskId: string, ctx: A2aCallContext): Promise<never> {
    const existing = await this.require(taskId, ctx);
    throw unsupportedOperation(
      existing.isTerminal
        ? `Task ${existing.id} is ${taskStateToJSON(existing.state)} and takes no more messages; send a new message with its contextId to continue the conversation`
        : `Task ${existing.id} is still running and this agent takes no input mid-run`,
      { taskId: existing.id },
    );
  }

  /** Checks a send request naming no task against the output modes, and reads its text. */
  private startInput(request: SendRequest, ctx: A2aCallContext): StartTaskInput {
    const { message } = request;
    const accepted = request.configuration?.acceptedOutputModes ?? ANY_OUTPUT_MODE;
    if (!acceptsOutput(accepted, this.config.card.defaultOutputModes)) {
      throw contentTypeNotSupported(
        `This agent answers in ${this.config.card.defaultOutputModes.join(', ')}; acceptedOutputModes lists only ${echo(accepted.join(', '))}`,
      );
    }
    const text = messageText(message);
    checkTextLength(text, this.config.maxTextLength);
    // The agent reads one metadata map: the message's own keys over the request's.
    const metadata = message.metadata || request.metadata ? { ...request.metadata, ...message.metadata } : undefined;
    // Every field of the input, taskId too: the copies made of it on the way (task.service.ts startInputWith) keep its one shape.
    return { message, text, caller: ctx.caller, metadata, taskId: undefined, traceContext: ctx.traceContext };
  }

  private async require(id: string, ctx: A2aCallContext): Promise<TaskView> {
    const task = await this.tasks.find(id, ctx.caller);
    if (!task) throw taskNotFound(id);
    return task;
  }

  /** whenClientLeaves, as the response's own 'close' listener (SendMessage: no stream tracks the response). */
  private cancelIfClientLeaves(response: ServerResponse, task: TaskView): void {
    const leaving = this.whenClientLeaves(response, task);
    // `on`, not `once`: a response emits 'close' once, and `once` wraps the listener and removes it.
    if (leaving) response.on('close', leaving);
  }

  /**
   * What the response's close does for the client that started a task: leaving early cancels
   * it, after a grace period in which a client may rejoin (a live stream on the task at the end
   * of it keeps the run going). `closed`, if given, runs first. Undefined when there is nothing to do.
   */
  private whenClientLeaves(response: ServerResponse, task: TaskView, closed?: () => void): (() => void) | undefined {
    const cancels = this.config.cancelOnDisconnect;
    if (!cancels) return closed;
    return () => {
      closed?.();
      if (response.writableFinished || this.closedByServer.has(response) || task.isTerminal) return;
      // A client may rejoin on this instance or, with a shared store, on another one.
      const cancelUnlessRejoined = async (): Promise<void> => {
        if (task.isTerminal || task.listenerCount > 0) return;
        if ((await this.tasks.followersElsewhere(task.id)) > 0) return;
        await this.tasks.cancel(task, 'the client disconnected');
      };
      const timer = setTimeout(() => void cancelUnlessRejoined().catch(() => undefined), this.config.disconnectGraceMs);
      timer.unref();
      task.whenSettled(() => clearTimeout(timer));
    };
  }
}

/**
 * Events an @Sse stream takes per event-loop turn. Nest writes them to the response a tick
 * later, so within a turn the response's buffer cannot say "wait"; without a cap a replayed
 * backlog would pile up in Nest's queue, which drops the connection past 4 MB.
 */
const SSE_EVENTS_PER_TURN = 32;

/**
 * An HTTP response's pace: busy while its buffer is over the high-water mark, ready again on
 * drain. The HTTP+JSON binding's streams (Nest's @Sse) also take at most SSE_EVENTS_PER_TURN
 * events per turn; the JSON-RPC binding writes each event at once, so its buffer tells all.
 */
function responsePace(response: ServerResponse, framing: StreamFraming): StreamPace {
  // No count per turn, so no timer per turn either: every event of every stream passes here.
  if (framing.binding === 'jsonrpc') return new ResponseWriter(response);
  const whenReady = (callback: () => void): (() => void) => {
    if (response.writableNeedDrain) {
      response.once('drain', callback);
      return () => response.off('drain', callback);
    }
    const next = setImmediate(callback);
    return () => clearImmediate(next);
  };
  let taken = 0;
  let turn: NodeJS.Immediate | undefined;
  return {
    ready: () => {
      if (response.writableNeedDrain || taken >= SSE_EVENTS_PER_TURN) return false;
      taken += 1;
      turn ??= setImmediate(() => {
        taken = 0;
        turn = undefined;
      });
      return true;
    },
    whenReady,
  };
}

function messageRequired(): never {
  throw invalidParams([{ field: 'message', description: 'is required' }]);
}

/** Last-Event-ID: an event id this server sent for the task, i.e. 0..lastSeq. */
function parseLastEventId(raw: string, task: TaskView): number {
  const value = raw.trim();
  if (!/^\d{1,15}$/.test(value)) {
    throw invalidParams([{ field: 'Last-Event-ID', description: `must be an event id (a non-negative integer), got ${JSON.stringify(echo(raw))}` }]);
  }
  const seq = Number(value);
  const newest = Math.max(task.lastSeq, task.newestSeq ?? 0);
  if (seq > newest) {
    throw invalidParams([{ field: 'Last-Event-ID', description: `${seq} is beyond the last event of task ${task.id} (${newest})` }]);
  }
  return seq;
}
