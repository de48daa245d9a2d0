/**
 * Idempotent sends: a client that retries a message (its first request timed out, its
 * connection dropped) gets the task that message started, not a second run; another caller's
 * equal messageId is another message. Twice: in memory, and in Redis mode with two instances on
 * one redis-server of the test's own, where every retry goes to the other instance than the send
 * before it (a load balancer's choice), so the claim (SET NX) is what stops the second run.
 */
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import type { ScriptedRun } from './support/scripted-worker';
import { manual } from './support/scripts';
import { startRedis, type TestRedis } from './support/redis-server';
import { eventually, readSse, rpc, type SseMessage } from './support/sse';

const KEY_A = 'idem-key-a-0a1b2c3d4e5f6071';
const KEY_B = 'idem-key-b-9f8e7d6c5b4a3021';
const TTL_MS = 1_500;

const as = (key: string) => ({ 'x-api-key': key });
const message = (messageId: string, text = 'hello') => ({ messageId, role: 'ROLE_USER', parts: [{ text }] });
const taskIdOf = async (response: Response): Promise<string> => {
  const json = (await response.json()) as { result?: { task?: { id: string }; id?: string }; task?: { id: string } };
  return json.result?.task?.id ?? json.result?.id ?? json.task?.id ?? '';
};

describe.each(['in memory', 'Redis mode'] as const)('idempotent sends (e2e, %s)', (mode) => {
  let servers: ScriptedA2aApp[] = [];
  let redis: TestRedis | undefined;
  /** The first instance; in Redis mode the run of a first send is always here. */
  let server: ScriptedA2aApp;
  /** Where the k-th request of a test goes: in Redis mode the instances take turns. */
  const at = (k: number): string => servers[k % servers.length].base;
  /** Runs started on every instance. */
  const runCount = (): number => servers.reduce((sum, s) => sum + s.worker.runs.size, 0);

  beforeAll(async () => {
    const options = { auth: { apiKeys: [KEY_A, KEY_B] }, taskTtlMs: TTL_MS };
    if (mode === 'Redis mode') {
      redis = await startRedis();
      const shared = { ...options, redis: { connection: redis.url } };
      // The second instance is an api instance: it takes no runs from the run queue, so every run is the first's.
      servers = [await startScriptedA2aApp(manual, shared, { bodyParser: false }), await startScriptedA2aApp(manual, { ...shared, role: 'api' }, { bodyParser: false })];
    } else {
      servers = [await startScriptedA2aApp(manual, options, { bodyParser: false })];
    }
    server = servers[0];
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await redis?.stop();
  });

  /** Sends a returnImmediately SendMessage (to the k-th target) and resolves with the task id. */
  async function send(messageId: string, key = KEY_A, k = 0): Promise<string> {
    return taskIdOf(await rpc(at(k), 'SendMessage', { message: message(messageId), configuration: { returnImmediately: true } }, { headers: as(key) }));
  }

  it('SendMessage repeated on every binding and version: the same task, one run', async () => {
    const runs = runCount();
    const first = await send('m-send');
    expect(await send('m-send', KEY_A, 1)).toBe(first);
    const rest = await fetch(`${at(2)}/message:send`, {
      method: 'POST',
      headers: { ...as(KEY_A), 'a2a-version': '1.0', 'content-type': 'application/json' },
      body: JSON.stringify({ message: message('m-send'), configuration: { returnImmediately: true } }),
    });
    expect(await taskIdOf(rest)).toBe(first);
    const v03 = await rpc(at(3), 'message/send', { message: { kind: 'message', messageId: 'm-send', role: 'user', parts: [{ kind: 'text', text: 'hello' }] }, configuration: { blocking: false } }, { version: null, headers: as(KEY_A) });
    expect(await taskIdOf(v03)).toBe(first);
    expect(runCount()).toBe(runs + 1);
  });

  it('a blocking retry waits for the same task and answers it finished; concurrent retries start one run', async () => {
    const runs = runCount();
    const nextRun = Promise.race(servers.map((s) => s.worker.nextRun()));
    const blocking = [0, 1, 2].map((k) => rpc(at(k), 'SendMessage', { message: message('m-block') }, { headers: as(KEY_A) }));
    const run = await nextRun;
    run.reply('done once');
    const answers = (await Promise.all(blocking.map(async (r) => (await (await r).json()) as { result: { task: { id: string; status: { state: string } } } }))).map((a) => a.result.task);
    expect(new Set(answers.map((t) => t.id))).toEqual(new Set([run.id]));
    expect(answers.map((t) => t.status.state)).toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_COMPLETED', 'TASK_STATE_COMPLETED']);
    expect(runCount()).toBe(runs + 1);
  });

  it('SendStreamingMessage repeated follows the task from its start, or from Last-Event-ID', async () => {
    const runs = runCount();
    const nextRun = server.worker.nextRun();
    const first = readSse(await rpc(at(0), 'SendStreamingMessage', { message: message('m-stream') }, { headers: as(KEY_A) }));
    const run: ScriptedRun = await nextRun;
    await first.next();
    run.started('c1', 'weather', { city: 'Paris' });

    const retry = await collectAfter(rpc(at(1), 'SendStreamingMessage', { message: message('m-stream') }, { headers: as(KEY_A) }));
    const rest = await collectAfter(
      fetch(`${at(3)}/message:stream`, {
        method: 'POST',
        headers: { ...as(KEY_A), 'a2a-version': '1.0', 'content-type': 'application/json', 'last-event-id': '1' },
        body: JSON.stringify({ message: message('m-stream') }),
      }),
    );
    run.completed('c1', 'weather', { sunny: true });
    run.reply('done');
    const [fromStart, fromOne] = await Promise.all([retry.all, rest.all]);
    const ids = fromStart.map((m) => Number(m.id));
    // The Task, the frame started, completed, the answer, COMPLETED: all of it, from the start.
    expect(ids).toEqual([1, 2, 3, 4, 5]);
    expect(fromStart[0].data).toContain(`"id":"${run.id}"`);
    expect(fromStart[4].data).toContain('TASK_STATE_COMPLETED');
    expect(fromOne.map((m) => Number(m.id))).toEqual([2, 3, 4, 5]);
    expect(runCount()).toBe(runs + 1);
    await first.return(undefined);
  });

  /** Opens a stream and collects it to the end, once it has attached (the first event is in). */
  async function collectAfter(request: Promise<Response>): Promise<{ all: Promise<SseMessage[]> }> {
    const events = readSse(await request);
    const head = await events.next();
    const rest = (async () => {
      const all = head.done ? [] : [head.value];
      for await (const m of events) all.push(m);
      return all.filter((m) => m.data !== undefined);
    })();
    // Wrapped: an async function returning a promise would wait for the whole stream.
    return { all: rest };
  }

  it("another caller's equal messageId is another message", async () => {
    const runs = runCount();
    const mine = await send('m-shared', KEY_A);
    const theirs = await send('m-shared', KEY_B, 1);
    expect(theirs).not.toBe(mine);
    // In Redis mode a worker takes each run from the queue a moment later.
    await eventually(() => runCount() === runs + 2, 5_000, 'two runs');
    // And each caller's retry still finds its own.
    expect(await send('m-shared', KEY_B, 2)).toBe(theirs);
    expect(await send('m-shared', KEY_A, 3)).toBe(mine);
    expect(runCount()).toBe(runs + 2);
  });

  it('once the task has expired, the same messageId is a new message', async () => {
    const nextRun = server.worker.nextRun();
    // In Redis mode the claim is made on the api instance and the task expires on the other.
    const first = await send('m-expire', KEY_A, 1);
    (await nextRun).reply('done');
    await new Promise((resolve) => setTimeout(resolve, TTL_MS + 500));
    const again = await send('m-expire', KEY_A, 0);
    expect(again).not.toBe(first);
  });
});
