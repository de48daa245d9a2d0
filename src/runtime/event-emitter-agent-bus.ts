import { Injectable, Logger } from '@nestjs/common';
import { EventEmitter2, type ListenerFn } from 'eventemitter2';
import { Observable } from 'rxjs';
import { AgentBus, type TaskPublisher, type TaskTopicHandlers } from './agent-bus';
import { RuntimeEmitter, type TaskTopicListeners } from './runtime-emitter';
import {
  SKILL_CANCEL_TOPIC,
  SKILL_REQUEST_TOPIC,
  taskTopic,
  type SkillCancel,
  type SkillRequest,
  type TaskTopicKind,
  type TaskTopicPayloads,
} from './runtime.topics';

/**
 * The default AgentBus: in-process topics on an EventEmitter2. RuntimeModule gives it a
 * RuntimeEmitter of its own, which keeps a task's subscribers in one Map entry (see there);
 * on any other EventEmitter2 they are its listeners of the topic.
 */
@Injectable()
export class EventEmitterAgentBus extends AgentBus {
  /**
   * The task topics someone listens to here, by correlation id: a publish reuses the topic's
   * string (hashed and interned once) instead of building and hashing a new one per frame.
   */
  private readonly taskTopics = new Map<string, { names: Partial<Record<TaskTopicKind, string>>; listeners: number }>();

  /** The emitter, when it keeps task topics' subscribers itself. */
  private readonly taskTopicsHere: RuntimeEmitter | undefined;

  constructor(private readonly emitter: EventEmitter2) {
    super();
    this.taskTopicsHere = emitter instanceof RuntimeEmitter ? emitter : undefined;
  }

  publishRequest(request: SkillRequest): void {
    this.deliver(SKILL_REQUEST_TOPIC, request);
  }

  requests$(): Observable<SkillRequest> {
    return this.on$<SkillRequest>(SKILL_REQUEST_TOPIC);
  }

  publishCancel(cancel: SkillCancel): void {
    this.deliver(SKILL_CANCEL_TOPIC, cancel);
  }

  cancels$(): Observable<SkillCancel> {
    return this.on$<SkillCancel>(SKILL_CANCEL_TOPIC);
  }

  publish<K extends TaskTopicKind>(kind: K, correlationId: string, payload: TaskTopicPayloads[K]): void {
    const here = this.taskTopicsHere;
    if (here) {
      const task = here.taskTopicListeners(correlationId);
      const own = task?.list(kind);
      // The common case: the task's subscribers are all who hear it (what deliver would find).
      if (here.onlyTaskSubscribersHearTaskTopics()) {
        if (task && own) callTaskSubscribers(here, task, kind, own, payload);
        return;
      }
      this.deliver(task ? task.name(kind) : taskTopic(kind, correlationId), payload, own);
      return;
    }
    this.deliver(this.taskTopics.get(correlationId)?.names[kind] ?? taskTopic(kind, correlationId), payload);
  }

  /**
   * On a RuntimeEmitter, the publisher keeps the task's subscribers between publishes (until
   * they all leave): no lookup by correlation id per event. A subclass that overrides publish
   * gets every publish through it (the default publisher).
   */
  override taskPublisher(correlationId: string): TaskPublisher {
    const here = this.taskTopicsHere;
    return here && this.publish === EventEmitterAgentBus.prototype.publish ? new TaskPublisherHere(this, here, correlationId) : super.taskPublisher(correlationId);
  }

  topic$<K extends TaskTopicKind>(kind: K, correlationId: string): Observable<TaskTopicPayloads[K]> {
    const here = this.taskTopicsHere;
    if (here) return new Observable<TaskTopicPayloads[K]>((subscriber) => here.onTaskTopic(kind, correlationId, (payload: TaskTopicPayloads[K]) => subscriber.next(payload)));
    const topic = taskTopic(kind, correlationId);
    return new Observable<TaskTopicPayloads[K]>((subscriber) => {
      let known = this.taskTopics.get(correlationId);
      if (!known) this.taskTopics.set(correlationId, (known = { names: {}, listeners: 0 }));
      known.names[kind] = topic;
      known.listeners += 1;
      const stop = this.listen(topic, subscriber);
      return () => {
        stop();
        if (known && --known.listeners === 0 && this.taskTopics.get(correlationId) === known) this.taskTopics.delete(correlationId);
      };
    });
  }

  /**
   * On a RuntimeEmitter, the handlers are the topics' listeners themselves: no Observable and
   * RxJS subscriber per topic (in a tight loop of a task's bus work, 1,000 tasks alive: ~2.6
   * against ~6.1 KB allocated per task). A handler that throws is logged, like any listener.
   */
  override listenTask(correlationId: string, handlers: TaskTopicHandlers): () => void {
    const here = this.taskTopicsHere;
    if (!here) return super.listenTask(correlationId, handlers);
    return here.onTaskTopics(correlationId, handlers as { readonly [K in TaskTopicKind]: ListenerFn });
  }

  listenerCount(): number {
    return this.emitter.listenerCount();
  }

  /**
   * Like EventEmitter2.emit, but a listener that throws (someone's raw `emitter.on` handler)
   * is logged and skipped instead of stopping delivery to the listeners after it.
   * The list is copied because a listener may unsubscribe others while we iterate. `own`: the
   * topic's subscribers the RuntimeEmitter keeps (a list it replaces rather than changes, so no
   * copy), who come before its other listeners.
   */
  private deliver(topic: string, payload: unknown, own?: readonly ListenerFn[]): void {
    if (own) this.callEach(topic, own, payload, false);
    // Nobody else listens (on a RuntimeEmitter, the common case): no listener lists read and
    // copied per publish.
    if (this.taskTopicsHere && !this.taskTopicsHere.hasListenersBesideTaskTopics(topic)) return;
    this.callEach(topic, this.taskTopicsHere ? this.taskTopicsHere.listenersBesideTaskTopics(topic) : this.emitter.listeners(topic), payload);
    for (const any of this.emitter.listenersAny()) {
      try {
        any.call(this.emitter, topic, payload);
      } catch (err) {
        this.listenerThrew(topic, err);
      }
    }
  }

  private callEach(topic: string, listeners: readonly ListenerFn[], payload: unknown, copy = true): void {
    for (const listener of !copy || listeners.length <= 1 ? listeners : listeners.slice()) {
      try {
        listener.call(this.emitter, payload);
      } catch (err) {
        this.listenerThrew(topic, err);
      }
    }
  }

  private listenerThrew(topic: string, err: unknown): void {
    listenerThrew(topic, err);
  }

  private on$<T>(topic: string): Observable<T> {
    return new Observable<T>((subscriber) => this.listen(topic, subscriber));
  }

  /** Hands the topic's payloads to `subscriber` until the returned function is called. */
  private listen<T>(topic: string, subscriber: { next(payload: T): void }): () => void {
    const listener = (payload: T): void => subscriber.next(payload);
    this.emitter.on(topic, listener);
    return () => {
      this.emitter.off(topic, listener);
    };
  }
}

const logger = new Logger(EventEmitterAgentBus.name);

function listenerThrew(topic: string, err: unknown): void {
  logger.error(`a listener of ${topic} threw: ${err instanceof Error ? err.message : String(err)}`);
}

/** A task topic's own subscribers on a RuntimeEmitter, called as EventEmitterAgentBus.deliver calls them (its list is replaced, never changed: no copy). */
function callTaskSubscribers(emitter: RuntimeEmitter, task: TaskTopicListeners, kind: TaskTopicKind, list: readonly ListenerFn[], payload: unknown): void {
  for (let i = 0; i < list.length; i++) {
    try {
      list[i].call(emitter, payload);
    } catch (err) {
      listenerThrew(task.name(kind), err);
    }
  }
}

/** EventEmitterAgentBus.taskPublisher on a RuntimeEmitter. */
class TaskPublisherHere implements TaskPublisher {
  /** The task's subscribers as last looked up; looked up again once their count is zero (all left, or removed). */
  private task: TaskTopicListeners | undefined = undefined;

  constructor(
    private readonly bus: EventEmitterAgentBus,
    private readonly emitter: RuntimeEmitter,
    private readonly correlationId: string,
  ) {}

  publish<K extends TaskTopicKind>(kind: K, payload: TaskTopicPayloads[K]): void {
    const emitter = this.emitter;
    // Anyone else listening: the bus's own path, which finds them.
    if (!emitter.onlyTaskSubscribersHearTaskTopics()) {
      this.bus.publish(kind, this.correlationId, payload);
      return;
    }
    let task = this.task;
    if (task === undefined || task.count === 0) task = this.task = emitter.taskTopicListeners(this.correlationId);
    const list = task?.list(kind);
    if (task && list) callTaskSubscribers(emitter, task, kind, list, payload);
  }
}
