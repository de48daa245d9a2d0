import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { withA2AExtensions } from '@a2a-js/sdk/client';
import { TOOL_CALL_V1_EXTENSION_URI, parseToolCall } from '../src/extensions';
import { CLIENT_KINDS, describeEvent, drain, sdkClient, userMessage } from './support/clients';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import { failingDocLookup, parallelWeatherAndClock } from './support/scripts';

const send = (text: string, contextId = '') => ({ tenant: '', message: userMessage(text, contextId), configuration: undefined, metadata: undefined });

describe('A2A server through the real @a2a-js/sdk clients (e2e)', () => {
  let t: ScriptedA2aApp;

  beforeAll(async () => {
    t = await startScriptedA2aApp(parallelWeatherAndClock);
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    t.worker.script = parallelWeatherAndClock;
  });

  describe.each(CLIENT_KINDS)('%s client', (kind) => {
    it('streams Task → thinking → narration → tool frames → answer → COMPLETED', async () => {
      const client = await sdkClient(t.base, kind);
      const events = await drain(client.sendMessageStream(send('weather in Paris and the time in Tokyo')));
      expect(events.map(describeEvent)).toEqual([
        'task',
        'WORKING: thinking',
        'WORKING: checking the weather; checking the time',
        'started weather',
        'started world_clock',
        'completed world_clock',
        'completed weather',
        'answer: It is 18 °C and clear in Paris; in Tokyo it is 21:04.',
        'COMPLETED',
      ]);
      const frames = events.map((e) => (e.payload?.$case === 'artifactUpdate' ? parseToolCall(e.payload.value.artifact?.parts) : undefined));
      expect(frames[3]).toMatchObject({ toolCallId: 'call_weather', name: 'weather', phase: 'started', args: { city: 'Paris' } });
      expect(frames[5]).toMatchObject({ toolCallId: 'call_clock', phase: 'completed', result: { time: '21:04' } });
      const task = events[0].payload?.$case === 'task' ? events[0].payload.value : undefined;
      expect(task?.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
      for (const event of events.slice(1)) expect(taskIdOf(event)).toBe(task?.id);
    });

    it('streams a failing tool as a failed frame', async () => {
      t.worker.script = failingDocLookup;
      const client = await sdkClient(t.base, kind);
      const events = await drain(client.sendMessageStream(send('read the doc missing-page')));
      const failed = events
        .map((e) => (e.payload?.$case === 'artifactUpdate' ? parseToolCall(e.payload.value.artifact?.parts) : undefined))
        .find((f) => f?.phase === 'failed');
      expect(failed).toMatchObject({ toolCallId: 'call_doc', name: 'read_doc', error: 'no page named missing-page' });
      expect(describeEvent(events[events.length - 1])).toBe('COMPLETED');
    });

    it('answers a blocking SendMessage with the finished task, then GetTask returns it', async () => {
      const client = await sdkClient(t.base, kind);
      const sent = await client.sendMessage({ ...send('weather'), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false } });
      if (!('status' in sent)) throw new Error('expected a task');
      expect(sent.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const fetched = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
      expect(fetched.id).toBe(sent.id);
      expect(fetched.artifacts.map((a) => a.name)).toEqual(['tool-call', 'tool-call', 'answer']);
      expect(fetched.history.length).toBe(2);
    });
  });

  it('lists tasks through the 1.0 client, newest first, without artifacts unless asked', async () => {
    const client = await sdkClient(t.base, 'JSON-RPC 1.0');
    const stream = await drain(client.sendMessageStream(send('weather')));
    const newest = taskIdOf(stream[0]);
    const page = await client.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_COMPLETED,
      pageSize: 2,
      pageToken: '',
      historyLength: 0,
      statusTimestampAfter: undefined,
      includeArtifacts: undefined,
    });
    expect(page.tasks[0].id).toBe(newest);
    expect(page.tasks[0].artifacts).toEqual([]);
    expect(page.tasks[0].history).toEqual([]);
    expect(page.pageSize).toBe(2);
    expect(page.totalSize).toBeGreaterThanOrEqual(2);
    expect(page.nextPageToken).not.toBe('');
  });

  it('carries the conversation: a second message in the same context gets the earlier turns', async () => {
    const client = await sdkClient(t.base, 'HTTP+JSON 1.0');
    const first = await drain(client.sendMessageStream(send('weather in Paris')));
    const contextId = first[0].payload?.$case === 'task' ? first[0].payload.value.contextId : '';
    const next = t.worker.nextRun();
    await drain(client.sendMessageStream(send('and tomorrow?', contextId)));
    expect((await next).request.history).toEqual([
      { role: 'user', text: 'weather in Paris' },
      { role: 'agent', text: 'It is 18 °C and clear in Paris; in Tokyo it is 21:04.' },
    ]);
  });

  describe('tool-call-v1 activation', () => {
    const frameCount = (events: StreamResponse[]) => events.filter((e) => parseToolCall(e.payload?.$case === 'artifactUpdate' ? e.payload.value.artifact?.parts : [])).length;

    it('sends frames to a client that activates the extension', async () => {
      const client = await sdkClient(t.base, 'JSON-RPC 1.0');
      const events = await drain(client.sendMessageStream(send('weather'), { serviceParameters: { 'A2A-Extensions': TOOL_CALL_V1_EXTENSION_URI } }));
      expect(frameCount(events)).toBe(4);
    });

    it('sends none to a client that activates only other extensions, which still gets narration and the answer', async () => {
      for (const kind of CLIENT_KINDS) {
        const client = await sdkClient(t.base, kind);
        const options = { serviceParameters: {} as Record<string, string> };
        withA2AExtensions('https://example.com/ext/other-v1')(options.serviceParameters);
        const events = await drain(client.sendMessageStream(send('weather'), options));
        expect(frameCount(events)).toBe(0);
        expect(events.map(describeEvent)).toEqual([
          'task',
          'WORKING: thinking',
          'WORKING: checking the weather; checking the time',
          'answer: It is 18 °C and clear in Paris; in Tokyo it is 21:04.',
          'COMPLETED',
        ]);
      }
    });
  });
});

function taskIdOf(event: StreamResponse): string | undefined {
  const p = event.payload;
  if (!p) return undefined;
  return p.$case === 'task' ? p.value.id : p.$case === 'message' ? p.value.taskId : p.value.taskId;
}
