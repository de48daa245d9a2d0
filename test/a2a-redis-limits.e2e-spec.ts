/**
 * The limits of Redis mode hold across instances: live tasks (maxLiveTasks, maxLiveTasksPerCaller)
 * are counted in Redis for every instance on it; a killed instance's slots come back once its
 * lease lapses. Two in-process instances on one redis-server of the test's own, and one
 * `node dist/main.js` for the SIGKILL case.
 */
import Redis from 'ioredis';
import { A2aHttpError } from '../src/a2a/a2a-errors';
import { RedisLiveLimits, type RedisLiveLimitsOptions } from '../src/a2a/store/redis-live-limits';
import { RENEWED_PER_CALL } from '../src/a2a/store/redis-scripts';
import { unavailableIfDown } from '../src/a2a/store/redis-task-store';
import { createHash } from 'node:crypto';
import { TaskStore } from '../src/a2a';
import { queueTimeoutMessage } from '../src/a2a/store/redis-run-queue';
import type { RedisTaskStore } from '../src/a2a/store/redis-task-store';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import { buildOnce, startBuiltServer, type BuiltServer } from './support/built-server';
import { manual } from './support/scripts';
import { eventually, rpc, wireMessage } from './support/sse';
import { startRedis, type TestRedis } from './support/redis-server';

jest.setTimeout(120_000);

const KEY_A = 'key-a-0123456789abcdef';
const KEY_B = 'key-b-0123456789abcdef';
/** Room for two finished tasks with a 50,000-character answer (237,184 bytes each by MEMORY USAGE here), not three. */
const BYTE_CAP = 600_000;

type SendResult = { result: { task: { id: string; status: { state: string } } } };
type TaskResult = { result?: { id: string; status: { state: string; message?: { parts: { text: string }[] } } }; error?: { code: number; message: string } };

async function json<T>(response: Response | Promise<Response>): Promise<T> {
  return (await (await response).json()) as T;
}

describe('Redis mode limits across instances (e2e)', () => {
  let redis: TestRedis;
  const apps: ScriptedA2aApp[] = [];
  let prefix = 0;
  let keyPrefix = '';
  const instance = async (extra: Record<string, unknown> = {}, redisExtra: Record<string, unknown> = {}): Promise<ScriptedA2aApp> => {
    const app = await startScriptedA2aApp(manual, { redis: { connection: redis.url, keyPrefix, ...redisExtra }, cancelOnDisconnect: false, ...extra });
    apps.push(app);
    return app;
  };
  const send = (app: ScriptedA2aApp | BuiltServer, key?: string): Promise<Response> =>
    rpc(app.base, 'SendMessage', { message: wireMessage('hold on'), configuration: { returnImmediately: true } }, key ? { headers: { 'x-api-key': key } } : {});

  beforeAll(async () => {
    redis = await startRedis();
  });
  beforeEach(() => {
    keyPrefix = `l${++prefix}:`;
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('maxLiveTasks and maxLiveTasksPerCaller hold across two instances; a finished or cancelled task frees its slot on the other', async () => {
    const limits = { maxLiveTasks: 3, maxLiveTasksPerCaller: 2, auth: { apiKeys: [KEY_A, KEY_B] } };
    // A only fronts; B fronts and runs every task (its scripted worker holds each run until told).
    const a = await instance({ ...limits, role: 'api' });
    const b = await instance(limits);
    const first = await json<SendResult>(send(a, KEY_A));
    expect((await send(b, KEY_A)).status).toBe(200);

    // Caller A's third, on either instance: 429 naming the per-caller limit.
    for (const app of [a, b]) {
      const refused = await send(app, KEY_A);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('5');
      const body = await json<{ error: { code: number; message: string } }>(refused);
      expect(body.error.code).toBe(-32603);
      expect(body.error.message).toContain('maxLiveTasksPerCaller');
    }

    expect((await send(b, KEY_B)).status).toBe(200);
    // The server holds 3 live tasks (two on A, one on B): the next, on either, is 503 naming maxLiveTasks.
    for (const app of [a, b]) {
      const refused = await send(app, KEY_B);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect((await json<{ error: { message: string } }>(refused)).error.message).toContain('(maxLiveTasks)');
    }

    // One of A's tasks finishes (on B's worker): a task is admitted again, on A.
    await eventually(() => b.worker.runs.has(first.result.task.id), 10_000, 'B runs the first task');
    b.worker.runs.get(first.result.task.id)?.reply('done');
    await eventually(() => b.tasks.running().every((task) => task.id !== first.result.task.id), 10_000, 'the first task ends');
    const again = await waitForStatus(() => send(a, KEY_B), 200);
    const third = await json<SendResult>(again);
    expect((await send(b, KEY_B)).status).toBe(503);

    // A cancelled task (cancelled on A, run on B) frees its slot too.
    await eventually(() => b.worker.runs.has(third.result.task.id), 10_000, 'B runs the third task');
    const cancelled = await json<TaskResult>(rpc(a.base, 'CancelTask', { id: third.result.task.id }, { headers: { 'x-api-key': KEY_B } }));
    expect(cancelled.result?.status.state).toBe('TASK_STATE_CANCELED');
    expect((await waitForStatus(() => send(b, KEY_B), 200)).status).toBe(200);
  });

  it('a queued task cancelled on another instance frees its slot; a lost worker\'s task frees its slot', async () => {
    const leaseMs = 600;
    const a = await instance({ maxLiveTasks: 1, role: 'api' }, { leaseMs });
    const queued = await json<SendResult>(send(a));
    expect((await send(a)).status).toBe(503);
    const b = await instance({ maxLiveTasks: 1, role: 'api' }, { leaseMs });
    await json<TaskResult>(rpc(b.base, 'CancelTask', { id: queued.result.task.id }));
    const next = await json<SendResult>(waitForStatus(() => send(b), 200));

    // A worker takes it and is lost (renews nothing from here on): the reaper ends the task and frees the slot.
    const worker = await instance({ maxLiveTasks: 1, role: 'worker' }, { leaseMs });
    await eventually(() => worker.worker.runs.has(next.result.task.id), 10_000, 'the worker takes the run');
    await worker.tasks.stopTakingRuns();
    const ended = await waitFor(async () => (await json<TaskResult>(rpc(a.base, 'GetTask', { id: next.result.task.id }))).result?.status.state === 'TASK_STATE_FAILED', 15_000);
    expect(ended).toBe(true);
    expect((await waitForStatus(() => send(a), 200)).status).toBe(200);
  });

  /** Runs one task on `app` to its end with `answer`, and waits until it is filed among the finished tasks. */
  const finishOne = async (app: ScriptedA2aApp, answer: string): Promise<{ id: string; messageId: string }> => {
    const message = wireMessage('answer me');
    const runStarted = app.worker.nextRun();
    const sent = await json<SendResult>(rpc(app.base, 'SendMessage', { message, configuration: { returnImmediately: true } }));
    (await runStarted).reply(answer);
    const id = sent.result.task.id;
    const client = new Redis(redis.url);
    try {
      // Filed among the finished tasks (or already evicted by its own filing).
      const filed = await waitFor(async () => (await client.zscore(`${keyPrefix}finished:`, id)) !== null || (await client.exists(`${keyPrefix}task:${id}`)) === 0, 10_000);
      expect(filed).toBe(true);
    } finally {
      client.disconnect();
    }
    return { id: sent.result.task.id, messageId: message.messageId as string };
  };
  const getTask = (app: ScriptedA2aApp, id: string) => json<TaskResult>(rpc(app.base, 'GetTask', { id }));

  it('maxRetainedTasks holds in Redis: the oldest finished task is evicted first (on every instance), the newest stay readable', async () => {
    const writer = await instance({ maxRetainedTasks: 2 });
    const reader = await instance({ maxRetainedTasks: 2, role: 'api' });
    const tasks = [];
    for (const answer of ['one', 'two', 'three']) tasks.push(await finishOne(writer, answer));
    expect(await (writer.app.get(TaskStore) as RedisTaskStore).retention?.retained()).toMatchObject({ tasks: 2 });
    for (const app of [writer, reader]) {
      expect((await getTask(app, tasks[0].id)).error?.code).toBe(-32001);
      for (const kept of tasks.slice(1)) expect((await getTask(app, kept.id)).result?.status.state).toBe('TASK_STATE_COMPLETED');
      const listed = await json<{ result: { tasks: { id: string }[] } }>(rpc(app.base, 'ListTasks', {}));
      expect(listed.result.tasks.map((task) => task.id)).toEqual([tasks[2].id, tasks[1].id]);
    }
    // Its message claim went with it: the same message again is a new task.
    const again = await json<SendResult>(
      rpc(reader.base, 'SendMessage', { message: { ...wireMessage('answer me'), messageId: tasks[0].messageId }, configuration: { returnImmediately: true } }),
    );
    expect(again.result.task.id).not.toBe(tasks[0].id);
  });

  it('maxRetainedBytes holds in Redis: past it the oldest finished tasks are evicted first', async () => {
    const big = 'x'.repeat(50_000);
    const writer = await instance({ maxRetainedBytes: BYTE_CAP });
    const store = writer.app.get(TaskStore) as RedisTaskStore;
    const tasks = [];
    for (let i = 0; i < 4; i++) tasks.push(await finishOne(writer, `${i}${big}`));
    const retained = (await store.retention?.retained()) ?? { tasks: 0, bytes: 0 };
    expect(retained.bytes).toBeLessThanOrEqual(BYTE_CAP);
    // Allocation sizes may differ with the Redis version: whatever fits, it is the newest that stay.
    expect(retained.tasks).toBeGreaterThanOrEqual(1);
    expect(retained.tasks).toBeLessThan(tasks.length);
    const evicted = tasks.length - retained.tasks;
    for (const gone of tasks.slice(0, evicted)) expect((await getTask(writer, gone.id)).error?.code).toBe(-32001);
    for (const kept of tasks.slice(evicted)) expect((await getTask(writer, kept.id)).result?.status.state).toBe('TASK_STATE_COMPLETED');
  });

  describe('run queue loose ends', () => {
    it('a run no worker takes within redis.queueTimeoutMs ends FAILED naming the option, and leaves the queue', async () => {
      const api = await instance({ role: 'api' }, { queueTimeoutMs: 500, leaseMs: 600 });
      const sent = await json<SendResult>(send(api));
      let task: TaskResult | undefined;
      await waitFor(async () => (task = await getTask(api, sent.result.task.id)).result?.status.state === 'TASK_STATE_FAILED', 10_000);
      expect(task?.result?.status.state).toBe('TASK_STATE_FAILED');
      expect(task?.result?.status.message?.parts[0].text).toBe(queueTimeoutMessage(500));
      const client = new Redis(redis.url);
      try {
        expect(await client.xlen(`${keyPrefix}runs:`)).toBe(0);
      } finally {
        client.disconnect();
      }
      // Its live slot is free again.
      expect((await send(api)).status).toBe(200);
    });

    it('a CancelTask on another instance while the worker is taking the run: the run never starts, the task ends CANCELED at once', async () => {
      // A long cancelTimeoutMs: the second cancel request (after it) cannot be what ends the task.
      const api = await instance({ role: 'api', cancelTimeoutMs: 60_000 });
      const worker = await instance({ role: 'worker', cancelTimeoutMs: 60_000 });
      // The worker pauses right after its take-over step (the lease is its own, the run not registered yet).
      const store = worker.app.get(TaskStore) as RedisTaskStore;
      const takeOver = store.takeOver.bind(store);
      let resume!: () => void;
      const paused = new Promise<void>((resolve) => (resume = resolve));
      let took!: (id: string) => void;
      const taken = new Promise<string>((resolve) => (took = resolve));
      (store as { takeOver: RedisTaskStore['takeOver'] }).takeOver = async (id, from, leaseMs, entry) => {
        const task = await takeOver(id, from, leaseMs, entry);
        if (task && from === 'queued') {
          took(id);
          await paused;
        }
        return task;
      };
      const sent = await json<SendResult>(send(api));
      expect(await taken).toBe(sent.result.task.id);
      const cancelledAt = Date.now();
      const cancel = json<TaskResult>(rpc(api.base, 'CancelTask', { id: sent.result.task.id }));
      // The cancel is published while the worker is still in its take-over step.
      await new Promise((resolve) => setTimeout(resolve, 500));
      resume();
      const cancelled = await cancel;
      expect(cancelled.result?.status.state).toBe('TASK_STATE_CANCELED');
      expect(Date.now() - cancelledAt).toBeLessThan(30_000);
      expect(worker.worker.runs.size).toBe(0);
    });

    it('a message whose claim outlived its task is claimed again after a bounded wait: the send makes a new task, not an endless retry', async () => {
      const api = await instance({ role: 'api' });
      const message = wireMessage('claimed before');
      const client = new Redis(redis.url);
      try {
        const claimKey = `${keyPrefix}message:-:${createHash('sha256').update(message.messageId as string).digest('hex')}`;
        await client.set(claimKey, 'a-task-that-is-gone', 'PX', 600_000);
        const sent = await json<SendResult>(rpc(api.base, 'SendMessage', { message, configuration: { returnImmediately: true } }));
        expect(sent.result.task.id).not.toBe('a-task-that-is-gone');
        expect(await client.get(claimKey)).toBe(sent.result.task.id);
      } finally {
        client.disconnect();
      }
    });
  });

  describe('the live-slot scripts (RedisLiveLimits on the real server)', () => {
    let client: Redis;
    const limits = (options: Partial<RedisLiveLimitsOptions> = {}): RedisLiveLimits =>
      new RedisLiveLimits({
        redis: client,
        key: `${keyPrefix}live:server`,
        callerSet: (caller) => `${keyPrefix}live:caller:${caller ?? '-'}`,
        taskKey: (id) => `${keyPrefix}task:${id}`,
        maxLiveTasks: 3,
        maxLiveTasksPerCaller: 2,
        leaseMs: 60_000,
        retryAfterSeconds: 5,
        guard: unavailableIfDown,
        ...options,
      });
    const running = (id: string) => client.hset(`${keyPrefix}task:${id}`, 'state', 'TASK_STATE_WORKING');
    const codeOf = (err: unknown) => (err instanceof A2aHttpError ? `${err.httpStatus} ${err.message}` : String(err));
    beforeEach(() => {
      client = new Redis(redis.url, { maxRetriesPerRequest: 1, commandTimeout: 2_000 });
    });
    afterEach(() => client.disconnect());

    it('admits both limits or neither; a lapsed slot is dropped; renewal gives back ended tasks and keeps running ones', async () => {
      const one = limits();
      await one.admit('t1', 'x');
      await one.admit('t2', 'x');
      // The caller is full: refused, and nothing taken from the server's count.
      await expect(one.admit('t3', 'x').catch(codeOf)).resolves.toMatch(/^429 .*maxLiveTasksPerCaller/);
      expect(await client.zcard(`${keyPrefix}live:server`)).toBe(2);
      await one.admit('t3', 'y');
      await expect(one.admit('t4', 'z').catch(codeOf)).resolves.toMatch(/^503 .*\(maxLiveTasks\)/);
      expect(await client.zcard(`${keyPrefix}live:caller:z`)).toBe(0);

      // t1 ended (its hash says so), t2 runs, t3 is not held here: a renewal frees t1 only.
      await client.hset(`${keyPrefix}task:t1`, 'state', 'TASK_STATE_COMPLETED');
      await running('t2');
      one.hold('t1', 'x');
      one.hold('t2', 'x');
      await one.renew();
      expect(one.heldSlots).toBe(1);
      expect(await client.zrange(`${keyPrefix}live:server`, 0, -1)).toEqual(expect.arrayContaining(['t2', 't3']));
      expect(await client.zscore(`${keyPrefix}live:server`, 't1')).toBeNull();
      one.release('t2', 'x');
      one.stop();

      // Slots of an instance that stopped renewing lapse after its lease (long enough that the
      // second admission, two round trips later on a loaded machine, still finds the first).
      const short = limits({ leaseMs: 1_000, maxLiveTasks: 1 });
      await client.del(`${keyPrefix}live:server`);
      await short.admit('s1', 'x');
      await expect(short.admit('s2', 'y').catch(codeOf)).resolves.toMatch(/^503/);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await short.admit('s2', 'y');
    });

    it('renews many slots in calls of at most RENEWED_PER_CALL tasks, one after the other, with the same outcome', async () => {
      const many = limits({ maxLiveTasks: 1_000, maxLiveTasksPerCaller: 1_000 });
      const ids = Array.from({ length: RENEWED_PER_CALL * 2 + 10 }, (_, i) => `m${i}`);
      for (const [i, id] of ids.entries()) {
        await many.admit(id, 'x');
        await client.hset(`${keyPrefix}task:${id}`, 'state', i % 10 === 0 ? 'TASK_STATE_COMPLETED' : 'TASK_STATE_WORKING');
        many.hold(id, 'x');
      }
      await client.config('RESETSTAT');
      await many.renew();
      // Script calls (the first may go as EVAL: Redis did not have the script yet).
      const stats = await client.info('commandstats');
      const calls = ['evalsha', 'eval'].reduce((sum, command) => sum + Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0), 0);
      expect(calls).toBe(3);
      // The ended tasks' slots are given back, every running one kept.
      const kept = ids.filter((_, i) => i % 10 !== 0);
      expect(many.heldSlots).toBe(kept.length);
      expect((await client.zrange(`${keyPrefix}live:server`, 0, -1)).sort()).toEqual(expect.arrayContaining(kept));
      expect(await client.zscore(`${keyPrefix}live:server`, 'm0')).toBeNull();
      many.stop();
    });

    it('Redis unreachable at admission: the store\'s clear 503 naming Redis, not a hang', async () => {
      const one = limits();
      await redis.kill();
      try {
        const startedAt = Date.now();
        const refused = await one.admit('t1', 'x').catch((err: unknown) => err);
        expect(refused).toBeInstanceOf(A2aHttpError);
        expect((refused as A2aHttpError).httpStatus).toBe(503);
        expect((refused as A2aHttpError).message).toContain('Redis');
        expect(Date.now() - startedAt).toBeLessThan(20_000);
      } finally {
        await redis.restart();
      }
    });
  });

  describe('with a real process', () => {
    let killed: BuiltServer | undefined;
    beforeAll(async () => {
      await buildOnce();
    }, 300_000);
    afterEach(async () => {
      await killed?.stop().catch(() => undefined);
      killed = undefined;
    });

    it('a SIGKILLed instance\'s live slots come back once its lease lapses', async () => {
      const leaseMs = 1_500;
      const client = new Redis(redis.url);
      await client.flushall();
      await client.quit();
      // The process fronts two tasks and no worker runs them: only its renewals keep their slots.
      killed = await startBuiltServer({
        TOOLSTREAM_REDIS_URL: redis.url,
        TOOLSTREAM_ROLE: 'api',
        TOOLSTREAM_RUN_LEASE_MS: String(leaseMs),
        TOOLSTREAM_MAX_LIVE_TASKS: '2',
      });
      keyPrefix = 'toolstream:';
      const survivor = await instance({ maxLiveTasks: 2, role: 'api' }, { leaseMs });
      expect((await send(killed)).status).toBe(200);
      expect((await send(survivor)).status).toBe(200);
      expect((await send(killed)).status).toBe(503);
      // Past a few leases the slots still hold: the process renews them.
      await new Promise((resolve) => setTimeout(resolve, 2 * leaseMs));
      expect((await send(survivor)).status).toBe(503);

      const killedAt = Date.now();
      killed.child.kill('SIGKILL');
      const admitted = await waitForStatus(() => send(survivor), 200, 30_000);
      expect(admitted.status).toBe(200);
      // Not before its lease could lapse (renewed every third of it).
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(leaseMs / 2);
      // The survivor's own task still counts: the server is full again.
      expect((await send(survivor)).status).toBe(503);
    });
  });
});

/** Sends until the answer has `status` (a slot freed elsewhere takes a moment to show), or fails after `timeoutMs`. */
async function waitForStatus(attempt: () => Promise<Response>, status: number, timeoutMs = 10_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await attempt();
    if (response.status === status || Date.now() > deadline) return response;
    await response.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}
