import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import { WORKER_LOST_MESSAGE } from '../src/a2a/store/redis-run-queue';
import { RUN_DONE_SCRIPT } from '../src/a2a/store/run-queue-scripts';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import { manual } from './support/scripts';
import { collect, dataOf, eventually, rpc, wireMessage } from './support/sse';
import { startRedis, type TestRedis } from './support/redis-server';

async function json<T>(response: Response | Promise<Response>): Promise<T> {
  return (await (await response).json()) as T;
}

type TaskResult = { result: { id: string; status: { state: string; message?: { parts: { text: string }[] } } } };
type SendResult = { result: { task: TaskResult['result'] } };

/**
 * The Redis run queue with in-process instances: api instances queue runs, workers take them
 * (at most maxConcurrentRuns each) under a lease; a worker that stops renewing is lost and its
 * task ends FAILED on every instance. Multi-process runs are in a2a-multi-process.e2e-spec.ts.
 */
describe('the Redis run queue (e2e)', () => {
  let redis: TestRedis;
  const apps: ScriptedA2aApp[] = [];
  let prefix = 0;
  let keyPrefix = '';
  const instance = async (extra: Record<string, unknown> = {}, redisExtra: Record<string, unknown> = {}): Promise<ScriptedA2aApp> => {
    const app = await startScriptedA2aApp(manual, { redis: { connection: redis.url, keyPrefix, ...redisExtra }, cancelOnDisconnect: false, ...extra });
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    redis = await startRedis();
  });
  beforeEach(() => {
    // Each test its own keys: no queue or lease left over from another.
    keyPrefix = `q${++prefix}:`;
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('an api instance runs nothing: its run waits queued (SUBMITTED) until a worker takes it, then streams from the worker', async () => {
    const api = await instance({ role: 'api' });
    const sent = await json<SendResult>(rpc(api.base, 'SendMessage', { message: wireMessage('queued'), configuration: { returnImmediately: true } }));
    expect(sent.result.task.status.state).toBe('TASK_STATE_SUBMITTED');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(api.worker.runs.size).toBe(0);
    const stream = collect(await rpc(api.base, 'SubscribeToTask', { id: sent.result.task.id }, { headers: { 'last-event-id': '0' } }));

    const worker = await instance({ role: 'worker' });
    await eventually(() => worker.worker.runs.size > 0, 10_000, 'the worker takes the run');
    const [run] = worker.worker.runs.values();
    expect(run.id).toBe(sent.result.task.id);
    run.progress('working on it');
    run.started('c1', 'calculator', { expression: '1+1' });
    run.completed('c1', 'calculator', 2);
    run.reply('2');
    const events = await stream;
    expect(events.map((m) => Number(m.id))).toEqual([1, 2, 3, 4, 5, 6]);
    const last = dataOf(events[events.length - 1]).result as { statusUpdate: { status: { state: string } } };
    expect(last.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(api.worker.runs.size).toBe(0);
  });

  it('a full queue refuses a send with 503 naming maxQueuedRuns; a queued task is cancelled from any instance and never runs', async () => {
    const api = await instance({ role: 'api' }, { maxQueuedRuns: 1 });
    const other = await instance({ role: 'api' }, { maxQueuedRuns: 1 });
    const first = await json<SendResult>(rpc(api.base, 'SendMessage', { message: wireMessage('one'), configuration: { returnImmediately: true } }));
    const refused = await rpc(other.base, 'SendMessage', { message: wireMessage('two'), configuration: { returnImmediately: true } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(JSON.stringify(await refused.json())).toContain('maxQueuedRuns');

    const cancelled = await json<TaskResult>(rpc(other.base, 'CancelTask', { id: first.result.task.id }));
    expect(cancelled.result.status.state).toBe('TASK_STATE_CANCELED');
    const worker = await instance({ role: 'worker' });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(worker.worker.runs.size).toBe(0);
    // The queue has room again.
    const third = await rpc(api.base, 'SendMessage', { message: wireMessage('three'), configuration: { returnImmediately: true } });
    expect(third.status).toBe(200);
    await eventually(() => worker.worker.runs.size === 1, 10_000, 'the worker takes the third run');
  });

  it('a worker runs at most maxConcurrentRuns at once; the next run starts when one ends', async () => {
    const api = await instance({ role: 'api' });
    const worker = await instance({ role: 'worker' }, { maxConcurrentRuns: 1 });
    const firstRun = worker.worker.nextRun();
    const a = await json<SendResult>(rpc(api.base, 'SendMessage', { message: wireMessage('a'), configuration: { returnImmediately: true } }));
    await json<SendResult>(rpc(api.base, 'SendMessage', { message: wireMessage('b'), configuration: { returnImmediately: true } }));
    const run = await firstRun;
    expect(run.id).toBe(a.result.task.id);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(worker.worker.runs.size).toBe(1);
    const secondRun = worker.worker.nextRun();
    run.reply('done');
    await secondRun;
    expect(worker.worker.runs.size).toBe(2);
  });

  it("a worker's take-over removes the run's entry from the queue in the same step (no call of its own per run)", async () => {
    const client = new Redis(redis.url);
    try {
      // Redis forgets every script: one that runs from now on is loaded again (SCRIPT EXISTS says which did).
      await client.script('FLUSH');
      const api = await instance({ role: 'api' });
      const worker = await instance({ role: 'worker' });
      const nextRun = worker.worker.nextRun();
      const sent = await json<SendResult>(rpc(api.base, 'SendMessage', { message: wireMessage('one step'), configuration: { returnImmediately: true } }));
      const run = await nextRun;
      expect(run.id).toBe(sent.result.task.id);
      // Gone from the queue and from the workers' pending entries (the take-over's step ran before
      // the run started), and RUN_DONE_SCRIPT never ran, also a while later.
      const runs = `${keyPrefix}runs:`;
      expect(await client.xlen(runs)).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(((await client.xpending(runs, 'workers')) as [number])[0]).toBe(0);
      expect(await client.script('EXISTS', createHash('sha1').update(RUN_DONE_SCRIPT).digest('hex'))).toEqual([0]);
      run.reply('done');
    } finally {
      client.disconnect();
    }
  });

  it('a worker that stops renewing its lease is lost: the task ends FAILED "worker was lost" on the api instance, its open tool closed as failed', async () => {
    // Renewed every third of it: a renewal late by more than two thirds (an event loop held that
    // long on a loaded machine) loses the worker before its tool starts, and the test with it.
    const leaseMs = 2_000;
    const api = await instance({ role: 'api' }, { leaseMs });
    const worker = await instance({ role: 'worker' }, { leaseMs });
    const runStarted = worker.worker.nextRun();
    const stream = collect(await rpc(api.base, 'SendStreamingMessage', { message: wireMessage('long') }));
    const run = await runStarted;
    run.progress('working');
    await eventually(() => (worker.record(run.id)?.lastSeq ?? 0) >= 2, 5_000, 'the narration');
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Within a second of the last snapshot: only the event stream holds this frame, not the snapshot.
    run.started('t1', 'slow_task', { seconds: 60 });
    await eventually(() => (worker.record(run.id)?.lastSeq ?? 0) >= 3, 5_000, 'the started frame');
    await new Promise((resolve) => setTimeout(resolve, 100));
    // As a hung or cut-off process: it renews nothing and takes nothing from here on.
    const stoppedAt = Date.now();
    await worker.tasks.stopTakingRuns();
    const messages = await stream;
    expect(messages.map((m) => Number(m.id))).toEqual(Array.from({ length: messages.length }, (_, i) => i + 1));
    const events = messages.map((m) => dataOf(m).result as Record<string, Record<string, unknown>>);
    // Lease time plus a reaper period, with a wide margin for a loaded machine.
    expect(Date.now() - stoppedAt).toBeLessThan(leaseMs + 10_000);
    const last = events[events.length - 1].statusUpdate as TaskResult['result'];
    expect(last.status.state).toBe('TASK_STATE_FAILED');
    expect(last.status.message?.parts[0].text).toBe(WORKER_LOST_MESSAGE);
    const closed = events
      .map((e) => e.artifactUpdate as { artifact: { parts: { data: { toolCallId: string; phase: string; error?: string } }[] } } | undefined)
      .filter((u) => u !== undefined)
      .map((u) => u.artifact.parts[0].data);
    expect(closed).toContainEqual(expect.objectContaining({ toolCallId: 't1', phase: 'failed', error: WORKER_LOST_MESSAGE }));
    const got = await json<TaskResult>(rpc(api.base, 'GetTask', { id: run.id }));
    expect(got.result.status.state).toBe('TASK_STATE_FAILED');
    // The lost worker's late events are refused: the task stays as the reaper ended it.
    run.reply('too late');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await json<TaskResult>(rpc(api.base, 'GetTask', { id: run.id }))).result.status.state).toBe('TASK_STATE_FAILED');
  });
});
