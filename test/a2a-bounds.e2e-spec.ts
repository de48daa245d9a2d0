import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import { slowTool, toolStorm } from './support/scripts';
import { collect, dataOf, rpc, wireMessage, type SseMessage } from './support/sse';

/** The StreamResponse kind and seq of each event of a JSON-RPC 1.0 stream. */
function summarise(messages: SseMessage[]): { id: number; kind: string; value: Record<string, unknown> }[] {
  return messages.map((message) => {
    const result = dataOf(message).result as Record<string, Record<string, unknown>>;
    const kind = Object.keys(result)[0];
    return { id: Number(message.id), kind, value: result[kind] };
  });
}

const KEY_A = 'key-a-0123456789abcdef';
const KEY_B = 'key-b-0123456789abcdef';

describe('bounded tasks (e2e)', () => {
  let t: ScriptedA2aApp;
  afterEach(() => t?.close());

  it.each([
    ['in one burst', toolStorm(10_500)],
    ['a batch per event-loop turn', toolStorm(10_500, 500)],
  ])('a task past 20,000 events (%s): its stream gets the Task first, then every event or a snapshot and the live tail', async (_, script) => {
    t = await startScriptedA2aApp(script);
    const response = await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('storm') });
    expect(response.status).toBe(200);
    const events = summarise(await collect(response));
    expect(events[0].kind).toBe('task');
    const taskId = events[0].value.id as string;
    // After the Task: contiguous ids up to the terminal status.
    const ids = events.map((e) => e.id);
    ids.slice(1).forEach((id, i) => expect(id).toBe(ids[0] + i + 1));
    // The last is the terminal status, or the Task itself when it came as a snapshot of the ended task.
    const last = events[events.length - 1];
    expect((last.value.status as { state: string }).state).toBe('TASK_STATE_COMPLETED');
    expect(last.id).toBe(21_004); // the Task, thinking, 21,000 frames, the answer, COMPLETED
    // The snapshot the stream (or GetTask) sends is small, however long the task.
    expect(JSON.stringify(events[0].value).length).toBeLessThan(256 * 1024);
    const got = (await (await rpc(t.base, 'GetTask', { id: taskId })).json()) as { result: { artifacts: unknown[] } };
    expect(got.result.artifacts.length).toBeLessThanOrEqual(101);
  });

  it('refuses tasks past the live limits on both bindings, per caller (429) and for the server (503), with Retry-After', async () => {
    t = await startScriptedA2aApp(slowTool, { maxLiveTasks: 3, maxLiveTasksPerCaller: 2, auth: { apiKeys: [KEY_A, KEY_B] } });
    const send = (key: string) =>
      rpc(t.base, 'SendMessage', { message: wireMessage('slow'), configuration: { returnImmediately: true } }, { headers: { 'x-api-key': key } });
    const rest = (key: string) =>
      fetch(`${t.base}/message:send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': key },
        body: JSON.stringify({ message: wireMessage('slow'), configuration: { returnImmediately: true } }),
      });
    const first = (await (await send(KEY_A)).json()) as { result: { task: { id: string } } };
    expect((await send(KEY_A)).status).toBe(200);

    const perCaller = await send(KEY_A);
    expect(perCaller.status).toBe(429);
    expect(perCaller.headers.get('retry-after')).toBe('5');
    const perCallerBody = (await perCaller.json()) as { error: { code: number; message: string } };
    expect(perCallerBody.error.code).toBe(-32603);
    expect(perCallerBody.error.message).toContain('maxLiveTasksPerCaller');
    const perCallerRest = await rest(KEY_A);
    expect(perCallerRest.status).toBe(429);
    expect(perCallerRest.headers.get('retry-after')).toBe('5');
    expect(((await perCallerRest.json()) as { error: { status: string } }).error.status).toBe('RESOURCE_EXHAUSTED');

    expect((await send(KEY_B)).status).toBe(200);
    const global = await send(KEY_B);
    expect(global.status).toBe(503);
    expect(global.headers.get('retry-after')).toBe('5');
    expect(((await global.json()) as { error: { message: string } }).error.message).toContain('maxLiveTasks');
    const globalRest = await rest(KEY_B);
    expect(globalRest.status).toBe(503);
    expect(((await globalRest.json()) as { error: { status: string } }).error.status).toBe('UNAVAILABLE');

    // A cancelled task frees its slot.
    await rpc(t.base, 'CancelTask', { id: first.result.task.id }, { headers: { 'x-api-key': KEY_A } });
    expect((await send(KEY_A)).status).toBe(200);
  });

  it('ends a run that outlives runDeadlineMs FAILED, its open tool closed, and tells the runtime to stop', async () => {
    t = await startScriptedA2aApp(slowTool, { runDeadlineMs: 300 });
    const events = summarise(await collect(await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('slow') })));
    const last = events[events.length - 1];
    expect((last.value.status as { state: string }).state).toBe('TASK_STATE_FAILED');
    expect(JSON.stringify(last.value)).toContain('the run did not finish within 300 ms (runDeadlineMs)');
    const closed = events.filter((e) => e.kind === 'artifactUpdate').map((e) => JSON.stringify(e.value));
    expect(closed[closed.length - 1]).toContain('"phase":"failed"');
    expect(t.worker.cancels).toHaveLength(1);
  });
});
