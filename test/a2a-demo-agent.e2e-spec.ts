import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { AppModule } from '../src/app.module';
import { AgentBus, AgentRuntimeService, TaskService } from '../src';
import { parseToolCall, type ToolCallArtifactData } from '../src/extensions';
import { CLIENT_KINDS, describeEvent, drain, sdkClient, userMessage } from './support/clients';
import { eventually, readSse, rpc, wireMessage } from './support/sse';

const send = (text: string) => ({ tenant: '', message: userMessage(text), configuration: undefined, metadata: undefined });

function framesOf(events: StreamResponse[]): ToolCallArtifactData[] {
  return events.flatMap((e) => {
    const frame = e.payload?.$case === 'artifactUpdate' ? parseToolCall(e.payload.value.artifact?.parts) : undefined;
    return frame ? [frame] : [];
  });
}

describe('the demo app end to end: A2A → bus → runtime → offline LangGraph agent (e2e)', () => {
  let app: INestApplication;
  let base: string;
  let busBaseline: number;
  const saved = { ...process.env };

  beforeAll(async () => {
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: ['error', 'warn'], forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
    busBaseline = app.get(AgentBus).listenerCount();
  });

  afterAll(async () => {
    process.env = { ...saved };
    await app.close();
  });

  async function expectEverythingReleased(): Promise<void> {
    const tasks = app.get(TaskService);
    const runtime = app.get(AgentRuntimeService);
    const bus = app.get(AgentBus);
    await eventually(
      () => bus.listenerCount() === busBaseline && runtime.activeRuns() === 0 && tasks.metrics().openStreams === 0,
      5_000,
      'bus listeners, runs and streams back to baseline',
    );
    expect(tasks.metrics()).toMatchObject({ liveTasks: 0, topicSubscriptions: 0, openStreams: 0 });
  }

  it.each(CLIENT_KINDS)('"weather in Paris and the time in Tokyo" through the %s client: parallel weather and world_clock frames', async (kind) => {
    const client = await sdkClient(base, kind);
    const events = await drain(client.sendMessageStream(send('weather in Paris and the time in Tokyo')));
    const lines = events.map(describeEvent);
    expect(lines.slice(0, 2)).toEqual(['task', 'WORKING: thinking']);
    expect(lines[lines.length - 1]).toBe('COMPLETED');
    const frames = framesOf(events);
    // both tools start (in one model turn) before either finishes
    expect(frames.slice(0, 2).map((f) => [f.phase, f.name])).toEqual([
      ['started', 'weather'],
      ['started', 'world_clock'],
    ]);
    expect(frames.slice(2).map((f) => f.phase)).toEqual(['completed', 'completed']);
    expect(frames[0]).toMatchObject({ args: { city: 'Paris' } });
    for (const frame of frames.slice(2)) {
      expect(frame.toolCallId).toBe(frames.find((f) => f.phase === 'started' && f.name === frame.name)?.toolCallId);
    }
    // The offline model streams its answer in a few pieces: the first replaces, the rest append, the last says so.
    const pieces = events.flatMap((e) => (e.payload?.$case === 'artifactUpdate' && e.payload.value.artifact?.name === 'answer' ? [e.payload.value] : []));
    expect(pieces.length).toBeGreaterThanOrEqual(2);
    expect(pieces.map((p) => [p.append, p.lastChunk])).toEqual(pieces.map((_, i) => [i > 0, i === pieces.length - 1]));
    const answer = pieces.map((p) => describeEvent({ payload: { $case: 'artifactUpdate', value: p } }).replace(/^answer: /, '')).join('');
    expect(answer).toMatch(/Paris.*Tokyo/s);
    const task = await client.getTask({ tenant: '', id: (events[0].payload as { value: { id: string } }).value.id, historyLength: undefined });
    expect(task.artifacts.find((a) => a.name === 'answer')?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('')).toBe(answer);
    await expectEverythingReleased();
  });

  it('"read the doc missing-page" yields a failed frame with the tool\'s own error', async () => {
    const client = await sdkClient(base, 'JSON-RPC 1.0');
    const events = await drain(client.sendMessageStream(send('read the doc missing-page')));
    const frames = framesOf(events);
    expect(frames.map((f) => [f.phase, f.name])).toEqual([
      ['started', 'read_doc'],
      ['failed', 'read_doc'],
    ]);
    const failed = frames[1];
    expect(failed.phase === 'failed' && failed.error).toContain('missing-page');
    expect(failed.phase === 'failed' && failed.error).not.toMatch(/fix your mistakes/i);
    expect(describeEvent(events[events.length - 1])).toBe('COMPLETED');
  });

  it('CancelTask aborts the real run: the slow tool fails "cancelled", the task is CANCELED, nothing is left behind', async () => {
    const client = await sdkClient(base, 'HTTP+JSON 1.0');
    const seen: string[] = [];
    let taskId = '';
    for await (const event of client.sendMessageStream(send('take a slow step of 8000 ms'))) {
      seen.push(describeEvent(event));
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      if (seen[seen.length - 1] === 'started slow_task') {
        const task = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
        expect(task.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      }
    }
    expect(seen).toContain('failed slow_task');
    expect(seen[seen.length - 1]).toMatch(/^CANCELED/);
    const frames = (await app.get(TaskService).find(taskId, undefined))!.snapshot().artifacts.map((a) => parseToolCall(a.parts));
    expect(frames).toEqual([expect.objectContaining({ name: 'slow_task', phase: 'failed', error: 'cancelled' })]);
    await expectEverythingReleased();
  });

  it('a client that disconnects aborts the real run', async () => {
    const controller = new AbortController();
    const response = await rpc(base, 'SendStreamingMessage', { message: wireMessage('take a slow step of 8000 ms') }, { signal: controller.signal });
    let taskId = '';
    for await (const message of readSse(response)) {
      taskId ||= (JSON.parse(message.data!) as { result: { task: { id: string } } }).result.task.id;
      if (message.data?.includes('"phase":"started"')) break;
    }
    controller.abort();
    await expectEverythingReleased();
    expect((await app.get(TaskService).find(taskId, undefined))?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});
