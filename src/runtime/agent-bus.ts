import type { Observable } from 'rxjs';
import type { SkillCancel, SkillRequest, TaskTopicKind, TaskTopicPayloads } from './runtime.topics';

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
  /** Adds exactly one listener on subscribe and removes it on unsubscribe. */
  abstract topic$<K extends TaskTopicKind>(kind: K, correlationId: string): Observable<TaskTopicPayloads[K]>;

  /** Live listeners on the bus (all topics), for leak checks and metrics. */
  abstract listenerCount(): number;
}
