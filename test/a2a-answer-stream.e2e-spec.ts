import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import type { ScriptedRun } from './support/scripted-worker';
import { manual } from './support/scripts';
import { collect, dataOf, eventually, readSse, rpc, wireMessage, type SseMessage } from './support/sse';

type Json = Record<string, unknown>;

/** The answer artifact updates of a 1.0 JSON-RPC stream: [text, append, lastChunk] (ProtoJSON omits false). */
function answerPieces(messages: SseMessage[]): Array<[string, boolean, boolean]> {
  return messages.flatMap((m) => {
    const update = ((dataOf(m).result as Json | undefined)?.artifactUpdate ?? undefined) as Json | undefined;
    const artifact = update?.artifact as { name?: string; parts: Array<{ text?: string }> } | undefined;
    if (artifact?.name !== 'answer') return [];
    return [[artifact.parts.map((p) => p.text ?? '').join(''), update?.append === true, update?.lastChunk === true] as [string, boolean, boolean]];
  });
}

/** The answer artifact of a GetTask result (1.0 wire JSON), or undefined. */
async function answerSoFar(base: string, id: string): Promise<string | undefined> {
  const task = (dataOf({ data: await (await rpc(base, 'GetTask', { id })).text() }).result ?? {}) as { artifacts?: Array<{ name: string; parts: Array<{ text?: string }> }> };
  return task.artifacts?.find((a) => a.name === 'answer')?.parts.map((p) => p.text ?? '').join('');
}

describe('the streamed answer on the A2A side (e2e)', () => {
  let t: ScriptedA2aApp;
  beforeAll(async () => {
    t = await startScriptedA2aApp(manual, { cancelOnDisconnect: false });
  });
  afterAll(async () => {
    await t.close();
  });

  async function startTask(): Promise<{ run: ScriptedRun; stream: Response; id: string }> {
    const next = t.worker.nextRun();
    const stream = await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('tell me') });
    const run = await next;
    return { run, stream, id: run.id };
  }

  it('reaches 1.0 clients as answer artifact updates: append:false first, append:true after, lastChunk on the last; GetTask shows the answer so far', async () => {
    const { run, stream, id } = await startTask();
    const reading = collect(stream);
    run.progress('thinking');
    run.answer('The answer ', false);
    await eventually(() => t.record(id)?.snapshot().artifacts.some((a) => a.name === 'answer') === true, 5_000, 'the first piece');
    expect(await answerSoFar(t.base, id)).toBe('The answer ');
    run.answer('is ', true);
    run.answer('42.', true, true);
    await eventually(() => t.record(id)?.lastSeq === 5, 5_000, 'the last piece');
    expect(await answerSoFar(t.base, id)).toBe('The answer is 42.');
    run.reply('The answer is 42.');
    const messages = await reading;
    expect(answerPieces(messages)).toEqual([
      ['The answer ', false, false],
      ['is ', true, false],
      ['42.', true, true],
    ]);
    // The pieces ended with the answer: no second, whole answer artifact.
    const last = dataOf(messages[messages.length - 1]).result as Json;
    expect((last.statusUpdate as { status: { state: string } }).status.state).toBe('TASK_STATE_COMPLETED');
    expect(await answerSoFar(t.base, id)).toBe('The answer is 42.');
  });

  it('reaches 0.3 clients as artifact-update events with append and lastChunk', async () => {
    const next = t.worker.nextRun();
    const stream = await rpc(t.base, 'message/stream', { message: { kind: 'message', messageId: 'm03', role: 'user', parts: [{ kind: 'text', text: 'tell me' }] } }, { version: null });
    const run = await next;
    const reading = collect(stream);
    run.answer('Forty', false);
    run.answer('-two', true, true);
    run.reply('Forty-two');
    const updates = (await reading).map((m) => dataOf(m).result as Json).filter((r) => r.kind === 'artifact-update');
    expect(updates.map((u) => [(u.artifact as { parts: Array<{ kind: string; text: string }> }).parts, u.append, u.lastChunk])).toEqual([
      [[{ kind: 'text', text: 'Forty' }], false, false],
      [[{ kind: 'text', text: '-two' }], true, true],
    ]);
  });

  it('a Last-Event-ID resume gets the pieces it missed; a resume without one gets the answer so far in the Task', async () => {
    const { run, stream, id } = await startTask();
    let lastId = '';
    run.answer('one ', false);
    for await (const message of readSse(stream)) {
      lastId = message.id ?? lastId;
      if (message.data?.includes('"artifactUpdate"')) break;
    }
    run.answer('two ', true);
    run.answer('three', true);
    await eventually(() => t.record(id)?.snapshot().artifacts.length === 1 && (t.record(id)?.lastSeq ?? 0) >= 4, 5_000, 'two more pieces');

    const controller = new AbortController();
    const snapshot = await rpc(t.base, 'SubscribeToTask', { id }, { signal: controller.signal });
    const first = await readSse(snapshot).next();
    const task = (dataOf(first.value as SseMessage).result as { task: { artifacts: Array<{ name: string; parts: Array<{ text: string }> }> } }).task;
    expect(task.artifacts.find((a) => a.name === 'answer')?.parts[0].text).toBe('one two three');
    controller.abort();

    const resumed = await rpc(t.base, 'SubscribeToTask', { id }, { headers: { 'last-event-id': lastId } });
    const reading = collect(resumed);
    await eventually(() => (t.record(id)?.listenerCount ?? 0) > 0, 5_000, 'the resumed stream');
    run.answer('.', true, true);
    run.reply('one two three.');
    expect(answerPieces(await reading)).toEqual([
      ['two ', true, false],
      ['three', true, false],
      ['.', true, true],
    ]);
  });

  it('text withdrawn as narration leaves no answer; a reply that differs from the pieces replaces them', async () => {
    const { run, stream, id } = await startTask();
    const reading = collect(stream);
    run.answer('Let me check.', false);
    run.answer('', false);
    await eventually(() => (t.record(id)?.lastSeq ?? 0) >= 3, 5_000, 'the withdrawal');
    expect(await answerSoFar(t.base, id)).toBeUndefined();
    run.answer('draft', false);
    run.reply('final text');
    expect(answerPieces(await reading)).toEqual([
      ['Let me check.', false, false],
      ['', false, false],
      ['draft', false, false],
      ['final text', false, true],
    ]);
    expect(await answerSoFar(t.base, id)).toBe('final text');
  });

  it('ignores an answer payload that is not one, and keeps the pieces of a failed run', async () => {
    const { run, stream, id } = await startTask();
    const reading = collect(stream);
    t.bus.publish('answer', id, { text: 7, append: 'no' } as never);
    run.answer('half', false);
    run.fail('the model went away');
    const messages = await reading;
    expect(answerPieces(messages)).toEqual([['half', false, false]]);
    expect(await answerSoFar(t.base, id)).toBe('half');
  });
});
