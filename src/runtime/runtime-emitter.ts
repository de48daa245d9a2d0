import { EventEmitter2, type event as EventName, type eventNS as EventNamespace, type ListenerFn } from 'eventemitter2';
import { SKILL_CANCEL_TOPIC, SKILL_REQUEST_TOPIC, taskTopic, type TaskTopicKind } from './runtime.topics';

const TASK_TOPIC_PREFIX = 'agent.skill.';
const TASK_TOPIC_KINDS: ReadonlySet<string> = new Set<TaskTopicKind>(['progress', 'toolframe', 'answer', 'reply']);

type ByKind<T> = Record<TaskTopicKind, T | undefined>;

/** EventEmitter2's own `_on`, through which its on, once, many and prepend methods all add a listener. */
const EVENT_EMITTER2_ON = (EventEmitter2.prototype as unknown as { _on: (this: EventEmitter2, ...args: unknown[]) => EventEmitter2 })._on;

/** A name under the task topics' prefix that is not one of the bus's fixed topics (request, cancel). */
function underTaskPrefix(event: string): boolean {
  return event.startsWith(TASK_TOPIC_PREFIX) && event !== SKILL_REQUEST_TOPIC && event !== SKILL_CANCEL_TOPIC;
}

/**
 * One task's bus subscribers, by topic kind, and each kind's topic name (made once, reused by
 * every publish). A kind's list is replaced, never changed, so a delivery can go through the one
 * it read without a copy; each is exactly as long as it needs to be (these live as long as the
 * task, so the young generation copies and promotes them).
 */
export class TaskTopicListeners {
  count = 0;
  readonly names: ByKind<string> = { progress: undefined, toolframe: undefined, answer: undefined, reply: undefined };
  readonly lists: ByKind<readonly ListenerFn[]> = { progress: undefined, toolframe: undefined, answer: undefined, reply: undefined };
}

/**
 * RuntimeModule's EventEmitter2 (wildcards off, no listener limit). The default bus keeps a
 * task's subscribers here in one Map entry by correlation id, instead of four keys of
 * EventEmitter2's own table: a new string key added to and deleted from that dictionary per
 * topic cost ~8 µs per task, the Map entry ~1 µs. The emitter's reading and emitting methods
 * count them as listeners of their topics (`agent.skill.{kind}.{correlationId}`), so whoever
 * looks at or emits on this emitter sees what an EventEmitter2 with those listeners would show.
 */
export class RuntimeEmitter extends EventEmitter2 {
  private readonly tasks = new Map<string, TaskTopicListeners>();
  private taskListenerCount = 0;
  /**
   * Whether a listener was ever added with on() (or once, many, prepend) to a name under the
   * task topics' prefix. Until one is, no task topic has such a listener, and
   * hasListenersBesideTaskTopics answers without looking the topic up in EventEmitter2's table:
   * a first lookup of a new string there cost ~1.1 µs (V8 internalises it; scratch loop), and
   * each task's four topics are new strings.
   */
  private listenedUnderTaskPrefix = false;

  constructor() {
    super({ wildcard: false, maxListeners: 0, ignoreErrors: false });
  }

  /** Adds `listener` to the task topic; returns the function that removes it. */
  onTaskTopic(kind: TaskTopicKind, correlationId: string, listener: ListenerFn): () => void {
    let task = this.tasks.get(correlationId);
    if (!task) this.tasks.set(correlationId, (task = new TaskTopicListeners()));
    task.names[kind] ??= taskTopic(kind, correlationId);
    const list = task.lists[kind];
    task.lists[kind] = list ? [...list, listener] : [listener];
    task.count += 1;
    this.taskListenerCount += 1;
    const added = task;
    return () => this.offTaskTopic(kind, correlationId, added, listener);
  }

  /** The task's topic names and listeners while someone listens to one of its topics here (read-only). */
  taskTopicListeners(correlationId: string): Readonly<TaskTopicListeners> | undefined {
    return this.tasks.get(correlationId);
  }

  /** The topic's listeners added with on() (EventEmitter2's own; the live list): what `listeners` shows besides the task topics' subscribers. */
  listenersBesideTaskTopics(event: EventName | EventNamespace): ListenerFn[] {
    return super.listeners(event);
  }

  /** Whether anything besides the task topics' subscribers hears `event`: a listener added with on() or onAny(). */
  hasListenersBesideTaskTopics(event: string): boolean {
    if (!this.listenedUnderTaskPrefix && underTaskPrefix(event)) return this.listenersAny().length > 0;
    return super.hasListeners(event).valueOf();
  }

  /** EventEmitter2 adds each listener of its own here (see listenedUnderTaskPrefix). */
  _on(type: EventName | EventNamespace, ...rest: unknown[]): this {
    if (typeof type !== 'string' || underTaskPrefix(type)) this.listenedUnderTaskPrefix = true;
    return EVENT_EMITTER2_ON.call(this, type, ...rest) as this;
  }

  override emit(event: EventName | EventNamespace, ...values: unknown[]): boolean {
    const own = this.ownListeners(event);
    if (own) for (const listener of own) listener.apply(this, values);
    return super.emit(event, ...values) || own !== undefined;
  }

  override emitAsync(event: EventName | EventNamespace, ...values: unknown[]): Promise<unknown[]> {
    const own = this.ownListeners(event);
    const ownResults = own ? own.map((listener) => listener.apply(this, values) as unknown) : [];
    return Promise.all([Promise.all(ownResults), super.emitAsync(event, ...values)]).then(([mine, theirs]) => [...mine, ...theirs]);
  }

  override listeners(event?: EventName | EventNamespace): ListenerFn[] {
    const theirs = super.listeners(event);
    if (event === undefined) {
      const all = [...theirs];
      for (const task of this.tasks.values()) for (const list of Object.values(task.lists)) if (list) all.push(...list);
      return all;
    }
    const own = this.ownListeners(event);
    return own ? [...own, ...theirs] : theirs;
  }

  override listenerCount(event?: EventName | EventNamespace): number {
    const theirs = super.listeners(event).length;
    if (event === undefined) return theirs + this.taskListenerCount;
    return theirs + (this.ownListeners(event)?.length ?? 0);
  }

  override hasListeners(event?: string): boolean {
    if (event === undefined ? this.taskListenerCount > 0 : this.ownListeners(event) !== undefined) return true;
    return super.hasListeners(event).valueOf();
  }

  override eventNames(nsAsArray?: boolean): (EventName | EventNamespace)[] {
    const names = super.eventNames(nsAsArray);
    const seen = new Set(names);
    for (const task of this.tasks.values()) {
      for (const kind of Object.keys(task.lists) as TaskTopicKind[]) {
        const name = task.names[kind];
        if (task.lists[kind] && name !== undefined && !seen.has(name)) names.push(name);
      }
    }
    return names;
  }

  /** Removes the listener as EventEmitter2 does, a bus subscriber of a task topic too (as it would be one of its listeners). */
  override off(event: EventName | EventNamespace, listener: ListenerFn): this {
    this.offTaskTopicListener(event, listener);
    return super.off(event, listener);
  }

  // EventEmitter2's removeListener is its `off` function itself, not a call to `this.off`.
  override removeListener(event: EventName | EventNamespace, listener: ListenerFn): this {
    return this.off(event, listener);
  }

  override removeAllListeners(event?: EventName | EventNamespace): this {
    if (event === undefined) {
      this.tasks.clear();
      this.taskListenerCount = 0;
    } else {
      const topic = parseTaskTopic(event);
      const task = topic && this.tasks.get(topic.correlationId);
      const list = task && task.lists[topic.kind];
      if (task && list) for (const listener of list) this.offTaskTopic(topic.kind, topic.correlationId, task, listener);
    }
    return super.removeAllListeners(event);
  }

  private offTaskTopic(kind: TaskTopicKind, correlationId: string, task: TaskTopicListeners, listener: ListenerFn): void {
    const list = task.lists[kind];
    const at = list ? list.lastIndexOf(listener) : -1;
    // Removed already (removeAllListeners, or a second call).
    if (!list || at < 0 || this.tasks.get(correlationId) !== task) return;
    task.lists[kind] = list.length === 1 ? undefined : [...list.slice(0, at), ...list.slice(at + 1)];
    task.count -= 1;
    this.taskListenerCount -= 1;
    if (task.count === 0) this.tasks.delete(correlationId);
  }

  private offTaskTopicListener(event: EventName | EventNamespace, listener: ListenerFn): void {
    const topic = this.taskListenerCount > 0 ? parseTaskTopic(event) : undefined;
    const task = topic && this.tasks.get(topic.correlationId);
    if (task) this.offTaskTopic(topic.kind, topic.correlationId, task, listener);
  }

  /** The bus subscribers of `event` when it is a task topic someone listens to here. */
  private ownListeners(event: EventName | EventNamespace | undefined): readonly ListenerFn[] | undefined {
    if (this.taskListenerCount === 0) return undefined;
    const topic = parseTaskTopic(event);
    return topic && this.tasks.get(topic.correlationId)?.lists[topic.kind];
  }
}

/** `agent.skill.{kind}.{correlationId}` back into its parts (undefined for any other event). */
function parseTaskTopic(event: EventName | EventNamespace | undefined): { kind: TaskTopicKind; correlationId: string } | undefined {
  if (typeof event !== 'string' || !event.startsWith(TASK_TOPIC_PREFIX)) return undefined;
  const dot = event.indexOf('.', TASK_TOPIC_PREFIX.length);
  if (dot < 0) return undefined;
  const kind = event.slice(TASK_TOPIC_PREFIX.length, dot);
  return TASK_TOPIC_KINDS.has(kind) ? { kind: kind as TaskTopicKind, correlationId: event.slice(dot + 1) } : undefined;
}
