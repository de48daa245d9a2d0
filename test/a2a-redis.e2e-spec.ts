import Redis from 'ioredis';
import { TaskStore } from '../src/a2a';
import type { RedisTaskStore } from '../src/a2a/store/redis-task-store';
import { parseToolCall } from '../src/extensions';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import type { ScriptedRun } from './support/scripted-worker';
import { manual, parallelWeatherAndClock, slowTool } from './support/scripts';
import { collect, dataOf, eventually, readSse, rpc, within, wireMessage, type SseMessage } from './support/sse';
import { startRedis, type TestRedis } from './support/redis-server';
import { startRedisReplyGate, type RedisReplyGate } from './support/redis-reply-gate';
import { gate as pacing } from './support/stream-gate';

/** Kind, id and (for a task) state of each event of a JSON-RPC 1.0 stream. */
function summarise(messages: SseMessage[]): { id: number; kind: string; value: Record<string, unknown> }[] {
  return messages.map((message) => {
    const result = dataOf(message).result as Record<string, Record<string, unknown>>;
    const kind = Object.keys(result)[0];
    return { id: Number(message.id), kind, value: result[kind] };
  });
}

/** The run the instance's worker has started (waits for it). */
async function waitForRun(app: ScriptedA2aApp): Promise<ScriptedRun> {
  await eventually(() => app.worker.runs.size > 0, 5_000, 'a run');
  return [...app.worker.runs.values()][0];
}

async function json<T>(response: Response | Promise<Response>): Promise<T> {
  return (await (await response).json()) as T;
}

/**
 * Instances sharing tasks through one Redis: each a Nest app in this process with its own
 * in-process bus and the Redis task store; a run goes through the Redis run queue to an
 * instance that takes runs (role all; an api instance takes none).
 */
describe('tasks shared through Redis (e2e)', () => {
  let redis: TestRedis;
  const apps: ScriptedA2aApp[] = [];
  const instance = async (script = manual, extra = {}): Promise<ScriptedA2aApp> => {
    const app = await startScriptedA2aApp(script, { redis: { connection: redis.url, keyPrefix: 'e2e:' }, cancelOnDisconnect: false, ...extra });
    apps.push(app);
    return app;
  };

  /**
   * A streamed run on instance A, beside B, an api instance (it takes no runs, so the run is
   * A's); `abort` drops A's stream.
   */
  const streamOnAWithApiB = async (): Promise<{ b: ScriptedA2aApp; run: ScriptedRun; abort: AbortController; response: Response }> => {
    const a = await instance();
    const b = await instance(manual, { role: 'api' });
    const runStarted = a.worker.nextRun();
    const abort = new AbortController();
    const response = await rpc(a.base, 'SendStreamingMessage', { message: wireMessage('long') }, { signal: abort.signal });
    return { b, run: await runStarted, abort, response };
  };

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('a stream dropped on A resumes on B with Last-Event-ID: ids contiguous, nothing lost or doubled; GetTask and ListTasks on B', async () => {
    const { b, run, abort, response } = await streamOnAWithApiB();
    run.progress('thinking');
    for (let i = 0; i < 5; i++) {
      run.started(`c${i}`, 'calculator', { i });
      run.completed(`c${i}`, 'calculator', i);
    }
    const seenOnA: SseMessage[] = [];
    for await (const message of readSse(response)) {
      seenOnA.push(message);
      if (seenOnA.length === 6) break;
    }
    abort.abort();
    const taskId = summarise(seenOnA)[0].value.id as string;
    const lastId = Number(seenOnA[seenOnA.length - 1].id);

    // The run goes on while nobody listens; then B takes over the stream.
    for (let i = 5; i < 300; i++) {
      run.started(`c${i}`, 'calculator', { i });
      run.completed(`c${i}`, 'calculator', i);
    }
    const resumed = rpc(b.base, 'SubscribeToTask', { id: taskId }, { headers: { 'last-event-id': String(lastId) } });
    setTimeout(() => run.reply('ran 300 tools'), 50);
    const onB = summarise(await collect(await resumed));
    expect(onB.map((e) => e.id)).toEqual(Array.from({ length: onB.length }, (_, i) => lastId + 1 + i));
    expect(onB[onB.length - 1].kind).toBe('statusUpdate');
    expect((onB[onB.length - 1].value.status as { state: string }).state).toBe('TASK_STATE_COMPLETED');
    // Task, thinking, 600 frames, answer, COMPLETED.
    expect(onB[onB.length - 1].id).toBe(604);

    const got = await json<{ result: { id: string; status: { state: string }; artifacts: unknown[] } }>(rpc(b.base, 'GetTask', { id: taskId }));
    expect(got.result.status.state).toBe('TASK_STATE_COMPLETED');
    expect(got.result.artifacts.length).toBeLessThanOrEqual(101);
    const listed = await json<{ result: { tasks: { id: string }[]; totalSize: number } }>(rpc(b.base, 'ListTasks', {}));
    expect(listed.result.tasks.map((t) => t.id)).toContain(taskId);
  });

  it('a resume on B from the newest event, newer than the stored snapshot, is accepted and misses nothing', async () => {
    const { b, run, abort, response } = await streamOnAWithApiB();
    const seenOnA: SseMessage[] = [];
    const stream = readSse(response)[Symbol.asyncIterator]();
    const next = async (): Promise<SseMessage> => {
      const { value } = await stream.next();
      seenOnA.push(value as SseMessage);
      return value as SseMessage;
    };
    await next(); // the Task
    // WORKING: a state change, stored with its snapshot ...
    run.progress('thinking');
    await next();
    // ... then a frame in a batch of its own, which (within a second) leaves the snapshot behind.
    run.started('c0', 'calculator', { i: 0 });
    const frame = await next();
    abort.abort();
    const taskId = summarise(seenOnA)[0].value.id as string;
    const lastId = Number(frame.id);
    expect(lastId).toBe(3);

    const resumed = await rpc(b.base, 'SubscribeToTask', { id: taskId }, { headers: { 'last-event-id': String(lastId) } });
    expect(resumed.status).toBe(200);
    run.completed('c0', 'calculator', 0);
    run.reply('done');
    const onB = summarise(await collect(resumed));
    expect(onB.map((e) => e.id)).toEqual([4, 5, 6]);
    expect((onB[onB.length - 1].value.status as { state: string }).state).toBe('TASK_STATE_COMPLETED');
  });

  /**
   * A, the task's writer, its connection through a relay that can hold Redis's replies, and B, an
   * api instance; cap 20, frames of 100 kB (each a stream node of its own, so the trim is exact).
   * The run on A is past its WORKING state (event 2, stored with its snapshot). `burst` writes
   * `tools` tools with the replies held, in one call, and resolves the first event Redis keeps
   * once it ran the call: the writer does not know yet, so it sends nothing more until `release`.
   * `stored(seq)` resolves once Redis holds the events up to `seq`.
   */
  const withHeldWriter = async (
    body: (t: { b: ScriptedA2aApp; run: ScriptedRun; client: Redis; gate: RedisReplyGate; burst: (tools: number) => Promise<number>; stored: (seq: number) => Promise<number> }) => Promise<void>,
  ): Promise<void> => {
    const gate = await startRedisReplyGate(redis.port);
    const client = new Redis(redis.url);
    try {
      const capped = { maxEventsPerTask: 20, maxFrameFieldBytes: 200_000 };
      const a = await instance(manual, { ...capped, redis: { connection: gate.url, keyPrefix: 'e2e:' } });
      const b = await instance(manual, { ...capped, role: 'api' });
      const runStarted = a.worker.nextRun();
      const abort = new AbortController();
      await rpc(a.base, 'SendStreamingMessage', { message: wireMessage('big') }, { signal: abort.signal });
      const run = await runStarted;
      abort.abort();
      run.progress('thinking');
      await (a.app.get(TaskStore) as RedisTaskStore).flushed();
      /** Resolves the first event Redis keeps once it holds those up to `seq`. */
      const stored = async (seq: number): Promise<number> => {
        let lastSeq: string | null = null;
        for (const deadline = Date.now() + 10_000; (lastSeq = await client.hget(`e2e:task:${run.id}`, 'lastSeq')) !== String(seq); ) {
          if (Date.now() > deadline) throw new Error(`Redis never held the events up to ${seq} (it holds up to ${lastSeq})`);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        const [[firstKept]] = (await client.xrange(`e2e:events:${run.id}`, '-', '+', 'COUNT', 1)) as [string, string[]][];
        return Number(firstKept.split('-')[0]);
      };
      const burst = (tools: number): Promise<number> => {
        gate.hold();
        const page = 'x'.repeat(100_000);
        for (let i = 0; i < tools; i++) {
          run.started(`c${i}`, 'fetch', { page });
          run.completed(`c${i}`, 'fetch', 'ok');
        }
        return stored(2 + 2 * tools);
      };
      await body({ b, run, client, gate, burst, stored });
    } finally {
      gate.release();
      client.disconnect();
      for (const app of apps.splice(0)) await app.close();
      await gate.close();
    }
  };

  // A batch of 40 events with the cap at 20 went without the snapshot due with it (that followed
  // in a call of its own): between the two calls Redis held a snapshot (event 2) older than its
  // first kept event (~23), and a resume on another instance from before that event got the
  // snapshot, found the gap, and was cut.
  it('a resume on B from before the first event Redis keeps gets a snapshot no older than that event, then every event after it; GetTask on B too', async () => {
    await withHeldWriter(async ({ b, run, client, gate, burst }) => {
      const first = await burst(20);
      expect(first).toBeGreaterThan(3);
      // The cap holds: Redis keeps the newest 20 (the snapshot came with them).
      expect(await client.xlen(`e2e:events:${run.id}`)).toBeLessThanOrEqual(20);

      // GetTask on B holds every tool whose frames Redis no longer keeps (tool i: events 3 + 2i, 4 + 2i).
      const got = await json<{ result: { artifacts?: { parts: unknown[] }[] } }>(rpc(b.base, 'GetTask', { id: run.id }));
      const tools = new Set((got.result.artifacts ?? []).map((artifact) => parseToolCall(artifact.parts as never)?.toolCallId));
      for (let i = 0; 4 + 2 * i < first; i++) expect(tools).toContain(`c${i}`);

      const resumed = await rpc(b.base, 'SubscribeToTask', { id: run.id }, { headers: { 'last-event-id': '1' } });
      expect(resumed.status).toBe(200);
      const events = collect(resumed);
      gate.release();
      run.started('c20', 'fetch', { page: 'x' });
      run.completed('c20', 'fetch', 'ok');
      run.reply('done');
      const onB = summarise(await events);
      expect(onB[0].kind).toBe('task');
      // No older than the first event Redis keeps: nothing between the two is missing.
      expect(onB[0].id).toBeGreaterThanOrEqual(first - 1);
      // Task, thinking, 42 frames, answer, COMPLETED.
      expect(onB.map((e) => e.id)).toEqual(Array.from({ length: 46 - onB[0].id + 1 }, (_, i) => onB[0].id + i));
      expect((onB[onB.length - 1].value.status as { state: string }).state).toBe('TASK_STATE_COMPLETED');
    });
  });

  // A stream on B that is behind its replica's tail reads the events from Redis (XRANGE), where
  // MAXLEN does not wait for it as a task's log in memory would: once the writer passes the cap
  // (here in one call of 30 large frames, its replies held after it), the stream goes on from a
  // snapshot, then every event (the contract allows either). It was cut: it found the gap, and
  // the stored snapshot (event 2) was not newer than its place.
  it('a stream on B that reads Redis and falls behind what Redis keeps, less than twice the cap, gets a snapshot and then every event: no gap, no cut', async () => {
    await withHeldWriter(async ({ b, run, client, gate, burst }) => {
      const pace = pacing();
      pace.shut();
      const received: { seq: number; task: boolean; terminal: boolean }[] = [];
      const view = (await b.tasks.find(run.id, undefined))!;
      let cut: unknown;
      const ended = new Promise<void>((resolve, reject) =>
        b.tasks.follow(view, { after: 2, toolFrames: true, pace }).attach({
          next: (event) => received.push({ seq: event.seq, task: event.json.startsWith('{"task"'), terminal: event.terminal }),
          error: (err) => reject((cut = err)),
          complete: resolve,
        }),
      );
      // B hears of the writer's batches from here on.
      for (const deadline = Date.now() + 10_000; ((await client.pubsub('NUMSUB', `e2e:channel:${run.id}`)) as [string, number])[1] === 0; ) {
        if (Date.now() > deadline) throw new Error(`B never subscribed to the task's channel`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const first = await burst(15);
      expect(first).toBeGreaterThan(3);
      // B's stream has read Redis (the PUBLISH of events 3-32 came) and found the events after its place gone.
      await eventually(() => view.lastSeq === 32, 10_000, 'B told of events 3-32');
      gate.release();
      pace.open();
      // The run ends once the stream has gone on (a snapshot taken after the end would be the end).
      await eventually(() => received.length > 0 || cut !== undefined, 10_000, "B's stream to go on (a snapshot, or its cut)");
      run.reply('done');
      await within(ended, 10_000, () => `B's stream to end (it has ${received.length} events, the last ${received[received.length - 1]?.seq})`);
      const [snapshot, ...rest] = received;
      expect(snapshot).toMatchObject({ task: true });
      expect(snapshot.seq).toBeGreaterThanOrEqual(first - 1);
      // Task, thinking, 30 frames, answer, COMPLETED: every event after the snapshot, once, in order.
      expect(rest.map((e) => e.seq)).toEqual(Array.from({ length: 34 - snapshot.seq }, (_, i) => snapshot.seq + 1 + i));
      expect(rest[rest.length - 1].terminal).toBe(true);
    });
  });

  // A backlog longer than one call (MAX_BATCH, 2,000 events) goes out in several; only the last
  // can carry a snapshot. Past twice the cap Redis trims past the stored one, so a resume on B
  // meanwhile gets a snapshot older than the first kept event: it waits for the newer one the
  // writer stores with its backlog's last call, and goes on from there (it was cut).
  it('a resume on B while a backlog longer than one call goes out gets, after the stale snapshot, a newer one and every event after it: no cut', async () => {
    await withHeldWriter(async ({ b, run, gate, stored }) => {
      gate.hold();
      // Event 3 goes in a call of its own; the 2,500 after it wait for its reply.
      run.started('c0', 'calculator', { i: 0 });
      await stored(3);
      for (let i = 1; i <= 1_250; i++) {
        run.completed(`c${i - 1}`, 'calculator', i - 1);
        run.started(`c${i}`, 'calculator', { i });
      }
      // One reply on: the next call stores events 4-2003 (no snapshot: 500 more wait), its reply held.
      await gate.pass();
      const first = await stored(2_003);
      expect(first).toBeGreaterThan(3);
      const resumed = await rpc(b.base, 'SubscribeToTask', { id: run.id }, { headers: { 'last-event-id': '1' } });
      expect(resumed.status).toBe(200);
      const reader = readSse(resumed)[Symbol.asyncIterator]();
      const messages: SseMessage[] = [];
      const tasks = (): number => messages.filter((m) => m.data !== undefined && summarise([m])[0].kind === 'task').length;
      const read = async (): Promise<boolean> => {
        const { value, done } = await within(reader.next(), 10_000, () => `B's next event (it has ${messages.length}, the last id ${messages[messages.length - 1]?.id}, ${tasks()} Task(s))`);
        if (!done) messages.push(value as SseMessage);
        return !done;
      };
      gate.release();
      // The stale snapshot (event 2), then the one the backlog's last call stored (event 2503).
      while (tasks() < 2 && (await read()));
      run.completed('c1250', 'calculator', 1_250);
      run.reply('done');
      while (await read());
      const onB = summarise(messages.filter((m) => m.data !== undefined));
      // Task, thinking, 2,502 frames, answer, COMPLETED; each event other than a Task right after the one before it.
      expect(onB.filter((e) => e.kind === 'task').map((e) => e.id)).toEqual([2, 2_503]);
      expect(onB[onB.length - 1].id).toBe(2_506);
      expect((onB[onB.length - 1].value.status as { state: string }).state).toBe('TASK_STATE_COMPLETED');
      for (let i = 1; i < onB.length; i++) {
        expect(onB[i].id).toBeGreaterThan(onB[i - 1].id);
        if (onB[i].kind !== 'task') expect([onB[i].id, onB[i].kind]).toEqual([onB[i - 1].id + 1, onB[i].kind]);
      }
    });
  });

  /** A streamed run on instance A (which writes the task), its stream past the Task event. */
  const streamOnA = async (): Promise<{ a: ScriptedA2aApp; run: ScriptedRun; abort: AbortController; stream: AsyncIterator<SseMessage>; taskId: string }> => {
    const a = await instance();
    const runStarted = a.worker.nextRun();
    const abort = new AbortController();
    const response = await rpc(a.base, 'SendStreamingMessage', { message: wireMessage('long') }, { signal: abort.signal });
    const run = await runStarted;
    const stream = readSse(response)[Symbol.asyncIterator]();
    const taskId = summarise([(await stream.next()).value as SseMessage])[0].value.id as string;
    return { a, run, abort, stream, taskId };
  };

  it('a resume on the instance that writes the task gets an event only once Redis holds it, as a resume elsewhere would', async () => {
    const { a, run, abort, stream, taskId } = await streamOnA();
    run.progress('thinking');
    await stream.next();
    const client = new Redis(redis.url);
    try {
      // Redis takes no write for a while: the append of the next event waits.
      await client.client('PAUSE', 1_000, 'WRITE');
      run.started('c0', 'calculator', { i: 0 });
      await eventually(() => (a.record(taskId)?.lastSeq ?? 0) === 3, 5_000, 'the frame, written');
      // A resume after event 2, and a subscription without Last-Event-ID (a Task numbered as the newest event).
      const [resumed, fresh] = await Promise.all([
        rpc(a.base, 'SubscribeToTask', { id: taskId }, { headers: { 'last-event-id': '2' }, signal: abort.signal }),
        rpc(a.base, 'SubscribeToTask', { id: taskId }, { signal: abort.signal }),
      ]);
      const first = (await readSse(resumed)[Symbol.asyncIterator]().next()).value as SseMessage;
      expect(first.id).toBe('3');
      const snapshot = summarise([(await readSse(fresh)[Symbol.asyncIterator]().next()).value as SseMessage])[0];
      expect(snapshot).toMatchObject({ id: 3, kind: 'task' });
      // What these clients saw, Redis holds: a resume with Last-Event-ID 3 on any instance misses nothing.
      expect(await client.xrange(`e2e:events:${taskId}`, '3-1', '3-1')).toHaveLength(1);
    } finally {
      await client.client('UNPAUSE');
      client.disconnect();
      abort.abort();
      run.reply('done');
    }
  });

  // Redis answers but takes no write for longer than the writing instance waits for it: a resume
  // there gets a 503 with Retry-After that says Redis is unreachable or slow, not a hang.
  it('a resume on the writing instance while Redis takes no write past the wait: a 503 that says Redis is unreachable or slow', async () => {
    const { a, run, abort, taskId } = await streamOnA();
    const client = new Redis(redis.url);
    try {
      await client.client('PAUSE', 5_000, 'WRITE');
      run.started('c0', 'calculator', { i: 0 });
      await eventually(() => (a.record(taskId)?.lastSeq ?? 0) === 2, 5_000, 'the frame, written');
      const resumed = await rpc(a.base, 'SubscribeToTask', { id: taskId }, { headers: { 'last-event-id': '1' }, signal: abort.signal });
      expect(resumed.status).toBe(503);
      expect(resumed.headers.get('retry-after')).toBe('2');
      const body = await json<{ error: { message: string } }>(resumed);
      expect(body.error.message).toBe(
        `The task store (Redis) has not stored event 2 of task ${taskId} within 2000 ms: it is unreachable or slow to take this instance's writes; try again`,
      );
    } finally {
      await client.client('UNPAUSE');
      client.disconnect();
      abort.abort();
      run.reply('done');
    }
  });

  it('CancelTask on B ends the stream on A CANCELED, its open tool closed as failed "cancelled"', async () => {
    const a = await instance(slowTool);
    const b = await instance(manual, { role: 'api' });
    const response = await rpc(a.base, 'SendStreamingMessage', { message: wireMessage('slow') });
    const stream = collect(response);
    const run = await waitForRun(a);
    await eventually(() => (a.record(run.id)?.lastSeq ?? 0) >= 3, 5_000, 'the started frame');
    const cancelled = await json<{ result: { status: { state: string } } }>(rpc(b.base, 'CancelTask', { id: run.id }));
    expect(cancelled.result.status.state).toBe('TASK_STATE_CANCELED');
    const events = summarise(await stream);
    expect((events[events.length - 1].value.status as { state: string }).state).toBe('TASK_STATE_CANCELED');
    expect(JSON.stringify(events[events.length - 2].value)).toContain('"phase":"failed","error":"cancelled"');
    expect(a.worker.cancels).toEqual([{ correlationId: run.id, reason: 'cancelled by the client' }]);
  });

  const GRACE_MS = 1_000;
  // On the writing instance too: a rejoin there followed the writer's record until it got a
  // replica (localReplica in src/a2a/store/redis-task-store.ts); neither the first stream's view
  // nor Redis's follower count saw it, and the run was cancelled although the client was back.
  it.each(['another instance', 'the instance that writes the task'])('cancelOnDisconnect counts a client that rejoins on %s within the grace period', async (where) => {
    // The rejoin must be counted within the grace: a second leaves room for a loaded machine.
    const grace = { cancelOnDisconnect: true, disconnectGraceMs: GRACE_MS };
    const a = await instance(manual, grace);
    const rejoinOn = where === 'another instance' ? await instance(manual, { ...grace, role: 'api' }) : a;
    const abort = new AbortController();
    const started = a.worker.nextRun();
    const response = await rpc(a.base, 'SendStreamingMessage', { message: wireMessage('long') }, { signal: abort.signal });
    const run = await started;
    run.progress('thinking');
    const first: SseMessage[] = [];
    for await (const message of readSse(response)) {
      first.push(message);
      if (first.length === 2) break;
    }
    abort.abort();
    const rejoined = collect(await rpc(rejoinOn.base, 'SubscribeToTask', { id: run.id }, { headers: { 'last-event-id': '2' } }));
    // Past the grace (it began before the rejoin): a run the instance meant to cancel is cancelled by now.
    await new Promise((r) => setTimeout(r, GRACE_MS + 500));
    expect(a.worker.cancels).toEqual([]);
    run.reply('still here');
    const events = summarise(await rejoined);
    expect((events[events.length - 1].value.status as { state: string }).state).toBe('TASK_STATE_COMPLETED');
  });

  it('a second turn on another instance gets the conversation history', async () => {
    const a = await instance(parallelWeatherAndClock);
    const b = await instance(parallelWeatherAndClock);
    const first = await json<{ result: { task: { id: string; contextId: string } } }>(rpc(a.base, 'SendMessage', { message: wireMessage('weather in Paris') }));
    // Either instance's worker may take the second run from the queue.
    const next = Promise.race([a.worker.nextRun(), b.worker.nextRun()]);
    await json(rpc(b.base, 'SendMessage', { message: wireMessage('and in Rome?', { contextId: first.result.task.contextId }) }));
    const run = await next;
    expect(run.request.history).toEqual([
      { role: 'user', text: 'weather in Paris' },
      { role: 'agent', text: 'It is 18 °C and clear in Paris; in Tokyo it is 21:04.' },
    ]);
  });

  it('finished tasks stay readable after every instance restarted, and replay from any event', async () => {
    const a = await instance(parallelWeatherAndClock);
    const events = summarise(await collect(await rpc(a.base, 'SendStreamingMessage', { message: wireMessage('weather') })));
    const taskId = events[0].value.id as string;
    for (const app of apps.splice(0)) await app.close();

    const c = await instance();
    const got = await json<{ result: { status: { state: string } } }>(rpc(c.base, 'GetTask', { id: taskId }));
    expect(got.result.status.state).toBe('TASK_STATE_COMPLETED');
    const replay = summarise(await collect(await rpc(c.base, 'SubscribeToTask', { id: taskId }, { headers: { 'last-event-id': '1' } })));
    expect(replay.map((e) => e.id)).toEqual(events.slice(1).map((e) => e.id));
    expect(replay.map((e) => JSON.stringify(e.value))).toEqual(events.slice(1).map((e) => JSON.stringify(e.value)));
  });

  it('Redis unreachable: a clear 503 naming Redis, no hang; the instance recovers without a restart when Redis returns', async () => {
    const a = await instance(parallelWeatherAndClock);
    await redis.kill(true);
    const down = await rpc(a.base, 'SendMessage', { message: wireMessage('weather') });
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('2');
    const body = await json<{ error: { code: number; message: string } }>(down);
    expect(body.error.message).toContain('Redis');
    expect(body.error.message).not.toMatch(/\n\s+at /);
    const listDown = await fetch(`${a.base}/tasks`, { headers: { 'a2a-version': '1.0' } });
    expect(listDown.status).toBe(503);
    await redis.restart();
    let ok: Response | undefined;
    for (let attempt = 0; attempt < 100 && ok?.status !== 200; attempt++) {
      await new Promise((r) => setTimeout(r, 100));
      ok = await rpc(a.base, 'SendMessage', { message: wireMessage('weather') });
    }
    expect(ok?.status).toBe(200);
    expect((await json<{ result: { task: { status: { state: string } } } }>(ok!)).result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });
});
