import { Subscription, type Observable } from 'rxjs';
import type { SkillCancel, SkillRequest, TaskTopicKind, TaskTopicPayloads } from './runtime.topics';

/** One handler per task topic (see AgentBus.listenTask). */
export type TaskTopicHandlers = { [K in TaskTopicKind]: (payload: TaskTopicPayloads[K]) => void };

/** Publishes on one task's topics (see AgentBus.taskPublisher). */
export interface TaskPublisher {
  publish<K extends TaskTopicKind>(kind: K, payload: TaskTopicPayloads[K]): void;
}

/**
 * The seam between the A2A front and the agent workers. The default implementation rides
 * @nestjs/event-emitter in-process; another transport replaces it by DI alone
 * (`{ provide: AgentBus, useClass: MyBrokerBus }`).
 *
 * Delivery is in publish order per topic. A front must subscribe to a task's topics before
 * it publishes the request, since an in-process run may emit its first event synchronously.
 */
export abstract class AgentBus {
  abstract publishRequest(request: SkillRequest): void;
  abstract requests$(): Observable<SkillRequest>;

  abstract publishCancel(cancel: SkillCancel): void;
  abstract cancels$(): Observable<SkillCancel>;

  abstract publish<K extends TaskTopicKind>(kind: K, correlationId: string, payload: TaskTopicPayloads[K]): void;

  /**
   * A publisher of one task's topics, for whoever publishes all of a task's events (the
   * runtime's run): its `publish(kind, payload)` is `publish(kind, correlationId, payload)`. This
   * default does exactly that; a transport may keep there what it would look up per publish (the
   * default bus keeps the task's subscribers).
   */
  taskPublisher(correlationId: string): TaskPublisher {
    return publishingThrough(this, correlationId);
  }

  /** Adds exactly one listener on subscribe and removes it on unsubscribe. */
  abstract topic$<K extends TaskTopicKind>(kind: K, correlationId: string): Observable<TaskTopicPayloads[K]>;

  /**
   * Hands a task's four topics to their handlers until the returned function is called: one
   * listener per topic, as topic$ adds. This default subscribes to each topic$; a transport may
   * override it to listen without an Observable and RxJS subscriber per topic, as the default bus
   * does (a task binds its topics once, and those objects were most of what binding cost).
   */
  listenTask(correlationId: string, handlers: TaskTopicHandlers): () => void {
    const subscription = new Subscription();
    subscription.add(this.topic$('progress', correlationId).subscribe(handlers.progress));
    subscription.add(this.topic$('toolframe', correlationId).subscribe(handlers.toolframe));
    subscription.add(this.topic$('answer', correlationId).subscribe(handlers.answer));
    subscription.add(this.topic$('reply', correlationId).subscribe(handlers.reply));
    return () => subscription.unsubscribe();
  }

  /** Live listeners on the bus (all topics), for leak checks and metrics. */
  abstract listenerCount(): number;
}

/**
 * A task's publisher that calls `bus.publish` for every event: AgentBus.taskPublisher's default,
 * and what the runtime uses for a bus that has no taskPublisher (one written to AgentBus's shape
 * before it had one, rather than extending it).
 */
export function publishingThrough(bus: Pick<AgentBus, 'publish'>, correlationId: string): TaskPublisher {
  return { publish: (kind, payload) => bus.publish(kind, correlationId, payload) };
}
