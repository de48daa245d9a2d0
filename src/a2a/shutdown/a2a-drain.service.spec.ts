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
import { enableGracefulShutdown } from './graceful-shutdown';

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
  afterEach(() => tasks.onModuleDestroy());

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

  it('is quick when nothing runs', async () => {
    const report = await drain.drain(60_000);
    expect(report).toMatchObject({ tasks: 0, finished: 0, cancelled: 0 });
    expect(report.durationMs).toBeLessThan(60_000);
  });
});

describe('enableGracefulShutdown', () => {
  function fakeApp(close: () => Promise<void>) {
    const drain = { drain: jest.fn(() => Promise.resolve({})) };
    return { app: { get: () => drain, close: jest.fn(close) }, drain };
  }

  it('on a signal: drains, closes the app, then exits 0; a second signal exits 1 at once', async () => {
    const { app, drain } = fakeApp(() => Promise.resolve());
    const exit = jest.fn();
    const remove = enableGracefulShutdown(app as never, { signals: ['SIGUSR2'], exit });
    process.emit('SIGUSR2', 'SIGUSR2');
    await new Promise((resolve) => setImmediate(resolve));
    expect(drain.drain).toHaveBeenCalledTimes(1);
    expect(app.close).toHaveBeenCalledTimes(1);
    expect(exit).toHaveBeenCalledWith(0);
    process.emit('SIGUSR2', 'SIGUSR2');
    expect(exit).toHaveBeenLastCalledWith(1);
    remove();
    expect(process.listenerCount('SIGUSR2')).toBe(0);
  });

  it('exits 1 when closing fails', async () => {
    const { app } = fakeApp(() => Promise.reject(new Error('stuck')));
    const exit = jest.fn();
    const remove = enableGracefulShutdown(app as never, { signals: ['SIGUSR2'], exit });
    process.emit('SIGUSR2', 'SIGUSR2');
    await new Promise((resolve) => setImmediate(resolve));
    expect(exit).toHaveBeenCalledWith(1);
    remove();
  });
});
