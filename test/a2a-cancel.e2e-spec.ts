import { TaskState } from '@a2a-js/sdk';
import { parseToolCall } from '../src/extensions';
import { CLIENT_KINDS, describeEvent, sdkClient, userMessage } from './support/clients';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import { parallelWeatherAndClock, slowTool } from './support/scripts';
import { collect, dataOf, eventually, readSse, rpc, wireMessage, type SseMessage } from './support/sse';
import { STORE_MODES, useStoreMode } from './support/store-modes';

/** Everything a finished task held is released: bus listeners, topic subscriptions, streams. */
async function expectBaseline(t: ScriptedA2aApp, busBaseline: number): Promise<void> {
  await eventually(() => t.bus.listenerCount() === busBaseline && t.tasks.metrics().openStreams === 0, 5_000, 'listeners and streams back to baseline');
  expect(t.tasks.metrics()).toMatchObject({ liveTasks: 0, topicSubscriptions: 0, openStreams: 0 });
}

async function firstFrame(reader: AsyncGenerator<SseMessage>): Promise<void> {
  for (;;) {
    const { value, done } = await reader.next();
    if (done) throw new Error('the stream ended before a frame');
    const result = (dataOf(value).result ?? dataOf(value)) as { artifactUpdate?: { artifact: { parts: unknown[] } } };
    if (result.artifactUpdate && parseToolCall(result.artifactUpdate.artifact.parts)) return;
  }
}

/** The task's state as the store has it (in Redis mode the writer forgets a finished task at once: it lives in Redis). */
async function stateOf(t: ScriptedA2aApp, id: string): Promise<TaskState | undefined> {
  return (await t.tasks.find(id, undefined))?.state;
}

/** One contract, both task stores: in Redis mode each app is one instance of role all on a redis-server of the suite's own. */
describe.each(STORE_MODES)('cancel and disconnect (e2e, %s store)', (mode) => {
  const store = useStoreMode(mode);
  afterAll(() => store.stop());

  describe('with cancelOnDisconnect on (the default), after a short grace', () => {
    let t: ScriptedA2aApp;
    let busBaseline: number;

    beforeAll(async () => {
      t = await startScriptedA2aApp(slowTool, { disconnectGraceMs: 100, ...store.options() });
      busBaseline = t.bus.listenerCount();
    });
    afterAll(async () => {
      await t.close();
    });

    it.each(CLIENT_KINDS)('CancelTask through the %s client aborts the run: open tools fail "cancelled", the task ends CANCELED', async (kind) => {
      const client = await sdkClient(t.base, kind);
      const stream = client.sendMessageStream({ tenant: '', message: userMessage('search everything'), configuration: undefined, metadata: undefined });
      const seen: string[] = [];
      let taskId = '';
      for await (const event of stream) {
        seen.push(describeEvent(event));
        if (event.payload?.$case === 'task') taskId = event.payload.value.id;
        if (seen[seen.length - 1] === 'started slow_search') {
          const cancelled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
          expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
        }
      }
      expect(seen).toEqual(['task', 'WORKING: thinking', 'started slow_search', 'failed slow_search', 'CANCELED: cancelled by the client']);
      expect(t.worker.cancels).toContainEqual({ correlationId: taskId, reason: 'cancelled by the client' });
      await expectBaseline(t, busBaseline);
    });

    it.each(['JSON-RPC', 'HTTP+JSON'])('a client that disconnects from a %s stream aborts the run and leaves no listener behind', async (binding) => {
      const controller = new AbortController();
      const nextRun = t.worker.nextRun();
      const response =
        binding === 'JSON-RPC'
          ? await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('search') }, { signal: controller.signal })
          : await fetch(`${t.base}/message:stream`, {
              method: 'POST',
              signal: controller.signal,
              headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
              body: JSON.stringify({ message: wireMessage('search') }),
            });
      const run = await nextRun;
      await firstFrame(readSse(response));
      controller.abort();
      await eventually(() => run.settled, 5_000, 'the run to be cancelled');
      expect(t.worker.cancels).toContainEqual({ correlationId: run.id, reason: 'the client disconnected' });
      expect(await stateOf(t, run.id)).toBe(TaskState.TASK_STATE_CANCELED);
      await expectBaseline(t, busBaseline);
    });

    it('a client that disconnects from a blocking SendMessage aborts the run too', async () => {
      const controller = new AbortController();
      const nextRun = t.worker.nextRun();
      const pending = rpc(t.base, 'SendMessage', { message: wireMessage('search') }, { signal: controller.signal }).catch((err: unknown) => err);
      const run = await nextRun;
      controller.abort();
      await pending;
      await eventually(() => run.settled, 5_000, 'the run to be cancelled');
      expect(await stateOf(t, run.id)).toBe(TaskState.TASK_STATE_CANCELED);
      await expectBaseline(t, busBaseline);
    });

    it('a SubscribeToTask client that leaves does not cancel the task', async () => {
      const nextRun = t.worker.nextRun();
      const origin = await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('search') });
      const run = await nextRun;
      const controller = new AbortController();
      const watcher = await rpc(t.base, 'SubscribeToTask', { id: run.id }, { signal: controller.signal });
      await readSse(watcher).next();
      controller.abort();
      // Well past the grace (100 ms): a leave that cancelled would have by now.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(run.settled).toBe(false);
      expect(t.worker.cancels.map((c) => c.correlationId)).not.toContain(run.id);
      run.completed('call_slow', 'slow_search', 'found');
      run.reply('found it');
      const events = await collect(origin);
      expect(JSON.stringify(dataOf(events[events.length - 1]))).toContain('TASK_STATE_COMPLETED');
      await expectBaseline(t, busBaseline);
    });
  });

  it('with cancelOnDisconnect off the run goes on, and the client rejoins with SubscribeToTask', async () => {
    const t = await startScriptedA2aApp(parallelWeatherAndClock, { cancelOnDisconnect: false, ...store.options() });
    try {
      t.worker.script = async (run) => {
        run.progress('thinking');
        run.started('a', 'weather');
        await run.sleep(100);
        run.completed('a', 'weather', { tempC: 18 });
        run.reply('18 °C');
      };
      const controller = new AbortController();
      const nextRun = t.worker.nextRun();
      const response = await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('weather') }, { signal: controller.signal });
      const run = await nextRun;
      const reader = readSse(response);
      const first = (await reader.next()).value as SseMessage;
      controller.abort();
      const rejoined = await collect(await rpc(t.base, 'SubscribeToTask', { id: run.id }, { headers: { 'Last-Event-ID': first.id! } }));
      expect(rejoined.map((m) => Number(m.id))).toEqual([2, 3, 4, 5, 6]);
      expect(t.worker.cancels).toEqual([]);
      expect(await stateOf(t, run.id)).toBe(TaskState.TASK_STATE_COMPLETED);
    } finally {
      await t.close();
    }
  });

  it('with a grace, a client that drops and resumes with Last-Event-ID keeps its run; one that never returns is cancelled', async () => {
    // The resume must be counted within the grace, a blip and a request later: room for a loaded machine.
    const graceMs = 1_500;
    const t = await startScriptedA2aApp(parallelWeatherAndClock, { disconnectGraceMs: graceMs, ...store.options() });
    try {
      t.worker.script = async (run) => {
        run.progress('thinking');
        run.started('a', 'weather');
        // Past the grace: when it ends, only the resumed stream keeps the run from being cancelled.
        await run.sleep(graceMs + 500);
        run.completed('a', 'weather', { tempC: 18 });
        run.reply('18 °C');
      };
      const controller = new AbortController();
      const nextRun = t.worker.nextRun();
      const response = await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('weather') }, { signal: controller.signal });
      const run = await nextRun;
      const first = (await readSse(response).next()).value as SseMessage;
      controller.abort();
      await new Promise((resolve) => setTimeout(resolve, 100)); // a network blip, shorter than the grace
      const resumed = await collect(await rpc(t.base, 'SubscribeToTask', { id: run.id }, { headers: { 'Last-Event-ID': first.id! } }));
      expect(resumed.map((m) => Number(m.id))).toEqual([2, 3, 4, 5, 6]);
      expect(t.worker.cancels).toEqual([]);
      expect(await stateOf(t, run.id)).toBe(TaskState.TASK_STATE_COMPLETED);

      t.worker.script = async (run) => {
        run.progress('thinking');
        run.started('b', 'weather');
        await run.sleep(5_000);
        run.reply('too late');
      };
      const gone = new AbortController();
      const nextGone = t.worker.nextRun();
      const abandoned = await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('weather') }, { signal: gone.signal });
      const goneRun = await nextGone;
      await readSse(abandoned).next();
      gone.abort();
      await eventually(() => goneRun.settled, graceMs + 5_000, 'the abandoned run to be cancelled');
      expect(t.worker.cancels).toContainEqual({ correlationId: goneRun.id, reason: 'the client disconnected' });
    } finally {
      await t.close();
    }
  });

  it('settles the task as CANCELED itself when the runtime never answers the cancel', async () => {
    const t = await startScriptedA2aApp(slowTool, { cancelTimeoutMs: 50, ...store.options() });
    try {
      const nextRun = t.worker.nextRun();
      const stream = await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('search') });
      const run = await nextRun;
      await eventually(() => (t.record(run.id)?.lastSeq ?? 0) >= 3, 5_000, 'the started frame');
      t.worker.stop(); // nobody hears the cancel now
      const cancelled = dataOf(await collectJson(await rpc(t.base, 'CancelTask', { id: run.id })));
      expect(cancelled).toMatchObject({ result: { status: { state: 'TASK_STATE_CANCELED' } } });
      const events = (await collect(stream)).map((m) => JSON.stringify(dataOf(m)));
      expect(events[3]).toContain('"phase":"failed","error":"cancelled"');
      expect(t.bus.listenerCount()).toBe(0);
    } finally {
      await t.close();
    }
  });
});

async function collectJson(response: Response): Promise<SseMessage> {
  return { data: await response.text() };
}
