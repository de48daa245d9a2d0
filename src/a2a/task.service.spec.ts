import { Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Role, TaskState, type Message } from '@a2a-js/sdk';
import { lastValueFrom, toArray } from 'rxjs';
import { AgentBus, EventEmitterAgentBus, type SkillCancel, type SkillRequest } from '../runtime';
import { resolveA2aConfig, type A2aModuleOptions } from './a2a.module-definition';
import { JsonRpcRequestError } from './a2a-errors';
import { newTaskId, TaskService } from './task.service';
import { InMemoryTaskStore } from './store/in-memory-task-store';
import type { TaskRecord } from './task-record';

function message(text: string, contextId = ''): Message {
  return {
    messageId: `m-${text}`,
    contextId,
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

describe('TaskService', () => {
  let bus: AgentBus;
  let service: TaskService;
  let requests: SkillRequest[];
  let cancels: SkillCancel[];

  function setUp(options: A2aModuleOptions = {}): void {
    bus = new EventEmitterAgentBus(new EventEmitter2({ wildcard: false }));
    const config = resolveA2aConfig(options);
    service = new TaskService(bus, config, new InMemoryTaskStore(config));
    requests = [];
    cancels = [];
    bus.requests$().subscribe((r) => requests.push(r));
    bus.cancels$().subscribe((c) => cancels.push(c));
  }

  const start = async (text: string, caller?: string, contextId = '') =>
    (await service.start({ message: message(text, contextId), text, caller })) as TaskRecord;

  const streaming = async (...args: Parameters<TaskService['startStreaming']>) => {
    const started = await service.startStreaming(...args);
    return { ...started, task: started.task as TaskRecord };
  };

  beforeEach(() => setUp());
  afterEach(() => service.close());

  it('subscribes the task topics before it publishes the request, so a synchronous run is seen whole', async () => {
    bus.requests$().subscribe((r) => {
      bus.publish('progress', r.correlationId, { text: 'thinking', step: 0 });
      bus.publish('toolframe', r.correlationId, { frame: { toolCallId: 'a', name: 'calc', phase: 'started' } });
      bus.publish('reply', r.correlationId, { status: 'completed', text: '42' });
    });
    const task = await start('what is 6 x 7');
    expect(task.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // task, thinking, started, failed (closed by the answer), answer, completed
    expect(task.log.lastSeq).toBe(6);
    expect(requests[0]).toMatchObject({ correlationId: task.id, message: 'what is 6 x 7', contextId: task.contextId });
  });

  it('holds three topic subscriptions per live task and releases them when it settles', async () => {
    const baseline = bus.listenerCount();
    const a = await start('a');
    const b = await start('b');
    expect(service.metrics()).toMatchObject({ liveTasks: 2, topicSubscriptions: 8 });
    expect(bus.listenerCount()).toBe(baseline + 8);
    bus.publish('reply', a.id, { status: 'completed', text: 'A' });
    bus.publish('reply', b.id, { status: 'failed', error: 'B failed' });
    expect(service.metrics()).toMatchObject({ tasks: 2, liveTasks: 0, topicSubscriptions: 0 });
    expect(bus.listenerCount()).toBe(baseline);
    expect(b.state).toBe(TaskState.TASK_STATE_FAILED);
  });

  it('keeps tasks apart: a task only takes the events of its own topics', async () => {
    const a = await start('a');
    const b = await start('b');
    bus.publish('toolframe', a.id, { frame: { toolCallId: 'x', name: 'weather', phase: 'started' } });
    bus.publish('progress', b.id, { text: 'b is thinking', step: 0 });
    expect(a.log.lastSeq).toBe(2);
    expect(b.log.lastSeq).toBe(2);
    expect(a.log.get(2)?.isToolFrame).toBe(true);
    expect(b.log.get(2)?.isToolFrame).toBe(false);
  });

  it('rejects malformed bus payloads with a log line and a count, never a crash', async () => {
    const task = await start('a');
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    bus.publish('toolframe', task.id, { frame: { toolCallId: '', name: 'x', phase: 'started' } });
    bus.publish('toolframe', task.id, { frame: { toolCallId: 'a', name: 'x', phase: 'running' } } as never);
    bus.publish('progress', task.id, {} as never);
    bus.publish('reply', task.id, { status: 'weird' } as never);
    expect(service.metrics().rejectedFrames).toBe(2);
    expect(warn).toHaveBeenCalledTimes(4);
    expect(task.log.lastSeq).toBe(1);
    expect(task.isTerminal).toBe(false);
  });

  it('fails the task when the request cannot be dispatched', async () => {
    jest.spyOn(bus, 'publishRequest').mockImplementation(() => {
      throw new Error('broker down');
    });
    const task = await start('a');
    expect(task.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(task.status.message?.parts[0].content).toEqual({ $case: 'text', value: 'the run could not be dispatched: broker down' });
  });

  it('passes the earlier turns of the same context to the run', async () => {
    const first = await start('my name is Ada');
    bus.publish('reply', first.id, { status: 'completed', text: 'Hello Ada' });
    await start('what is my name?', undefined, first.contextId);
    expect(requests[1].contextId).toBe(first.contextId);
    expect(requests[1].history).toEqual([
      { role: 'user', text: 'my name is Ada' },
      { role: 'agent', text: 'Hello Ada' },
    ]);
  });

  it("never hands one caller's turns to another caller who names the same context", async () => {
    const first = await start('my key is hunter2', 'caller-a');
    bus.publish('reply', first.id, { status: 'completed', text: 'noted' });
    await start('what is my key?', 'caller-b', first.contextId);
    expect(requests[1].history).toEqual([]);
    await start('and mine?', 'caller-a', first.contextId);
    expect(requests[2].history).toEqual([
      { role: 'user', text: 'my key is hunter2' },
      { role: 'agent', text: 'noted' },
    ]);
  });

  it('refuses a message past maxHistoryLength in its conversation, naming the limit, and counts per caller', async () => {
    setUp({ maxHistoryLength: 2 });
    const first = await start('one', 'a');
    await start('two', 'a', first.contextId);
    await expect(start('three', 'a', first.contextId)).rejects.toThrow(JsonRpcRequestError);
    await expect(start('three', 'a', first.contextId)).rejects.toThrow(`already holds 2 messages, the limit (maxHistoryLength)`);
    expect((await start('other caller', 'b', first.contextId)).contextId).toBe(first.contextId);
    expect(service.metrics().tasks).toBe(3);
  });

  describe('what the bus sends is capped and scrubbed (maxFrameFieldBytes, credentials)', () => {
    const key = 'sk-test-0123456789abcdef';

    it('caps each frame field and narration line, and redacts secret-named keys', async () => {
      setUp({ maxFrameFieldBytes: 300 });
      const task = await start('a');
      bus.publish('progress', task.id, { text: 'y'.repeat(5_000), step: 1 });
      bus.publish('toolframe', task.id, { frame: { toolCallId: 'x', name: 'fetch', phase: 'started', args: { page: 'x'.repeat(5_000), password: 'pw' } } });
      const line = task.snapshot().history.length; // history keeps only the user message
      expect(line).toBe(1);
      const narration = JSON.parse(task.log.get(2)!.json) as { statusUpdate: { status: { message: { parts: { text: string }[] } } } };
      expect(Buffer.byteLength(JSON.stringify(narration.statusUpdate.status.message.parts[0].text))).toBeLessThanOrEqual(300);
      const frame = task.log.get(3)!.json;
      expect(frame).toContain('[truncated: 5000 bytes]');
      expect(frame).toContain('"password":"[redacted]"');
      expect(frame).not.toContain('"pw"');
    });

    it('keeps what a custom bus sends that JSON cannot carry (BigInt, cycles) as plain data', async () => {
      const task = await start('a');
      const cyclic: Record<string, unknown> = { n: 10n };
      cyclic.self = cyclic;
      bus.publish('toolframe', task.id, { frame: { toolCallId: 'x', name: 't', phase: 'completed', result: cyclic } });
      expect(JSON.parse(task.log.get(2)!.json)).toMatchObject({ artifactUpdate: { artifact: { parts: [{ data: { result: { n: '10', self: '[circular]' } } }] } } });
    });

    it("scrubs the server's credentials from the message, frames, narration and answer", async () => {
      setUp({ auth: { apiKeys: [key] } });
      const task = (await service.start({ message: message(`use ${key}`), text: `use ${key}`, caller: 'a' })) as TaskRecord;
      expect(requests[0].message).toBe('use [redacted]');
      bus.publish('progress', task.id, { text: `trying ${key}`, step: 1 });
      bus.publish('toolframe', task.id, { frame: { toolCallId: 'x', name: 'echo', phase: 'started', args: { note: `key=${key}`, [key]: 1 } } });
      bus.publish('toolframe', task.id, { frame: { toolCallId: 'x', name: 'echo', phase: 'failed', error: `rejected ${key}` } });
      bus.publish('reply', task.id, { status: 'completed', text: `done with ${key}` });
      const everything = [1, 2, 3, 4, 5, 6].map((seq) => task.log.get(seq)?.json).join('\n') + JSON.stringify(task.snapshot());
      expect(everything).not.toContain(key);
      expect(everything).toContain('key=[redacted]');
    });
    it("scrubs the server's credentials from a streamed answer, a key split across its pieces too", async () => {
      setUp({ auth: { apiKeys: [key] } });
      const task = await start('a');
      const answer = (): string => {
        const part = task.snapshot().artifacts.find((artifact) => artifact.artifactId === 'answer')?.parts[0]?.content;
        return part?.$case === 'text' ? part.value : '';
      };
      // The first piece is an append (no answer began before it): it is scrubbed all the same.
      bus.publish('answer', task.id, { text: `first ${key.slice(0, 10)}`, append: true, last: false });
      bus.publish('answer', task.id, { text: `${key.slice(10)} then`, append: true, last: false });
      expect(answer()).toBe('first [redacted] then');
      // A new answer starts a new scrub: what the last one held back does not leak into it.
      bus.publish('answer', task.id, { text: `again ${key.slice(0, 10)}`, append: true, last: false });
      bus.publish('answer', task.id, { text: 'fresh', append: false, last: false });
      bus.publish('answer', task.id, { text: ` ${key}`, append: true, last: true });
      expect(answer()).toBe('fresh [redacted]');
      const everything = [...Array(task.lastSeq).keys()].map((i) => task.log.get(i + 1)?.json).join('\n');
      expect(everything).not.toContain(key);
      expect(everything).not.toContain(key.slice(0, 10));
    });
  });

  it('lists the running tasks (what a drain waits for)', async () => {
    const a = await start('a');
    const b = await start('b');
    bus.publish('reply', a.id, { status: 'completed', text: 'done' });
    expect(service.running()).toEqual([b]);
  });

  describe('limits on live tasks and the run deadline', () => {
    it('refuses a task past maxLiveTasksPerCaller (429) and past maxLiveTasks (503), each with Retry-After; an ended task frees its slot', async () => {
      setUp({ maxLiveTasks: 3, maxLiveTasksPerCaller: 2 });
      const a1 = await start('a1', 'alice');
      await start('a2', 'alice');
      await expect(start('a3', 'alice')).rejects.toMatchObject({
        httpStatus: 429,
        rpcStatus: 'RESOURCE_EXHAUSTED',
        headers: { 'Retry-After': '5' },
        message: expect.stringContaining('the limit per caller (maxLiveTasksPerCaller)'),
      });
      await start('b1', 'bob');
      await expect(start('b2', 'bob')).rejects.toMatchObject({
        httpStatus: 503,
        rpcStatus: 'UNAVAILABLE',
        headers: { 'Retry-After': '5' },
        message: expect.stringContaining('its limit (maxLiveTasks)'),
      });
      bus.publish('reply', a1.id, { status: 'completed', text: 'done' });
      expect((await start('b2', 'bob')).state).toBe(TaskState.TASK_STATE_SUBMITTED);
      expect(requests).toHaveLength(4);
    });

    it('gives back the claim of a send it refuses: a retry of that message is a first send once there is room', async () => {
      setUp({ maxLiveTasksPerCaller: 1 });
      const claimed = async (text: string) => {
        const send = await service.claim({ message: message(text), text, caller: 'alice' });
        if (send.repeated) throw new Error(`the message of ${text} is claimed already`);
        return send.input;
      };
      const first = (await service.start(await claimed('first'))) as TaskRecord;
      const refused = await claimed('second');
      await expect(service.start(refused)).rejects.toMatchObject({ httpStatus: 429 });
      bus.publish('reply', first.id, { status: 'completed', text: 'done' });
      // Claimed at once as a new message (a claim kept for a task never made answered 503 after waiting).
      const retry = await service.claim({ message: message('second'), text: 'second', caller: 'alice' });
      if (retry.repeated) throw new Error('the refused send left its message claimed');
      expect(retry.input.taskId).not.toBe(refused.taskId);
      expect((await service.start(retry.input)).state).toBe(TaskState.TASK_STATE_SUBMITTED);
    });

    it('starts a claimed send with its message whole, stamped with the claimed task id and a new context, and its metadata', async () => {
      const sent: Message = { ...message('whole'), metadata: { from: 'client' }, extensions: ['urn:x-ext'], referenceTaskIds: ['earlier-task'] };
      const send = await service.claim({ message: sent, text: 'whole', caller: 'alice', metadata: { run: 'meta' } });
      if (send.repeated) throw new Error('a new message was taken for a repeat');
      const { task } = await streaming(send.input, { toolFrames: true });
      expect(task.id).toBe(send.input.taskId);
      expect(task.contextId).not.toBe('');
      expect(task.snapshot().history).toEqual([{ ...sent, taskId: task.id, contextId: task.contextId }]);
      expect(requests[0]).toMatchObject({ correlationId: task.id, contextId: task.contextId, message: 'whole', metadata: { run: 'meta' } });
      // The client's message object itself is not stamped.
      expect(sent.taskId).toBe('');
    });

    it('counts concurrent admissions, so a burst cannot slip past the limit', async () => {
      setUp({ maxLiveTasks: 5 });
      const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => start(`t${i}`)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
      expect(service.metrics().liveTasks).toBe(5);
    });

    it('fails a run past runDeadlineMs, closing its open tools, and asks the runtime to stop it', async () => {
      jest.useFakeTimers();
      try {
        setUp({ runDeadlineMs: 1_000 });
        const task = await start('never answers');
        bus.publish('toolframe', task.id, { frame: { toolCallId: 't', name: 'stuck', phase: 'started' } });
        jest.advanceTimersByTime(999);
        expect(task.isTerminal).toBe(false);
        jest.advanceTimersByTime(1);
        expect(task.state).toBe(TaskState.TASK_STATE_FAILED);
        expect(task.status.message?.parts[0].content).toEqual({ $case: 'text', value: 'the run did not finish within 1000 ms (runDeadlineMs)' });
        expect(JSON.parse(task.log.get(3)!.json).artifactUpdate.artifact.parts[0].data).toMatchObject({ phase: 'failed', toolCallId: 't' });
        expect(cancels).toEqual([{ correlationId: task.id, reason: 'the run did not finish within 1000 ms (runDeadlineMs)' }]);
        expect(service.metrics().liveTasks).toBe(0);
      } finally {
        jest.useRealTimers();
      }
    });
  });

  describe('run deadlines', () => {
    it('holds every live task to runDeadlineMs with one timer, failing each at its own time', async () => {
      jest.useFakeTimers();
      try {
        setUp({ runDeadlineMs: 1_000 });
        const first = await start('never answers');
        const timers = jest.getTimerCount();
        jest.advanceTimersByTime(300);
        const later = [await start('never answers either'), await start('nor this one')];
        expect(jest.getTimerCount()).toBe(timers);
        bus.publish('reply', later[1].id, { status: 'completed', text: 'done after all' });
        jest.advanceTimersByTime(700);
        expect(first.state).toBe(TaskState.TASK_STATE_FAILED);
        expect(later.map((task) => task.isTerminal)).toEqual([false, true]);
        jest.advanceTimersByTime(300);
        expect(later[0].state).toBe(TaskState.TASK_STATE_FAILED);
        expect(later[1].state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(cancels.map((c) => c.correlationId)).toEqual([first.id, later[0].id]);
      } finally {
        jest.useRealTimers();
      }
    });
  });

  describe('cancel', () => {
    it('asks the runtime to cancel and resolves once it answers', async () => {
      const task = await start('a');
      bus.publish('toolframe', task.id, { frame: { toolCallId: 't', name: 'slow', phase: 'started' } });
      bus.cancels$().subscribe((c) => {
        bus.publish('toolframe', c.correlationId, { frame: { toolCallId: 't', name: 'slow', phase: 'failed', error: 'cancelled' } });
        bus.publish('reply', c.correlationId, { status: 'cancelled', reason: c.reason ?? '' });
      });
      await service.cancel(task, 'user asked');
      expect(cancels).toEqual([{ correlationId: task.id, reason: 'user asked' }]);
      expect(task.state).toBe(TaskState.TASK_STATE_CANCELED);
    });

    it('settles the task as cancelled itself, closing open tools, when the runtime does not answer', async () => {
      setUp({ cancelTimeoutMs: 20 });
      const task = await start('a');
      bus.publish('toolframe', task.id, { frame: { toolCallId: 't', name: 'slow', phase: 'started' } });
      await service.cancel(task, 'user asked');
      expect(task.state).toBe(TaskState.TASK_STATE_CANCELED);
      const frames = [...Array(task.log.lastSeq).keys()].map((i) => task.log.get(i + 1)!).filter((e) => e.isToolFrame);
      expect(JSON.parse(frames[1].json).artifactUpdate.artifact.parts[0].data).toMatchObject({ phase: 'failed', error: 'cancelled' });
      expect(service.metrics().topicSubscriptions).toBe(0);
    });

    it('publishes one cancel however often it is asked', async () => {
      setUp({ cancelTimeoutMs: 10 });
      const task = await start('a');
      await Promise.all([service.cancel(task, 'x'), service.cancel(task, 'y')]);
      expect(cancels).toHaveLength(1);
    });
  });

  describe('find and list', () => {
    it('shows a task only to the caller that created it (task-not-found for others)', async () => {
      const mine = await start('a', 'alice');
      expect(await service.find(mine.id, 'alice')).toBe(mine);
      expect(await service.find(mine.id, 'bob')).toBeUndefined();
      expect(await service.find(mine.id, undefined)).toBeUndefined();
      expect((await await service.list('bob', { pageSize: 10 })).tasks).toEqual([]);
    });

    it('lists the most recently updated first, filters, and pages with a cursor', async () => {
      jest.useFakeTimers({ now: 1_000 });
      try {
        const tasks: TaskRecord[] = [];
        for (const t of ['a', 'b', 'c', 'd', 'e']) {
          jest.advanceTimersByTime(10);
          tasks.push(await start(t, undefined, t === 'e' ? 'ctx-e' : ''));
        }
        jest.advanceTimersByTime(10);
        bus.publish('reply', tasks[0].id, { status: 'completed', text: 'A' }); // a is now the most recent
        const ids = (page: { tasks: { id: string }[] }) => page.tasks.map((t) => t.id);
        const first = await service.list(undefined, { pageSize: 2 });
        expect(ids(first)).toEqual([tasks[0].id, tasks[4].id]);
        expect(first.totalSize).toBe(5);
        const second = await service.list(undefined, { pageSize: 2, pageToken: first.nextPageToken });
        expect(ids(second)).toEqual([tasks[3].id, tasks[2].id]);
        const third = await service.list(undefined, { pageSize: 2, pageToken: second.nextPageToken });
        expect(ids(third)).toEqual([tasks[1].id]);
        expect(third.nextPageToken).toBe('');
        expect(ids(await service.list(undefined, { pageSize: 10, state: TaskState.TASK_STATE_COMPLETED }))).toEqual([tasks[0].id]);
        expect(ids(await service.list(undefined, { pageSize: 10, contextId: 'ctx-e' }))).toEqual([tasks[4].id]);
        expect(ids(await service.list(undefined, { pageSize: 10, statusAfter: 1_040 }))).toEqual([tasks[0].id, tasks[4].id]);
      } finally {
        jest.useRealTimers();
      }
    });

    it('rejects a page token it did not issue, naming the field', async () => {
      await expect(service.list(undefined, { pageSize: 2, pageToken: 'bogus' })).rejects.toThrow(JsonRpcRequestError);
      await expect(service.list(undefined, { pageSize: 2, pageToken: 'bogus' })).rejects.toThrow(/pageToken/);
    });
  });

  it('forgets a finished task after the TTL, and only a finished one', async () => {
    jest.useFakeTimers();
    try {
      setUp({ taskTtlMs: 1_000 });
      const done = await start('a');
      const running = await start('b');
      bus.publish('reply', done.id, { status: 'completed', text: 'A' });
      jest.advanceTimersByTime(999);
      expect(await service.find(done.id, undefined)).toBe(done);
      jest.advanceTimersByTime(1);
      expect(await service.find(done.id, undefined)).toBeUndefined();
      expect(await service.find(running.id, undefined)).toBe(running);
      expect(service.metrics().tasks).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

  describe('startStreaming', () => {
    const burst = (count: number) =>
      bus.requests$().subscribe((r) => {
        for (let i = 0; i < count; i++) bus.publish('progress', r.correlationId, { text: `p${i}`, step: i });
        bus.publish('reply', r.correlationId, { status: 'completed', text: 'done' });
      });

    it('gives the stream that started the task every event, also a burst past the cap before it subscribes', async () => {
      setUp({ maxEventsPerTask: 5 });
      burst(6);
      const { task, events } = await streaming({ message: message('burst'), text: 'burst', caller: undefined }, { toolFrames: true });
      expect(task.log.size).toBe(9); // held past the cap until the stream attaches
      const seqs = (await lastValueFrom(events.pipe(toArray()))).map((e) => e.seq);
      expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(task.log.size).toBe(5);
    });

    it('starts that stream with a Task snapshot when the burst overflowed even twice the cap', async () => {
      setUp({ maxEventsPerTask: 5 });
      burst(20);
      const { events } = await streaming({ message: message('burst'), text: 'burst', caller: undefined }, { toolFrames: true });
      const all = await lastValueFrom(events.pipe(toArray()));
      expect(all.map((e) => e.response.payload?.$case)).toEqual(['task']);
      expect(all[0].seq).toBe(23);
      expect(all[0].response.payload?.$case === 'task' && all[0].response.payload.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });

    it('lets go of the held events when the stream never attaches', async () => {
      setUp({ maxEventsPerTask: 5 });
      const { task, release } = await streaming({ message: message('a'), text: 'a', caller: undefined }, { toolFrames: true });
      for (let i = 0; i < 8; i++) bus.publish('progress', task.id, { text: `p${i}`, step: i });
      expect(task.log.size).toBe(9);
      release();
      expect(task.log.size).toBe(5);
    });

    it('paces a stream: no more than a batch per event-loop turn, and nothing while the consumer is busy', async () => {
      const task = await start('a');
      for (let i = 0; i < 600; i++) bus.publish('progress', task.id, { text: `p${i}`, step: i });
      let busy = false;
      let drained: (() => void) | undefined;
      const got: number[] = [];
      service
        .follow(task, {
          after: 0,
          toolFrames: true,
          pace: { ready: () => !busy, whenReady: (callback) => ((drained = callback), () => (drained = undefined)) },
        })
        .subscribe((e) => got.push(e.seq));
      expect(got).toHaveLength(256); // one batch, then the writer gets the event loop
      await new Promise((resolve) => setImmediate(resolve));
      expect(got).toHaveLength(512);
      busy = true;
      await new Promise((resolve) => setImmediate(resolve));
      expect(got).toHaveLength(512);
      busy = false;
      drained?.();
      expect(got).toHaveLength(601);
      expect(got).toEqual(Array.from({ length: 601 }, (_, i) => i + 1));
    });
  });

  describe('follow', () => {
    it('streams everything from the Task on, ending after the terminal status', async () => {
      const task = await start('a');
      const all = lastValueFrom(service.follow(task, { after: 0, toolFrames: true }).pipe(toArray()));
      bus.publish('toolframe', task.id, { frame: { toolCallId: 't', name: 'n', phase: 'started' } });
      bus.publish('reply', task.id, { status: 'completed', text: 'done' });
      const events = await all;
      expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(service.metrics().openStreams).toBe(0);
    });

    it('leaves out tool frames for a client without the extension', async () => {
      const task = await start('a');
      const all = lastValueFrom(service.follow(task, { after: 0, toolFrames: false }).pipe(toArray()));
      bus.publish('toolframe', task.id, { frame: { toolCallId: 't', name: 'n', phase: 'started' } });
      bus.publish('reply', task.id, { status: 'completed', text: 'done' });
      expect((await all).map((e) => e.response.payload?.$case)).toEqual(['task', 'artifactUpdate', 'statusUpdate']);
    });

    it('starts with a Task snapshot without a cursor, or when the cursor is no longer retained', async () => {
      setUp({ maxEventsPerTask: 3 });
      const task = await start('a');
      for (let i = 0; i < 5; i++) bus.publish('progress', task.id, { text: `p${i}`, step: i });
      const fromSnapshot = lastValueFrom(service.follow(task, { toolFrames: true }).pipe(toArray()));
      const fromEvicted = lastValueFrom(service.follow(task, { after: 1, toolFrames: true }).pipe(toArray()));
      bus.publish('reply', task.id, { status: 'completed', text: 'done' });
      for (const events of [await fromSnapshot, await fromEvicted]) {
        expect(events[0].response.payload?.$case).toBe('task');
        expect(events[0].seq).toBe(6);
        expect(events.slice(1).map((e) => e.seq)).toEqual([7, 8]);
      }
    });
  });
});

describe('newTaskId', () => {
  it('makes version 4 UUIDs (RFC 9562 variant), all different, across many refills of its random bytes', () => {
    const ids = Array.from({ length: 5_000 }, () => newTaskId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Every hex digit of the random positions shows up: the text is not stuck on stale bytes.
    const digits = new Set(ids.flatMap((id) => [...id.replace(/-/g, '')]));
    expect(digits.size).toBe(16);
  });

  it('gives each task and its context an id of that form', async () => {
    const config = resolveA2aConfig({});
    const service = new TaskService(new EventEmitterAgentBus(new EventEmitter2({ wildcard: false })), config, new InMemoryTaskStore(config));
    const task = await service.start({ message: message('ids'), text: 'ids', caller: undefined });
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(task.id).toMatch(uuid);
    expect(task.contextId).toMatch(uuid);
    expect(task.contextId).not.toBe(task.id);
    await service.close();
  });
});
