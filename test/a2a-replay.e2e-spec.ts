import { Message } from '@a2a-js/sdk';
import { TaskStore } from '../src/a2a';
import type { RedisTaskStore } from '../src/a2a/store/redis-task-store';
import type { TaskEventStream } from '../src/a2a/task-stream';
import { parseToolCall } from '../src/extensions';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import type { ScriptedRun } from './support/scripted-worker';
import { manual, parallelWeatherAndClock, toolStorm } from './support/scripts';
import { collect, dataOf, eventually, readSse, rpc, streamRetryingOn503, wireMessage, type SseMessage } from './support/sse';
import { STORE_MODES, useStoreMode } from './support/store-modes';
import { gate } from './support/stream-gate';

interface Seen {
  id: number;
  kind: string;
  toolCallId?: string;
  taskId?: string;
}

/** The StreamResponse inside a JSON-RPC (1.0) event, summarised. */
function seen(message: SseMessage, envelope = true): Seen {
  const body = dataOf(message);
  const result = (envelope ? body.result : body) as Record<string, Record<string, unknown>>;
  const kind = Object.keys(result)[0];
  const value = result[kind];
  const artifact = value.artifact as { parts?: unknown[] } | undefined;
  return {
    id: Number(message.id),
    kind,
    toolCallId: parseToolCall(artifact?.parts)?.toolCallId,
    taskId: (kind === 'task' ? value.id : value.taskId) as string,
  };
}

/** Publishes `count` tool calls, one frame per macrotask, so frames keep coming during reconnects. */
async function trickle(run: ScriptedRun, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    run.started(`call_${i}`, 'calculator', { i });
    await new Promise((resolve) => setImmediate(resolve));
    run.completed(`call_${i}`, 'calculator', i);
    await new Promise((resolve) => setImmediate(resolve));
  }
  run.reply(`ran ${count} tools`);
}

/** The sequence numbers a stream hands over, resolved once it ends (rejected if it fails). */
function seqsOf(events: TaskEventStream): Promise<number[]> {
  const seqs: number[] = [];
  return new Promise((resolve, reject) => events.attach({ next: (event) => seqs.push(event.seq), error: reject, complete: () => resolve(seqs) }));
}

/** One contract, both task stores: in Redis mode the app is one instance of role all on a redis-server of the suite's own. */
/**
 * What the stream that started a task gets, in both stores: every event from the Task on (in
 * memory the task's log holds them for it past its cap; in Redis mode the replica it follows on
 * the writing instance does, see RedisTaskReplica.keepTail), ids contiguous, `last` the last.
 */
function expectEveryEvent(events: Seen[], last: number): void {
  expect(events.map((e) => e.id)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
}

describe.each(STORE_MODES)('replay and reconnect (e2e, %s store)', (mode) => {
  const store = useStoreMode(mode);
  let t: ScriptedA2aApp;

  beforeAll(async () => {
    t = await startScriptedA2aApp(manual, { cancelOnDisconnect: false, ...store.options() });
  });
  // A case that set a script and failed before setting it back left it for the next cases, which
  // then failed too (their runs published the script's events): each case starts from manual.
  beforeEach(() => {
    t.worker.script = manual;
  });
  afterAll(async () => {
    await t.close();
  });
  afterAll(store.stop);

  it('a client that reconnects with Last-Event-ID over and over, while frames keep coming, sees every event exactly once', async () => {
    const toolCalls = 300;
    const nextRun = t.worker.nextRun();
    let controller = new AbortController();
    let response = await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('go') }, { signal: controller.signal });
    const run = await nextRun;
    const publishing = trickle(run, toolCalls);

    const received: Seen[] = [];
    let reconnects = 0;
    for (;;) {
      let ended = true;
      try {
        for await (const message of readSse(response)) {
          if (message.data === undefined) continue;
          received.push(seen(message));
          // Drop the connection every 37 events, in the middle of the run.
          if (received.length % 37 === 0 && received[received.length - 1].kind !== 'statusUpdate') {
            controller.abort();
            ended = false;
            break;
          }
        }
      } catch (err) {
        if (!controller.signal.aborted) throw err;
        ended = false;
      }
      if (ended) break;
      reconnects += 1;
      controller = new AbortController();
      response = await rpc(t.base, 'SubscribeToTask', { id: run.id }, {
        signal: controller.signal,
        headers: { 'Last-Event-ID': String(received[received.length - 1].id) },
      });
      expect(response.status).toBe(200);
    }
    await publishing;

    // The task's log, read back whole (in Redis mode from the stream in Redis: the writer's record
    // keeps only its newest events, and the writer forgets it once its end is stored).
    const logged = (await collect(await rpc(t.base, 'SubscribeToTask', { id: run.id }, { headers: { 'Last-Event-ID': '0' } }))).map((m) => seen(m));
    const lastSeq = logged[logged.length - 1].id;
    expect(logged[logged.length - 1].kind).toBe('statusUpdate');
    expect(reconnects).toBeGreaterThan(5);
    // every id once, in order, none missing
    expect(received.map((r) => r.id)).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
    // and each is the event the task logged under that id
    expect(logged.map((r) => r.id)).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
    expect(received.map((r) => r.toolCallId)).toEqual(logged.map((r) => r.toolCallId));
    expect(received.filter((r) => r.toolCallId).length).toBe(toolCalls * 2);
    expect(received[received.length - 1].kind).toBe('statusUpdate');
  });

  it('streams a 10,000-tool-call task whole to the client that started it, past the replay cap', async () => {
    t.worker.script = toolStorm(10_000, 100);
    const messages = await collect(await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('storm') }));
    const events = messages.filter((m) => m.data !== undefined).map((m) => seen(m));
    // task, thinking, 20,000 frames, answer, completed
    expectEveryEvent(events, 20_004);
    expect(events.filter((e) => e.toolCallId)).toHaveLength(20_000);
    expect(events[events.length - 1].kind).toBe('statusUpdate');
    // the default cap applies again once the stream attached: a replay from the start begins with a snapshot
    if (mode === 'memory') expect(t.record(events[0].taskId!)!.log.size).toBe(10_000);
    const fromStart = (await collect(await rpc(t.base, 'SubscribeToTask', { id: events[0].taskId }, { headers: { 'Last-Event-ID': '1' } }))).map((m) => seen(m));
    expect(fromStart[0]).toMatchObject({ kind: 'task', id: 20_004 });
    t.worker.script = manual;
  });

  it('replays a finished task from Last-Event-ID over HTTP+JSON and 0.3, then ends', async () => {
    t.worker.script = parallelWeatherAndClock;
    const whole = await collect(await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('weather') }));
    const taskId = seen(whole[0]).taskId!;
    const rest = await collect(
      await fetch(`${t.base}/tasks/${taskId}:subscribe`, { method: 'POST', headers: { 'a2a-version': '1.0', 'last-event-id': '5' } }),
    );
    expect(rest.filter((m) => m.data).map((m) => m.id)).toEqual(['6', '7', '8', '9']);
    expect(rest.map((m) => dataOf(m))).toEqual(whole.slice(5).map((m) => (dataOf(m) as { result: unknown }).result));
    const legacy = await collect(await rpc(t.base, 'tasks/resubscribe', { id: taskId }, { version: '0.3', headers: { 'Last-Event-ID': '7' } }));
    expect(legacy.map((m) => (dataOf(m).result as { kind: string }).kind)).toEqual(['artifact-update', 'status-update']);
    expect((dataOf(legacy[1]).result as { final: boolean }).final).toBe(true);
    t.worker.script = manual;
  });

  it('SubscribeToTask without Last-Event-ID starts with the Task as it is now, then goes live', async () => {
    const nextRun = t.worker.nextRun();
    const origin = await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('go') });
    const run = await nextRun;
    run.progress('thinking');
    run.started('a', 'weather', { city: 'Paris' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const subscribe = rpc(t.base, 'SubscribeToTask', { id: run.id }, { id: 'sub-1' });
    const late = await subscribe;
    const reader = readSse(late);
    const first = (await reader.next()).value as SseMessage;
    expect(dataOf(first)).toMatchObject({ id: 'sub-1', result: { task: { id: run.id, status: { state: 'TASK_STATE_WORKING' } } } });
    expect(first.id).toBe('3');
    run.completed('a', 'weather', { tempC: 18 });
    run.reply('18 °C');
    const rest: SseMessage[] = [];
    for await (const message of reader) rest.push(message);
    expect(rest.map((m) => Number(m.id))).toEqual([4, 5, 6]);
    expect((await collect(origin)).length).toBe(6);
  });

  it('two overlapping tasks never see each other’s events', async () => {
    const runs = [t.worker.nextRun(), t.worker.nextRun()];
    const streams = [await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('a') }), await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('b') })];
    const [a, b] = await Promise.all(runs);
    const collected = streams.map((s) => collect(s));
    for (let i = 0; i < 20; i++) {
      a.started(`a_${i}`, 'weather');
      b.started(`b_${i}`, 'clock');
      b.completed(`b_${i}`, 'clock');
      a.completed(`a_${i}`, 'weather');
    }
    a.reply('A');
    b.reply('B');
    const [fromA, fromB] = (await Promise.all(collected)).map((messages) => messages.map((m) => seen(m)));
    expect(new Set(fromA.map((e) => e.taskId))).toEqual(new Set([a.id]));
    expect(new Set(fromB.map((e) => e.taskId))).toEqual(new Set([b.id]));
    expect(fromA.filter((e) => e.toolCallId).every((e) => e.toolCallId!.startsWith('a_'))).toBe(true);
    expect(fromB.filter((e) => e.toolCallId).every((e) => e.toolCallId!.startsWith('b_'))).toBe(true);
    expect(fromA.filter((e) => e.toolCallId)).toHaveLength(40);
  });

  it('disconnects a client that stops reading once it falls twice the cap behind, without cancelling; it resumes from a snapshot', async () => {
    // Frames of 100 kB (past the default field cap) fill the socket buffers quickly.
    const capped = await startScriptedA2aApp(manual, { maxEventsPerTask: 20, maxFrameFieldBytes: 200_000, ...store.options() });
    try {
      const nextRun = capped.worker.nextRun();
      const stalled = await rpc(capped.base, 'SendStreamingMessage', { message: wireMessage('big') });
      const run = await nextRun;
      const reader = readSse(stalled);
      const first = (await reader.next()).value as SseMessage; // then stop reading
      const big = 'x'.repeat(100_000);
      for (let i = 0; i < 200; i++) {
        run.started(`c${i}`, 'fetch', { page: big });
        run.completed(`c${i}`, 'fetch', 'ok');
        await new Promise((resolve) => setImmediate(resolve));
      }
      await eventually(() => capped.tasks.metrics().openStreams === 0, 10_000, 'the stalled stream to be dropped');
      await expect(
        (async () => {
          for await (const _ of reader) void _;
        })(),
      ).rejects.toThrow();
      expect(capped.worker.cancels).toEqual([]);
      const response = await streamRetryingOn503(
        () => rpc(capped.base, 'SubscribeToTask', { id: run.id }, { headers: { 'Last-Event-ID': first.id! } }),
        'the resume',
      );
      run.reply('done');
      const events = (await collect(response)).filter((m) => m.data);
      expect(Object.keys(dataOf(events[0]).result as object)).toEqual(['task']);
      expect(JSON.stringify(dataOf(events[events.length - 1]))).toContain('TASK_STATE_COMPLETED');
    } finally {
      await capped.close();
    }
  });

  // Each alone: a stream that holds the task's events for itself holds them for the other too.
  it.each(['the stream that started the task', 'a stream that follows it on its writing instance'])(
    'a stream that takes its events slowly, more than the cap but less than twice it behind, gets every event, ids contiguous: %s',
    async (which) => {
      // 700 events behind: past the cap (400), past what a Redis replica keeps in its tail (512), within twice the cap.
      const capped = await startScriptedA2aApp(manual, { maxEventsPerTask: 400, cancelOnDisconnect: false, ...store.options() });
      try {
        const stored = async (): Promise<void> => {
          if (mode === 'redis') await (capped.app.get(TaskStore) as RedisTaskStore).flushed();
          await new Promise((resolve) => setImmediate(resolve));
        };
        const pace = gate();
        const nextRun = capped.worker.nextRun();
        const message = Message.fromJSON(wireMessage('slow'));
        const starter = which === 'the stream that started the task';
        const started = await capped.tasks.startStreaming({ message, text: 'slow', caller: undefined }, { toolFrames: true, pace: starter ? pace : undefined });
        // The other one takes every event as it comes.
        const other = starter ? undefined : seqsOf(started.events);
        const run = await nextRun;
        // Once the run is taken: this instance writes the task.
        const stream = seqsOf(starter ? started.events : capped.tasks.follow((await capped.tasks.find(run.id, undefined))!, { after: 0, toolFrames: true, pace }));
        run.progress('thinking');
        await stored();
        pace.shut();
        for (let i = 0; i < 350; i++) {
          run.started(`c${i}`, 'calculator', { i });
          run.completed(`c${i}`, 'calculator', i);
          if (i % 50 === 0) await stored();
        }
        await stored();
        pace.open();
        for (let i = 350; i < 360; i++) {
          run.started(`c${i}`, 'calculator', { i });
          run.completed(`c${i}`, 'calculator', i);
        }
        run.reply('done');
        // Task, thinking, 720 frames, answer, COMPLETED.
        const every = Array.from({ length: 724 }, (_, i) => i + 1);
        expect(await stream).toEqual(every);
        if (other) expect(await other).toEqual(every);
      } finally {
        await capped.close();
      }
    },
  );

  it('keeps an idle stream alive with a comment line', async () => {
    const quick = await startScriptedA2aApp(manual, { keepAliveMs: 30, ...store.options() });
    try {
      const nextRun = quick.worker.nextRun();
      const response = await rpc(quick.base, 'SendStreamingMessage', { message: wireMessage('wait') });
      const run = await nextRun;
      const reader = readSse(response);
      // Keep-alives may precede the Task when creating it takes longer than keepAliveMs (a loaded
      // machine, or a Redis round trip): comments carry no event, so the Task is still the first.
      let first = (await reader.next()).value as SseMessage;
      while (first.comment !== undefined && first.data === undefined) first = (await reader.next()).value as SseMessage;
      expect(Object.keys(dataOf(first).result as object)).toEqual(['task']);
      const idle = (await reader.next()).value as SseMessage;
      expect(idle).toEqual({ comment: 'keep-alive' });
      run.reply('done');
      const rest: SseMessage[] = [];
      for await (const m of reader) rest.push(m);
      expect(rest.filter((m) => m.data).length).toBe(2);
    } finally {
      await quick.close();
    }
  });

  it('resumes from a dropped event with a Task snapshot when the per-task cap was exceeded', async () => {
    const capped = await startScriptedA2aApp(manual, { maxEventsPerTask: 10, ...store.options() });
    try {
      const nextRun = capped.worker.nextRun();
      const origin = await rpc(capped.base, 'SendStreamingMessage', { message: wireMessage('go') });
      const run = await nextRun;
      for (let i = 0; i < 20; i++) run.started(`c${i}`, 'calculator');
      // the live stream still gets every event
      const resumed = await rpc(capped.base, 'SubscribeToTask', { id: run.id }, { headers: { 'Last-Event-ID': '3' } });
      run.reply('done');
      const live = await collect(origin);
      expectEveryEvent(live.filter((m) => m.data).map((m) => seen(m)), 43);
      const afterGap = (await collect(resumed)).filter((m) => m.data);
      expect(Object.keys(dataOf(afterGap[0]).result as object)).toEqual(['task']);
      expect(afterGap[0].id).toBe('21');
      expect(afterGap.slice(1).map((m) => Number(m.id))).toEqual([22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43]);
    } finally {
      await capped.close();
    }
  });
});
