/**
 * Scale-out with real processes: three `node dist/main.js` on one redis-server of the test's own
 * (a free loopback port, an append-only file so that a restarted Redis still holds the tasks):
 * an api instance (A), an all-role instance (B) and a worker (W). Runs go through the Redis run
 * queue to B or W; every A2A call works on A or B for any task.
 */
import Redis from 'ioredis';
import { WORKER_LOST_MESSAGE } from '../src/a2a/store/redis-run-queue';
import { buildOnce, startBuiltServer, type BuiltServer } from './support/built-server';
import { startRedis, type TestRedis } from './support/redis-server';
import { dataOf, readSse, rpc, wireMessage, type SseMessage } from './support/sse';

jest.setTimeout(240_000);

const LEASE_MS = 3_000;
const KEY_PREFIX = 'toolstream:';

type Event = { id: number; kind: string; value: Record<string, unknown> };

function summarise(messages: SseMessage[]): Event[] {
  return messages.map((message) => {
    const result = dataOf(message).result as Record<string, Record<string, unknown>>;
    const kind = Object.keys(result)[0];
    return { id: Number(message.id), kind, value: result[kind] };
  });
}

const stateOf = (event: Event): string | undefined =>
  event.kind === 'statusUpdate' ? (event.value.status as { state: string }).state : event.kind === 'task' ? (event.value.status as { state: string }).state : undefined;
const textOf = (event: Event): string | undefined =>
  ((event.value.status as { message?: { parts: { text?: string }[] } } | undefined)?.message?.parts[0]?.text);
const frameOf = (event: Event): { toolCallId: string; name: string; phase: string; error?: string } | undefined =>
  event.kind === 'artifactUpdate' ? ((event.value.artifact as { parts: { data?: unknown }[] }).parts[0].data as never) : undefined;

/** Reads a stream until `stop` says so (then aborts it) or it ends; an error (a server gone) ends it too. */
async function readUntil(response: Response, abort: AbortController | undefined, stop: (seen: Event[]) => boolean): Promise<{ events: Event[]; ended: boolean }> {
  const messages: SseMessage[] = [];
  try {
    for await (const message of readSse(response)) {
      if (message.data === undefined) continue;
      messages.push(message);
      if (stop(summarise(messages))) {
        abort?.abort();
        return { events: summarise(messages), ended: false };
      }
    }
  } catch {
    // the connection broke: what came is what we have
  }
  return { events: summarise(messages), ended: true };
}

async function json<T>(response: Response | Promise<Response>): Promise<T> {
  return (await (await response).json()) as T;
}

/** Every event of the task from its first, read on `base`. */
async function replay(base: string, id: string): Promise<Event[]> {
  return (await readUntil(await rpc(base, 'SubscribeToTask', { id }, { headers: { 'last-event-id': '0' } }), undefined, () => false)).events;
}

function expectContiguous(events: Event[], from: number): void {
  expect(events.map((e) => e.id)).toEqual(Array.from({ length: events.length }, (_, i) => from + i));
}

describe('three processes on one Redis (e2e)', () => {
  let redis: TestRedis;
  let redisClient: Redis;
  let api: BuiltServer;
  let all: BuiltServer;
  let worker: BuiltServer;
  const env = (role: string): Record<string, string> => ({
    TOOLSTREAM_REDIS_URL: redis.url,
    TOOLSTREAM_ROLE: role,
    TOOLSTREAM_RUN_LEASE_MS: String(LEASE_MS),
    TOOLSTREAM_OFFLINE_PIECE_DELAY_MS: '20',
  });
  const startAll = async (): Promise<void> => {
    [api, all, worker] = await Promise.all([startBuiltServer(env('api')), startBuiltServer(env('all')), startBuiltServer(env('worker'))]);
  };
  let finishedTask = '';
  let finishedEvents: Event[] = [];

  beforeAll(async () => {
    await buildOnce();
    redis = await startRedis({ persist: true });
    redisClient = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    redisClient.on('error', () => undefined);
    await startAll();
  });
  afterAll(async () => {
    await Promise.all([api, all, worker].map((s) => s?.stop()));
    redisClient?.disconnect();
    await redis?.stop();
  });

  it('a worker serves /healthz only; a bad TOOLSTREAM_ROLE stops the boot naming it', async () => {
    expect((await fetch(`${worker.base}/healthz`)).status).toBe(200);
    expect((await rpc(worker.base, 'GetTask', { id: 'x' })).status).toBe(404);
    await expect(startBuiltServer({ ...env('boss') })).rejects.toThrow('TOOLSTREAM_ROLE must be one of all, api, worker, got "boss"');
  });

  it('a stream dropped on A resumes on B with Last-Event-ID: contiguous, nothing lost or doubled, the run not cancelled; GetTask and ListTasks on both', async () => {
    const abort = new AbortController();
    const response = await rpc(api.base, 'SendStreamingMessage', { message: wireMessage('take a slow step of 2500 ms') }, { signal: abort.signal });
    const onA = (await readUntil(response, abort, (seen) => seen.some((e) => frameOf(e)?.phase === 'started'))).events;
    const id = onA[0].value.id as string;
    const lastId = onA[onA.length - 1].id;
    await new Promise((resolve) => setTimeout(resolve, 300));

    const onB = (await readUntil(await rpc(all.base, 'SubscribeToTask', { id }, { headers: { 'last-event-id': String(lastId) } }), undefined, () => false)).events;
    expectContiguous(onB, lastId + 1);
    expect(stateOf(onB[onB.length - 1])).toBe('TASK_STATE_COMPLETED');
    const whole = await replay(api.base, id);
    expectContiguous(whole, 1);
    expect([...onA, ...onB]).toEqual(whole);

    for (const base of [api.base, all.base]) {
      const got = await json<{ result: { status: { state: string } } }>(rpc(base, 'GetTask', { id }));
      expect(got.result.status.state).toBe('TASK_STATE_COMPLETED');
      const listed = await json<{ result: { tasks: { id: string }[] } }>(rpc(base, 'ListTasks', {}));
      expect(listed.result.tasks.map((t) => t.id)).toContain(id);
    }
    finishedTask = id;
    finishedEvents = whole;
  });

  it("CancelTask on B ends A's stream CANCELED, its slow tool failed \"cancelled\"", async () => {
    const response = await rpc(api.base, 'SendStreamingMessage', { message: wireMessage('take a slow step of 20000 ms') });
    const events: Event[] = [];
    let cancelled: Promise<Response> | undefined;
    for await (const message of readSse(response)) {
      if (message.data === undefined) continue;
      const [event] = summarise([message]);
      events.push(event);
      if (frameOf(event)?.phase === 'started' && !cancelled) cancelled = rpc(all.base, 'CancelTask', { id: events[0].value.id as string });
    }
    expect((await json<{ result: { status: { state: string } } }>(cancelled as Promise<Response>)).result.status.state).toBe('TASK_STATE_CANCELED');
    expect(stateOf(events[events.length - 1])).toBe('TASK_STATE_CANCELED');
    expect(events.map(frameOf)).toContainEqual(expect.objectContaining({ name: 'slow_task', phase: 'failed', error: 'cancelled' }));
  });

  it('a second turn on B continues the conversation started on A', async () => {
    const first = await json<{ result: { task: { id: string; contextId: string; status: { state: string } } } }>(
      rpc(api.base, 'SendMessage', { message: wireMessage('weather in Paris') }),
    );
    expect(first.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const contextId = first.result.task.contextId;
    const second = await json<{ result: { task: { contextId: string; status: { state: string } } } }>(
      rpc(all.base, 'SendMessage', { message: wireMessage('what is 12*7', { contextId }) }),
    );
    expect(second.result.task).toMatchObject({ contextId, status: { state: 'TASK_STATE_COMPLETED' } });
    const listed = await json<{ result: { tasks: { id: string }[] } }>(rpc(all.base, 'ListTasks', { contextId }));
    expect(listed.result.tasks).toHaveLength(2);
  });

  it('SIGKILL of the process running a task: it ends FAILED "worker was lost" on A within the lease time, its open tool closed as failed', async () => {
    const response = await rpc(api.base, 'SendStreamingMessage', { message: wireMessage('take a slow step of 60000 ms') });
    const events: Event[] = [];
    let killedAt = 0;
    for await (const message of readSse(response)) {
      if (message.data === undefined) continue;
      const [event] = summarise([message]);
      events.push(event);
      if (frameOf(event)?.phase === 'started' && !killedAt) {
        // The task's hash names the process that runs it (host:pid).
        const runner = await redisClient.hget(`${KEY_PREFIX}task:${events[0].value.id as string}`, 'runner');
        const pid = Number(runner?.split(':').pop());
        const victim = [all, worker].find((s) => s.child.pid === pid);
        expect(victim).toBeDefined();
        victim?.child.kill('SIGKILL');
        killedAt = Date.now();
        await victim?.exited;
        if (victim === all) all = await startBuiltServer(env('all'));
        else worker = await startBuiltServer(env('worker'));
      }
    }
    const last = events[events.length - 1];
    expect(stateOf(last)).toBe('TASK_STATE_FAILED');
    expect(textOf(last)).toBe(WORKER_LOST_MESSAGE);
    // The lease, a reaper's period, and a wide margin for a loaded machine (the restart included).
    expect(Date.now() - killedAt).toBeLessThan(LEASE_MS + 30_000);
    expect(events.map(frameOf)).toContainEqual(expect.objectContaining({ name: 'slow_task', phase: 'failed', error: WORKER_LOST_MESSAGE }));
  });

  it('Redis stopped and restarted mid-stream: the stream ends or goes on; resumed with Last-Event-ID, nothing is lost or doubled', async () => {
    const abort = new AbortController();
    const response = await rpc(api.base, 'SendStreamingMessage', { message: wireMessage('take a slow step of 3000 ms') }, { signal: abort.signal });
    let restarted: Promise<void> | undefined;
    const onA = (
      await readUntil(response, abort, (seen) => {
        if (!restarted && seen.some((e) => frameOf(e)?.phase === 'started')) {
          restarted = (async () => {
            await redis.kill();
            await new Promise((resolve) => setTimeout(resolve, 700));
            await redis.restart();
          })();
        }
        return stateOf(seen[seen.length - 1]) !== undefined && ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED'].includes(stateOf(seen[seen.length - 1]) as string);
      })
    ).events;
    await restarted;
    const id = onA[0].value.id as string;
    const lastId = onA[onA.length - 1].id;
    // Back on B once Redis answers (a 503 while the instances reconnect).
    let onB: Event[] = [];
    for (let attempt = 0; attempt < 50; attempt++) {
      const resumed = await rpc(all.base, 'SubscribeToTask', { id }, { headers: { 'last-event-id': String(lastId) } });
      if (resumed.status === 200 && resumed.headers.get('content-type')?.includes('text/event-stream')) {
        onB = (await readUntil(resumed, undefined, () => false)).events;
        break;
      }
      await resumed.text();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const whole = [...onA, ...onB];
    expectContiguous(whole, 1);
    expect(stateOf(whole[whole.length - 1])).toMatch(/COMPLETED|FAILED/);
    expect(await replay(all.base, id)).toEqual(whole);
  });

  it('every instance restarted: finished tasks are still readable and replay the same events', async () => {
    await Promise.all([api, all, worker].map((s) => s.stop()));
    await startAll();
    const got = await json<{ result: { status: { state: string } } }>(rpc(api.base, 'GetTask', { id: finishedTask }));
    expect(got.result.status.state).toBe('TASK_STATE_COMPLETED');
    expect(await replay(all.base, finishedTask)).toEqual(finishedEvents);
  });
});
