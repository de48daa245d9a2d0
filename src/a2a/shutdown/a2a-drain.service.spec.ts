import { EventEmitter2 } from '@nestjs/event-emitter';
import { Role, TaskState, type Message } from '@a2a-js/sdk';
import { lastValueFrom, toArray } from 'rxjs';
import { AgentBus, EventEmitterAgentBus } from '../../runtime';
import { A2aHttpError } from '../a2a-errors';
import { resolveA2aConfig } from '../a2a.module-definition';
import { TaskService } from '../task.service';
import { InMemoryTaskStore } from '../store/in-memory-task-store';
import { A2aDrainService } from './a2a-drain.service';
import { DrainGuard } from './drain.guard';

function message(text: string): Message {
  return {
    messageId: `m-${text}`,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

describe('A2aDrainService', () => {
  let bus: AgentBus;
  let tasks: TaskService;
  let drain: A2aDrainService;

  beforeEach(() => {
    bus = new EventEmitterAgentBus(new EventEmitter2({ wildcard: false }));
    const config = resolveA2aConfig({ drainTimeoutMs: 200, cancelTimeoutMs: 50 }, {});
    tasks = new TaskService(bus, config, new InMemoryTaskStore(config));
    drain = new A2aDrainService(tasks, config);
  });
  afterEach(() => tasks.close());

  const start = (text: string) => tasks.start({ message: message(text), text, caller: undefined });

  it('refuses new requests from the first moment, with 503 and Retry-After', async () => {
    const guard = new DrainGuard(drain);
    expect(guard.canActivate()).toBe(true);
    const drained = drain.drain();
    expect(drain.draining).toBe(true);
    let refusal: unknown;
    try {
      guard.canActivate();
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(A2aHttpError);
    expect(refusal).toMatchObject({ httpStatus: 503, rpcStatus: 'UNAVAILABLE', jsonRpcCode: -32603, headers: { 'Retry-After': '5' } });
    await drained;
  });

  it('lets running tasks finish within the drain time, cancels the rest, and ends every stream with the final event', async () => {
    const quick = await start('quick');
    const slow = await start('slow');
    const streams = [quick, slow].map((task) => lastValueFrom(tasks.follow(task, { toolFrames: true }).pipe(toArray())));
    bus.publish('toolframe', slow.id, { frame: { toolCallId: 'c', name: 'slow_task', phase: 'started' } });
    setTimeout(() => bus.publish('reply', quick.id, { status: 'completed', text: 'done' }), 20);
    const report = await drain.drain();
    expect(report).toMatchObject({ tasks: 2, finished: 1, cancelled: 1, openStreams: 0 });
    expect(report.durationMs).toBeGreaterThanOrEqual(200);
    expect(quick.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(slow.state).toBe(TaskState.TASK_STATE_CANCELED);
    const [quickEvents, slowEvents] = await Promise.all(streams);
    expect(quickEvents[quickEvents.length - 1].terminal).toBe(true);
    expect(slowEvents.map((e) => e.response.payload?.$case)).toEqual(['task', 'artifactUpdate', 'artifactUpdate', 'statusUpdate']);
    expect(slowEvents[2].json).toContain('"phase":"failed","error":"cancelled"');
    expect(slowEvents[3].json).toContain('the server is shutting down');
    expect(drain.drain()).toBe(drain.drain());
  });

  it('on a signal, Nest\'s beforeApplicationShutdown drains before the server closes', async () => {
    const slow = await start('slow');
    const stream = lastValueFrom(tasks.follow(slow, { toolFrames: true }).pipe(toArray()));
    setTimeout(() => bus.publish('reply', slow.id, { status: 'completed', text: 'done' }), 20);
    await drain.beforeApplicationShutdown('SIGTERM');
    expect(drain.draining).toBe(true);
    expect(slow.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await stream).pop()?.terminal).toBe(true);
  });

  it('on a plain close (no signal), does not wait: running tasks are cancelled at once', async () => {
    const slow = await start('slow');
    const stream = lastValueFrom(tasks.follow(slow, { toolFrames: true }).pipe(toArray()));
    await drain.beforeApplicationShutdown();
    expect(drain.draining).toBe(false);
    const events = await stream;
    expect(events[events.length - 1].json).toContain('the server is shutting down');
  });

  it('is quick when nothing runs', async () => {
    const report = await drain.drain(60_000);
    expect(report).toMatchObject({ tasks: 0, finished: 0, cancelled: 0 });
    expect(report.durationMs).toBeLessThan(60_000);
  });
});

