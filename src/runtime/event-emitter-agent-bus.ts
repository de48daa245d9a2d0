import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Observable } from 'rxjs';
import { AgentBus } from './agent-bus';
import {
  SKILL_CANCEL_TOPIC,
  SKILL_REQUEST_TOPIC,
  taskTopic,
  type SkillCancel,
  type SkillRequest,
  type TaskTopicKind,
  type TaskTopicPayloads,
} from './runtime.topics';

/** The default AgentBus: in-process topics on the @nestjs/event-emitter EventEmitter2. */
@Injectable()
export class EventEmitterAgentBus extends AgentBus {
  constructor(private readonly emitter: EventEmitter2) {
    super();
  }

  publishRequest(request: SkillRequest): void {
    this.emitter.emit(SKILL_REQUEST_TOPIC, request);
  }

  requests$(): Observable<SkillRequest> {
    return this.on$<SkillRequest>(SKILL_REQUEST_TOPIC);
  }

  publishCancel(cancel: SkillCancel): void {
    this.emitter.emit(SKILL_CANCEL_TOPIC, cancel);
  }

  cancels$(): Observable<SkillCancel> {
    return this.on$<SkillCancel>(SKILL_CANCEL_TOPIC);
  }

  publish<K extends TaskTopicKind>(kind: K, correlationId: string, payload: TaskTopicPayloads[K]): void {
    this.emitter.emit(taskTopic(kind, correlationId), payload);
  }

  topic$<K extends TaskTopicKind>(kind: K, correlationId: string): Observable<TaskTopicPayloads[K]> {
    return this.on$<TaskTopicPayloads[K]>(taskTopic(kind, correlationId));
  }

  listenerCount(): number {
    return this.emitter.listenerCount();
  }

  private on$<T>(topic: string): Observable<T> {
    return new Observable<T>((subscriber) => {
      const listener = (payload: T): void => subscriber.next(payload);
      this.emitter.on(topic, listener);
      return () => {
        this.emitter.off(topic, listener);
      };
    });
  }
}
