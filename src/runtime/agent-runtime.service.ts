import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { context, type Context, type Span } from '@opentelemetry/api';
import { Observable, Subscriber, UnsubscriptionError, config, type Subscription, type TeardownLogic } from 'rxjs';
import { AgentExecutor, type ExecutorEvent, type ExecutorInput } from '../executor/executor.types';
import { requireForRoot } from '../common/require-for-root';
import type { ToolCallArtifactData } from '../extensions';
import { contextFromCarrier, inSampledTrace } from '../tracing';
import { endToolSpan, startToolSpan } from './frame-spans';
import { AgentBus, publishingThrough, type TaskPublisher } from './agent-bus';
import { Narrator } from './narration';
import { NARRATOR } from './runtime.constants';
import { SteadyMap } from '../common/steady-map';
import { checkRuntimeOptions, RUNTIME_MODULE_OPTIONS, type RuntimeModuleOptions } from './runtime.module-definition';
import type { ReplyPayload, SkillRequest, TaskTopicKind, TaskTopicPayloads } from './runtime.topics';

const DEFAULT_CANCEL_GRACE_MS = 2_000;

/**
 * One live run: the handle to abort it, the guard that drops anything after it settles, and the
 * subscriber of its executor's events itself. As a Subscriber of its own (not an observer object
 * that RxJS wraps in a SafeSubscriber, a ConsumerObserver and three closures), an event goes from
 * the executor's `next` to the runtime in one call, through one object: at 1,000 concurrent runs
 * each frame touches a different run, and every object on that path is a likely cache miss.
 */
class Run extends Subscriber<ExecutorEvent> {
  settled = false;
  cancelReason?: string = undefined;
  cancelTimer?: NodeJS.Timeout = undefined;
  /**
   * Tools started and not yet ended: the run's open tool while it is the only one (the common
   * case, one tool after another), in these fields of the run itself: no object per tool call, and
   * one object fewer for a frame to reach (at 1,000 concurrent runs each is a likely cache miss).
   * `openToolId` is undefined while there is none.
   */
  openToolId: string | undefined = undefined;
  openToolName = '';
  /** performance.now() at its `started` frame. */
  openToolStartedAt = 0;
  openToolSpan: Span | undefined = undefined;
  /**
   * The other open tools, by tool call id (a Map whose one entry comes and goes makes a new table
   * on every delete: not for the common case). Made when first needed.
   */
  openTools: Map<string, OpenTool> | undefined = undefined;
  /**
   * The executor's teardown (what its Observable's subscribe function returned), in a field of
   * the run: RxJS would put it in an array of finalizers and walk that with an iterator at
   * unsubscribe (~130 B per run). Any other finalizer goes to RxJS's list as usual.
   */
  private teardown: (() => void) | undefined = undefined;

  constructor(
    private readonly host: RunHost,
    readonly correlationId: string,
    /** Publishes on the run's topics (the bus may keep there what it would look up per event). */
    readonly topics: TaskPublisher,
    readonly abort: AbortController,
    /** The context the run continues (the task's span); execute_tool spans made from frames go under it. */
    readonly trace: Context,
    /** The executor does not trace its tool calls: the runtime makes their spans from the frames. */
    readonly spansFromFrames: boolean,
  ) {
    super();
  }

  override add(teardown: TeardownLogic): void {
    if (typeof teardown === 'function' && this.teardown === undefined && !this.closed) this.teardown = teardown;
    else super.add(teardown);
  }

  override remove(teardown: Exclude<TeardownLogic, void>): void {
    if (teardown === this.teardown) this.teardown = undefined;
    else super.remove(teardown);
  }

  /** As RxJS's: closed first, then every finalizer once, their throws together in one UnsubscriptionError. */
  override unsubscribe(): void {
    if (this.closed) return;
    const teardown = this.teardown;
    this.teardown = undefined;
    let errors: unknown[] | undefined;
    try {
      super.unsubscribe();
    } catch (err) {
      errors = err instanceof UnsubscriptionError ? [...(err.errors as unknown[])] : [err];
    }
    if (teardown) {
      try {
        teardown();
      } catch (err) {
        (errors ??= []).push(...(err instanceof UnsubscriptionError ? (err.errors as unknown[]) : [err]));
      }
    }
    if (errors) throw new UnsubscriptionError(errors);
  }

  // A throw from the runtime's handling goes where RxJS sends one from an observer's handler
  // (reported, never back into the executor); Subscriber's own _error and _complete unsubscribe
  // after the handler, as these do.
  protected override _next(event: ExecutorEvent): void {
    try {
      this.host.onEvent(this, event);
    } catch (err) {
      reportUnhandledError(err);
    }
  }

  protected override _error(err: unknown): void {
    try {
      this.host.settle(this, { status: 'failed', error: errorMessage(err) });
    } catch (thrown) {
      reportUnhandledError(thrown);
    } finally {
      this.unsubscribe();
    }
  }

  protected override _complete(): void {
    try {
      this.host.settle(
        this,
        this.cancelReason !== undefined
          ? { status: 'cancelled', reason: this.cancelReason }
          : { status: 'failed', error: 'the agent run ended without an answer' },
      );
    } catch (thrown) {
      reportUnhandledError(thrown);
    } finally {
      this.unsubscribe();
    }
  }
}

/** What a run calls on the runtime that started it. */
interface RunHost {
  onEvent(run: Run, event: ExecutorEvent): void;
  settle(run: Run, reply: ReplyPayload): void;
}

/** As RxJS reports an error thrown by an observer's handler: to config.onUnhandledError, else thrown on a timer of its own. */
function reportUnhandledError(err: unknown): void {
  setTimeout(() => {
    const { onUnhandledError } = config;
    if (onUnhandledError) onUnhandledError(err);
    else throw err;
  });
}

/** A tool started and not yet ended besides the run's one in its fields: its name, start time (performance.now()), and the span made from the frames. */
interface OpenTool {
  id: string;
  name: string;
  startedAt: number;
  span?: Span;
}

/** One tool call of a run, ended: what metrics count. */
export interface ToolCallOutcome {
  name: string;
  outcome: 'completed' | 'failed';
  /** From its `started` frame to its terminal frame. */
  seconds: number;
}

/** Hears of each ended tool call, its parts as arguments (no ToolCallOutcome made per call). */
export type ToolCallListener = (name: string, outcome: ToolCallOutcome['outcome'], seconds: number) => void;

const NO_TOOL_CALL_LISTENERS: readonly ToolCallListener[] = Object.freeze([]);

function toExecutorInput(request: SkillRequest): ExecutorInput {
  if (!request.history?.length) return request.message;
  const messages: BaseMessage[] = request.history.map((turn) =>
    turn.role === 'user' ? new HumanMessage(turn.text) : new AIMessage(turn.text),
  );
  messages.push(new HumanMessage(request.message));
  return messages;
}

/**
 * Serves `agent.skill.request`: runs the executor for each correlationId and publishes every
 * event on that run's topics, in the order the executor produced it. Runs are independent:
 * a failing publish, run or cancel never reaches another run.
 */
@Injectable()
export class AgentRuntimeService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(AgentRuntimeService.name);
  /** By correlationId; a run ends with its task, and a Map emptied by each end would rebuild its table each time. */
  private readonly runs = new SteadyMap<Run>();
  private readonly busSubscriptions: Subscription[] = [];
  /**
   * Who hears of ended tool calls: a list replaced when one comes or goes, called directly. Every
   * tool call of every run passes here; an RxJS Subject made a closure, an iterator and its
   * results, and an outcome object per call.
   */
  private toolCallListeners = NO_TOOL_CALL_LISTENERS;
  /** What every run calls back (one object for all runs). */
  private readonly runHost: RunHost = {
    onEvent: (run, event) => this.onEvent(run, event),
    settle: (run, reply) => this.settle(run, reply),
  };
  private readonly options: RuntimeModuleOptions;

  constructor(
    private readonly bus: AgentBus,
    @Inject(NARRATOR) private readonly narrator: Narrator,
    @Optional() @Inject(RUNTIME_MODULE_OPTIONS) given: RuntimeModuleOptions | undefined,
    @Optional() private readonly agentExecutor?: AgentExecutor,
  ) {
    const options = checkRuntimeOptions(requireForRoot('RuntimeModule', given));
    this.options = options;
    if (options.serveRequests !== false && !agentExecutor) {
      throw new Error(
        'RuntimeModule: no AgentExecutor to run agents: pass executor: ExecutorModule.forRoot({ tools }) (or set serveRequests: false in a process that only fronts remote workers)',
      );
    }
  }

  private get executor(): AgentExecutor {
    if (!this.agentExecutor) throw new Error('RuntimeModule: this process does not run agents (serveRequests is false)');
    return this.agentExecutor;
  }

  onModuleInit(): void {
    if (this.options.serveRequests === false) return;
    this.busSubscriptions.push(
      this.bus.requests$().subscribe((request) => this.start(request)),
      this.bus.cancels$().subscribe((cancel) => this.cancel(cancel.correlationId, cancel.reason)),
    );
  }

  /** Last in Nest's shutdown, after the A2A front's drain: whatever still runs is cancelled. */
  onApplicationShutdown(): void {
    for (const sub of this.busSubscriptions) sub.unsubscribe();
    for (const id of this.runs.keys()) this.cancel(id, 'server shutting down');
  }

  /** Every tool call that ends in a run of this runtime, as its terminal frame is published. */
  toolCalls$(): Observable<ToolCallOutcome> {
    return new Observable<ToolCallOutcome>((subscriber) => this.onToolCall((name, outcome, seconds) => subscriber.next({ name, outcome, seconds })));
  }

  /** As toolCalls$, without an object per call; returns the function that stops listening. */
  onToolCall(listener: ToolCallListener): () => void {
    this.toolCallListeners = [...this.toolCallListeners, listener];
    return () => {
      const listeners = this.toolCallListeners.filter((known) => known !== listener);
      this.toolCallListeners = listeners.length ? listeners : NO_TOOL_CALL_LISTENERS;
    };
  }

  /** Number of runs not yet settled. */
  activeRuns(): number {
    return this.runs.size;
  }

  isRunning(correlationId: string): boolean {
    return this.runs.has(correlationId);
  }

  /** Starts a run; a second request for a correlationId that is still running is refused. */
  start(request: SkillRequest): boolean {
    const { correlationId } = request;
    if (typeof correlationId !== 'string' || correlationId.length === 0) {
      this.logger.warn('agent.skill.request without a correlationId: ignored');
      return false;
    }
    if (this.runs.has(correlationId)) {
      this.logger.warn(`run ${correlationId} is already running: duplicate request ignored`);
      return false;
    }
    // The run continues the trace of the task's span, whichever process published the request.
    const trace = contextFromCarrier(request.trace);
    // Only in a recorded trace: an untraced run pays nothing for them.
    const spansFromFrames = this.agentExecutor?.tracesToolCalls !== true && inSampledTrace(trace);
    // A bus written to AgentBus's shape without extending it may have no taskPublisher.
    const publisher = typeof this.bus.taskPublisher === 'function' ? this.bus.taskPublisher(correlationId) : publishingThrough(this.bus, correlationId);
    const run = new Run(this.runHost, correlationId, publisher, new AbortController(), trace, spansFromFrames);
    this.runs.set(correlationId, run);
    // Already the active context (no trace, or no context manager): no closure and no context switch.
    if (trace === context.active()) this.subscribeRun(run, request);
    else context.with(trace, () => this.subscribeRun(run, request));
    return true;
  }

  private subscribeRun(run: Run, request: SkillRequest): void {
    const { correlationId } = run;
    let events;
    try {
      // The executor may abort the run's controller itself (one signal per run, not one each).
      events = this.executor.run(toExecutorInput(request), { correlationId, signal: run.abort.signal, controller: run.abort, metadata: request.metadata });
    } catch (err) {
      this.settle(run, { status: 'failed', error: errorMessage(err) });
      return;
    }
    // A run that settles before subscribe() returns has unsubscribed itself: RxJS then runs the
    // executor's teardown as soon as it is added.
    events.subscribe(run);
  }

  /**
   * Aborts a run: the executor closes its open tools as `failed: "cancelled"`, then the reply
   * topic says cancelled. Returns false when no such run is live.
   */
  cancel(correlationId: string, reason = 'cancelled'): boolean {
    const run = this.runs.get(correlationId);
    if (!run || run.settled) return false;
    if (run.cancelReason !== undefined) return true;
    run.cancelReason = reason;
    run.abort.abort(new Error(reason));
    // The executor closes its open tools and completes; one that does not must still not
    // leave the run hanging.
    if (!run.settled) {
      run.cancelTimer = setTimeout(
        () => this.settle(run, { status: 'cancelled', reason }),
        this.options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS,
      );
      run.cancelTimer.unref();
    }
    return true;
  }

  private onEvent(run: Run, event: ExecutorEvent): void {
    if (run.settled) return;
    switch (event.type) {
      case 'progress': {
        // The model's own words before its tool calls are the best narration there is.
        const text = event.said || (event.tools?.length ? this.narrator.narrate(event.tools) : event.text);
        if (text) this.publish(run, 'progress', { text, step: event.step });
        return;
      }
      case 'toolFrame':
        this.publish(run, 'toolframe', { frame: event.frame });
        this.observeTool(run, event.frame);
        return;
      case 'answer':
        this.publish(run, 'answer', { text: event.text, append: event.append, last: event.last });
        return;
      case 'reply':
        this.settle(run, { status: 'completed', text: event.text });
        return;
      case 'error':
        this.settle(run, { status: 'failed', error: event.error });
        return;
    }
  }

  private observeTool(run: Run, frame: ToolCallArtifactData): void {
    const id = frame.toolCallId;
    if (frame.phase === 'started') {
      const span = run.spansFromFrames ? startToolSpan(run.trace, frame, run.correlationId) : undefined;
      if (run.openToolId === id || (run.openToolId === undefined && !run.openTools?.size)) {
        run.openToolId = id;
        run.openToolName = frame.name;
        run.openToolStartedAt = performance.now();
        run.openToolSpan = span;
      } else (run.openTools ??= new Map()).set(id, { id, name: frame.name, startedAt: performance.now(), span });
      return;
    }
    let name: string;
    let startedAt: number;
    let span: Span | undefined;
    if (run.openToolId === id) {
      name = run.openToolName;
      startedAt = run.openToolStartedAt;
      span = run.openToolSpan;
      run.openToolId = undefined;
      run.openToolSpan = undefined;
    } else {
      const open = run.openTools?.get(id);
      if (!open) return;
      run.openTools?.delete(id);
      ({ name, startedAt, span } = open);
    }
    if (span) endToolSpan(span, frame.phase === 'failed' ? { failed: true, error: frame.error ?? 'failed' } : { failed: false });
    const listeners = this.toolCallListeners;
    if (listeners.length === 0) return;
    const outcome = frame.phase === 'completed' ? 'completed' : 'failed';
    const seconds = (performance.now() - startedAt) / 1000;
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i](name, outcome, seconds);
      } catch (err) {
        // A listener's failure must not reach the run (a Subject reported it apart as well).
        this.logger.error(`a tool call listener threw: ${errorMessage(err)}`);
      }
    }
  }

  private settle(run: Run, reply: ReplyPayload): void {
    if (run.settled) return;
    // Once per run, with its task id: a model that cannot be reached must show in the server log.
    if (reply.status === 'failed') this.logger.warn(`task ${run.correlationId} failed: ${reply.error}`);
    this.publish(run, 'reply', reply);
    run.settled = true;
    if (this.runs.get(run.correlationId) === run) this.runs.delete(run.correlationId);
    run.unsubscribe();
    clearTimeout(run.cancelTimer);
    // An executor that did not close its open tools: their spans end with the run.
    if (run.openToolId !== undefined || run.openTools?.size) {
      const spans = [...(run.openTools?.values() ?? [])].map((tool) => tool.span);
      if (run.openToolId !== undefined) spans.push(run.openToolSpan);
      for (const span of spans) if (span) endToolSpan(span, { failed: true, error: 'the run ended before the tool did' });
      run.openToolId = undefined;
      run.openToolSpan = undefined;
      run.openTools?.clear();
    }
  }

  private publish<K extends TaskTopicKind>(run: Run, kind: K, payload: TaskTopicPayloads[K]): void {
    try {
      run.topics.publish(kind, payload);
    } catch (err) {
      // A failing transport must not break this run or any other.
      this.logger.error(`publishing ${kind} of run ${run.correlationId} failed: ${errorMessage(err)}`);
    }
  }
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : 'unknown error';
}
