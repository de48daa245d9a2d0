import { EventEmitter2, type event as EventName, type eventNS as EventNamespace, type ListenerFn } from 'eventemitter2';
import { SKILL_CANCEL_TOPIC, SKILL_REQUEST_TOPIC, taskTopic, type TaskTopicKind } from './runtime.topics';
import { SteadyMap } from '../common/steady-map';

const TASK_TOPIC_PREFIX = 'agent.skill.';
const TASK_TOPIC_KIND_LIST: readonly TaskTopicKind[] = ['progress', 'toolframe', 'answer', 'reply'];
const TASK_TOPIC_KINDS: ReadonlySet<string> = new Set<TaskTopicKind>(TASK_TOPIC_KIND_LIST);

type ByKind<T> = Record<TaskTopicKind, T | undefined>;

/** EventEmitter2's own `_on`, through which its on, once, many and prepend methods all add a listener. */
const EVENT_EMITTER2_ON = (EventEmitter2.prototype as unknown as { _on: (this: EventEmitter2, ...args: unknown[]) => EventEmitter2 })._on;

/** EventEmitter2's own `_onAny`, through which its onAny and prependAny add a listener of every event. */
const EVENT_EMITTER2_ON_ANY = (EventEmitter2.prototype as unknown as { _onAny: (this: EventEmitter2, ...args: unknown[]) => EventEmitter2 })._onAny;

/** A name under the task topics' prefix that is not one of the bus's fixed topics (request, cancel). */
function underTaskPrefix(event: string): boolean {
  return event.startsWith(TASK_TOPIC_PREFIX) && event !== SKILL_REQUEST_TOPIC && event !== SKILL_CANCEL_TOPIC;
}

/**
 * One task's bus subscribers, by topic kind, in fields of this one object (read by a switch, so
 * each read is a plain field load): at 1,000 concurrent tasks every publish reads a different
 * task's, and each object on that path is a likely cache miss. A kind's list is replaced, never
 * changed, so a delivery can go through the one it read without a copy; each is exactly as long
 * as it needs to be (these live as long as the task, so the young generation copies and promotes
 * them). The topics' names are made when first asked for (a listener that throws is logged with
 * its topic's name; listing and emitting by name need them): a publish to the task's own
 * subscribers does not.
 */
export class TaskTopicListeners {
  count = 0;
  progress: readonly ListenerFn[] | undefined = undefined;
  toolframe: readonly ListenerFn[] | undefined = undefined;
  answer: readonly ListenerFn[] | undefined = undefined;
  reply: readonly ListenerFn[] | undefined = undefined;
  private names: ByKind<string> | undefined = undefined;

  constructor(readonly correlationId: string) {}

  /** The kind's subscribers (undefined when none). */
  list(kind: TaskTopicKind): readonly ListenerFn[] | undefined {
    switch (kind) {
      case 'progress':
        return this.progress;
      case 'toolframe':
        return this.toolframe;
      case 'answer':
        return this.answer;
      case 'reply':
        return this.reply;
      default:
        return undefined;
    }
  }

  /** @internal RuntimeEmitter replaces a kind's list here. */
  setList(kind: TaskTopicKind, list: readonly ListenerFn[] | undefined): void {
    switch (kind) {
      case 'progress':
        this.progress = list;
        return;
      case 'toolframe':
        this.toolframe = list;
        return;
      case 'answer':
        this.answer = list;
        return;
      case 'reply':
        this.reply = list;
        return;
    }
  }

  /** The kind's topic name, `agent.skill.{kind}.{correlationId}` (made once). */
  name(kind: TaskTopicKind): string {
    const names = (this.names ??= { progress: undefined, toolframe: undefined, answer: undefined, reply: undefined });
    return (names[kind] ??= taskTopic(kind, this.correlationId));
  }
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
  /** A task's entry goes when its last subscriber does: a Map that each such end emptied would rebuild its table each time. */
  private readonly tasks = new SteadyMap<TaskTopicListeners>();
  private taskListenerCount = 0;
  /**
   * Whether a listener was ever added with on() (or once, many, prepend) to a name under the
   * task topics' prefix. Until one is, no task topic has such a listener, and
   * hasListenersBesideTaskTopics answers without looking the topic up in EventEmitter2's table:
   * a first lookup of a new string there cost ~1.1 µs (V8 internalises it; scratch loop), and
   * each task's four topics are new strings.
   */
  private listenedUnderTaskPrefix = false;
  /** Whether an onAny (or prependAny) listener was ever added: until one is, none hears a task topic. */
  private listenedToAny = false;

  constructor() {
    super({ wildcard: false, maxListeners: 0, ignoreErrors: false });
  }

  /** Adds `listener` to the task topic; returns the function that removes it. */
  onTaskTopic(kind: TaskTopicKind, correlationId: string, listener: ListenerFn): () => void {
    const added = this.addTaskTopicListener(this.taskListeners(correlationId), kind, listener);
    return () => this.offTaskTopic(kind, correlationId, added, listener);
  }

  /**
   * Adds one listener to each of the task's four topics, as four onTaskTopic calls would, and
   * returns the one function that removes them all: a task binds its topics once, and a removal
   * function per topic was four closures more per task.
   */
  onTaskTopics(correlationId: string, listeners: { readonly [K in TaskTopicKind]: ListenerFn }): () => void {
    const task = this.taskListeners(correlationId);
    const { progress, toolframe, answer, reply } = listeners;
    this.addTaskTopicListener(task, 'progress', progress);
    this.addTaskTopicListener(task, 'toolframe', toolframe);
    this.addTaskTopicListener(task, 'answer', answer);
    this.addTaskTopicListener(task, 'reply', reply);
    return () => {
      this.offTaskTopic('progress', correlationId, task, progress);
      this.offTaskTopic('toolframe', correlationId, task, toolframe);
      this.offTaskTopic('answer', correlationId, task, answer);
      this.offTaskTopic('reply', correlationId, task, reply);
    };
  }

  private taskListeners(correlationId: string): TaskTopicListeners {
    let task = this.tasks.get(correlationId);
    if (!task) this.tasks.set(correlationId, (task = new TaskTopicListeners(correlationId)));
    return task;
  }

  private addTaskTopicListener(task: TaskTopicListeners, kind: TaskTopicKind, listener: ListenerFn): TaskTopicListeners {
    const list = task.list(kind);
    task.setList(kind, list ? [...list, listener] : [listener]);
    task.count += 1;
    this.taskListenerCount += 1;
    return task;
  }

  /**
   * The task's subscribers while someone listens to one of its topics here (read-only). The
   * same object as long as its count is above zero: a publisher may keep it until then.
   */
  taskTopicListeners(correlationId: string): TaskTopicListeners | undefined {
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

  /**
   * Whether nothing but the task topics' own subscribers hears any task topic (no on() under the
   * prefix, no onAny listener): then a publish calls the task's subscribers and is done, with no
   * topic name compared and no empty list made per publish (EventEmitter2's listenersAny).
   */
  onlyTaskSubscribersHearTaskTopics(): boolean {
    return !this.listenedUnderTaskPrefix && (!this.listenedToAny || this.listenersAny().length === 0);
  }

  /** EventEmitter2 adds each onAny (and prependAny) listener here. */
  _onAny(...args: unknown[]): this {
    this.listenedToAny = true;
    return EVENT_EMITTER2_ON_ANY.apply(this, args) as this;
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
      for (const task of this.tasks.values()) for (const kind of TASK_TOPIC_KIND_LIST) all.push(...(task.list(kind) ?? []));
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
      for (const kind of TASK_TOPIC_KIND_LIST) {
        if (!task.list(kind)) continue;
        const name = task.name(kind);
        if (!seen.has(name)) names.push(name);
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
      // At zero, a publisher that kept one of them looks its task up again.
      for (const task of this.tasks.values()) task.count = 0;
      this.tasks.clear();
      this.taskListenerCount = 0;
    } else {
      const topic = parseTaskTopic(event);
      const task = topic && this.tasks.get(topic.correlationId);
      const list = task && task.list(topic.kind);
      if (task && list) for (const listener of list) this.offTaskTopic(topic.kind, topic.correlationId, task, listener);
    }
    return super.removeAllListeners(event);
  }

  private offTaskTopic(kind: TaskTopicKind, correlationId: string, task: TaskTopicListeners, listener: ListenerFn): void {
    const list = task.list(kind);
    const at = list ? list.lastIndexOf(listener) : -1;
    // Removed already (removeAllListeners, or a second call).
    if (!list || at < 0 || this.tasks.get(correlationId) !== task) return;
    task.setList(kind, list.length === 1 ? undefined : [...list.slice(0, at), ...list.slice(at + 1)]);
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
    return topic && this.tasks.get(topic.correlationId)?.list(topic.kind);
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
