import { TOOL_CALL_V1_EXTENSION_URI } from '../src/extensions';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import { manual } from './support/scripts';
import { collect, dataOf, eventually, readSse, rpc, wireMessage, type SseMessage } from './support/sse';
import { startRedis, type TestRedis } from './support/redis-server';

const TOOL_FRAMES = { 'a2a-extensions': TOOL_CALL_V1_EXTENSION_URI };

function ids(messages: SseMessage[]): number[] {
  return messages.map((m) => Number(m.id));
}

function stateOf(message: SseMessage): string | undefined {
  const result = dataOf(message).result as { statusUpdate?: { status: { state: string } } };
  return result.statusUpdate?.status.state;
}

/**
 * Redis goes away (SIGKILL) while a run writes (client streams follow the task through Redis,
 * so they wait for it too), and comes back (its append-only file kept what
 * it had acknowledged): the events written meanwhile wait on the writer and reach Redis in
 * order, so a client that resumes with Last-Event-ID on another instance misses nothing and
 * gets nothing twice.
 */
describe('events written while Redis is down (e2e)', () => {
  let redis: TestRedis;
  const apps: ScriptedA2aApp[] = [];
  /** B serves A2A only (role api), so every run is A's. */
  const instance = async (extra = {}): Promise<ScriptedA2aApp> => {
    const app = await startScriptedA2aApp(manual, { redis: { connection: redis.url, keyPrefix: 'outage:' }, cancelOnDisconnect: false, ...extra });
    apps.push(app);
    return app;
  };

  beforeEach(async () => {
    redis = await startRedis({ persist: true });
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    await redis.stop();
  });

  it('are stored in order once Redis returns: a resume on another instance gets every event once', async () => {
    const a = await instance();
    const b = await instance({ role: 'api' });
    const started = a.worker.nextRun();
    const response = await rpc(a.base, 'SendStreamingMessage', { message: wireMessage('long') }, { headers: TOOL_FRAMES });
    const run = await started;
    run.progress('before the outage');
    run.started('call_1', 'weather', { city: 'Paris' });
    const live = collect(response);
    // Stored: B reads it.
    await eventually(() => (a.record(run.id)?.lastSeq ?? 0) >= 3, 5_000, 'the first events');
    const seen = async (): Promise<number> => {
      const got = (await (await rpc(b.base, 'GetTask', { id: run.id })).json()) as { result?: { artifacts?: unknown[] } };
      return got.result?.artifacts?.length ?? 0;
    };
    for (const deadline = Date.now() + 10_000; (await seen()) === 0; ) {
      if (Date.now() > deadline) throw new Error('B never read the first frame from Redis');
      await new Promise((r) => setTimeout(r, 50));
    }

    await redis.kill(true);
    for (let i = 0; i < 20; i++) run.progress(`during the outage ${i}`);
    run.completed('call_1', 'weather', { temp: 21 });
    run.started('call_2', 'clock');
    run.completed('call_2', 'clock', { time: '12:00' });
    await new Promise((r) => setTimeout(r, 300));
    await redis.restart();
    run.progress('after the outage');
    run.reply('done');

    const onA = await live;
    expect(stateOf(onA[onA.length - 1])).toBe('TASK_STATE_COMPLETED');
    // Event 1 is the Task; 2 the first narration; 3 a frame, 4-23 narrations, 24-26 frames, 27 a narration, 28 the answer, 29 COMPLETED.
    expect(ids(onA)).toEqual(Array.from({ length: onA.length }, (_, i) => i + 1));
    expect(onA.length).toBe(29);

    // Another instance resumes after event 2: everything after it, once, as A sent it.
    const resumed = await collect(await rpc(b.base, 'SubscribeToTask', { id: run.id }, { headers: { 'last-event-id': '2', ...TOOL_FRAMES } }));
    expect(ids(resumed)).toEqual(ids(onA).slice(2));
    expect(resumed.map((m) => m.data)).toEqual(onA.slice(2).map((m) => m.data));
    const got = (await (await rpc(b.base, 'GetTask', { id: run.id })).json()) as { result: { status: { state: string } } };
    expect(got.result.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('past maxEventsPerTask waiting for Redis, the task fails naming Redis and its run is stopped; every event is stored when Redis returns', async () => {
    const a = await instance({ maxEventsPerTask: 30 });
    const b = await instance({ maxEventsPerTask: 30, role: 'api' });
    const started = a.worker.nextRun();
    const response = await rpc(a.base, 'SendStreamingMessage', { message: wireMessage('long') });
    const run = await started;
    const messages: SseMessage[] = [];
    // A stream that follows through Redis may end with an error while Redis is away (the client resumes).
    const live = (async () => {
      try {
        for await (const message of readSse(response)) messages.push(message);
      } catch {
        // cut: resumed below
      }
    })();
    run.progress('before the outage');
    await eventually(() => messages.length >= 2, 5_000, 'the first narration');
    await new Promise((r) => setTimeout(r, 100));
    await redis.kill(true);
    for (let i = 0; i < 40; i++) run.progress(`during the outage ${i}`);
    // The writer ends the task at once and stops its run, with Redis still away.
    await eventually(() => a.record(run.id)?.isTerminal === true, 5_000, 'the task to end');
    expect(a.worker.cancels.map((c) => c.correlationId)).toEqual([run.id]);
    const lastSeq = a.record(run.id)?.lastSeq ?? NaN;
    const failed = a.record(run.id)?.status.message?.parts[0].content;
    await redis.restart();
    // The client's stream ends (with the failure, or cut while Redis was away): never hangs.
    await live;
    expect(ids(messages)).toEqual(Array.from({ length: messages.length }, (_, i) => i + 1));
    expect(failed).toEqual({ $case: 'text', value: expect.stringContaining('maxEventsPerTask (30)') });
    expect(JSON.stringify(failed)).toContain('Redis');

    let resumed: SseMessage[] = [];
    for (let attempt = 0; attempt < 60; attempt++) {
      const response = await rpc(b.base, 'SubscribeToTask', { id: run.id }, { headers: { 'last-event-id': String(lastSeq - 30) } });
      if (response.status === 200) {
        resumed = await collect(response);
        if (resumed.length && stateOf(resumed[resumed.length - 1]) === 'TASK_STATE_FAILED') break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    // The last 30 events (what maxEventsPerTask keeps), each once, the failure last.
    expect(ids(resumed)).toEqual(Array.from({ length: 30 }, (_, i) => lastSeq - 29 + i));
    expect(resumed[resumed.length - 1].data).toContain('maxEventsPerTask (30)');
  });
});
