/**
 * The demo app on an OpenAI-compatible model, end to end: a local server speaking the
 * chat-completions protocol (streamed chunks, parallel tool calls whose arguments arrive in
 * pieces, a tool-call id reused across turns, a 429 then success, a 500, a refused connection)
 * behind OPENAI_BASE_URL, and real A2A clients in front.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { AppModule } from '../src/app.module';
import { parseToolCall, type ToolCallArtifactData } from '../src/extensions';
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type FakeReply } from '../src/executor/fixtures/fake-openai-server';
import { CaptureLogger } from './support/capture-logger';
import { describeEvent, drain, sdkClient, userMessage } from './support/clients';

const send = (text: string) => ({ tenant: '', message: userMessage(text), configuration: undefined, metadata: undefined });
const API_KEY = 'sk-e2e-never-logged-42';
const ANSWER = 'In Paris it is 18 °C and partly cloudy; in Tokyo it is late evening. Both answers came from the tools.';

/** The user's question of a request: each test asks its own, and the fake answers by it. */
const question = (request: ChatRequest): string => String([...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '');
const turn = (request: ChatRequest): number => request.messages.filter((m) => m.role === 'assistant').length;

let rateLimited = 0;
function script(request: ChatRequest): FakeReply {
  const q = question(request);
  const n = turn(request);
  if (q.startsWith('parallel')) {
    if (n === 0) {
      return {
        text: 'Let me look both up.',
        argPieces: 4,
        toolCalls: [
          { id: 'call_w', name: 'weather', args: { city: 'Paris' } },
          { id: 'call_t', name: 'world_clock', args: { place: 'Tokyo' } },
        ],
      };
    }
    return { text: ANSWER, pieces: ANSWER.match(/\S+\s*/g) ?? [ANSWER] };
  }
  if (q.startsWith('reuse')) {
    if (n < 3) return { toolCalls: [{ id: 'call_0', name: 'calculator', args: { expression: `${n + 1}*7` } }] };
    return { text: 'Three sums done.' };
  }
  if (q.startsWith('rate')) {
    rateLimited += 1;
    if (rateLimited === 1) return { status: 429, message: 'Rate limit reached, retry shortly', retryAfter: 1 };
    return { text: 'Answered after a retry.' };
  }
  if (q.startsWith('broken')) return { status: 500, message: 'upstream exploded' };
  return { text: 'hello' };
}

function frames(events: StreamResponse[]): ToolCallArtifactData[] {
  return events.flatMap((e) => {
    const frame = e.payload?.$case === 'artifactUpdate' ? parseToolCall(e.payload.value.artifact?.parts) : undefined;
    return frame ? [frame] : [];
  });
}

function answerPieces(events: StreamResponse[]): Array<{ text: string; append: boolean; last: boolean }> {
  return events.flatMap((e) => {
    if (e.payload?.$case !== 'artifactUpdate' || e.payload.value.artifact?.name !== 'answer') return [];
    const text = e.payload.value.artifact.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    return [{ text, append: e.payload.value.append, last: e.payload.value.lastChunk }];
  });
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function bootDemo(env: Record<string, string>, logs: CaptureLogger): Promise<{ app: INestApplication; base: string }> {
  Object.assign(process.env, env);
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: logs, forceCloseConnections: true, bodyParser: false });
  await app.listen(0, '127.0.0.1');
  return { app, base: await app.getUrl() };
}

describe('the demo app on an OpenAI-compatible server (e2e)', () => {
  const saved = { ...process.env };
  const logs = new CaptureLogger();
  let fake: FakeOpenAi;
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    fake = await startFakeOpenAi(script);
    fake.chunkDelayMs = 5;
    ({ app, base } = await bootDemo({ OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: API_KEY, MODEL: 'fake-model' }, logs));
  });

  afterAll(async () => {
    await app.close();
    await fake.close();
    process.env = { ...saved };
  });

  it('names the model and its endpoint in the boot log, never the key', () => {
    expect(logs.text()).toContain(`agents: the default tool agent on the OpenAI-compatible model "fake-model" at ${fake.baseURL}`);
    expect(logs.text()).not.toContain(API_KEY);
  });

  it('parallel tool calls with arguments in pieces: frames paired and live, args reassembled, the answer streamed exactly', async () => {
    const client = await sdkClient(base, 'JSON-RPC 1.0');
    const events = await drain(client.sendMessageStream(send('parallel: weather in Paris and the time in Tokyo')));
    const lines = events.map(describeEvent);
    expect(lines[lines.length - 1]).toBe('COMPLETED');
    // The model's words before its calls are the turn's narration.
    expect(lines).toContain('WORKING: Let me look both up.');
    const seen = frames(events);
    expect(seen.slice(0, 2).map((f) => [f.phase, f.toolCallId, f.name, f.phase === 'started' ? f.args : undefined])).toEqual([
      ['started', 'call_w', 'weather', { city: 'Paris' }],
      ['started', 'call_t', 'world_clock', { place: 'Tokyo' }],
    ]);
    expect(seen.slice(2).map((f) => f.phase)).toEqual(['completed', 'completed']);
    expect(seen.slice(2).map((f) => f.toolCallId).sort()).toEqual(['call_t', 'call_w']);
    const pieces = answerPieces(events).filter((p, i, all) => i >= all.map((q) => q.append).lastIndexOf(false));
    expect(pieces.length).toBeGreaterThanOrEqual(2);
    expect(pieces.map((p) => p.text).join('')).toBe(ANSWER);
    expect(pieces[pieces.length - 1].last).toBe(true);
    // What the model saw back: its own calls' ids on the tool results, with the tools' output.
    const second = fake.requests.filter((r) => question(r.body).startsWith('parallel'))[1].body;
    expect(second.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['call_w', 'call_t']);
    expect(fake.requests.every((r) => r.auth === `Bearer ${API_KEY}` && r.body.stream === true)).toBe(true);
  });

  it('a tool-call id reused in every turn still gives every call its frames', async () => {
    const client = await sdkClient(base, 'HTTP+JSON 1.0');
    const events = await drain(client.sendMessageStream(send('reuse: three sums')));
    expect(describeEvent(events[events.length - 1])).toBe('COMPLETED');
    const seen = frames(events);
    const started = seen.filter((f) => f.phase === 'started');
    expect(started.map((f) => (f.phase === 'started' ? f.args : undefined))).toEqual([{ expression: '1*7' }, { expression: '2*7' }, { expression: '3*7' }]);
    expect(new Set(started.map((f) => f.toolCallId)).size).toBe(3);
    expect(seen.filter((f) => f.phase === 'completed')).toHaveLength(3);
  });

  it('a 429 is retried and the task completes', async () => {
    const client = await sdkClient(base, 'JSON-RPC 0.3');
    const events = await drain(client.sendMessageStream(send('rate: say something')));
    expect(describeEvent(events[events.length - 1])).toBe('COMPLETED');
    expect(answerPieces(events).map((p) => p.text).join('')).toBe('Answered after a retry.');
    expect(rateLimited).toBe(2);
  });

  it('a 500 fails the task naming the endpoint and the cause, logged once with the task id', async () => {
    const client = await sdkClient(base, 'JSON-RPC 1.0');
    const events = await drain(client.sendMessageStream(send('broken: anything')));
    const last = events[events.length - 1];
    const expected = `the model at ${fake.baseURL} failed (500): upstream exploded`;
    expect(describeEvent(last)).toBe(`FAILED: ${expected}`);
    const taskId = last.payload?.$case === 'statusUpdate' ? last.payload.value.taskId : '';
    const logged = logs.lines.filter((line) => line.includes(expected));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain(`task ${taskId} failed: ${expected}`);
  });

  it('an unreachable endpoint fails the task with "could not reach the model at …: connection refused"', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}/v1`;
    const refusedLogs = new CaptureLogger();
    const refused = await bootDemo({ OPENAI_BASE_URL: endpoint, OPENAI_API_KEY: '' }, refusedLogs);
    try {
      const client = await sdkClient(refused.base, 'JSON-RPC 1.0');
      const events = await drain(client.sendMessageStream(send('hello')));
      const last = events[events.length - 1];
      expect(last.payload?.$case === 'statusUpdate' && last.payload.value.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      const expected = `could not reach the model at ${endpoint}: connection refused`;
      expect(describeEvent(last)).toBe(`FAILED: ${expected}`);
      expect(refusedLogs.lines.filter((line) => line.includes(expected))).toHaveLength(1);
    } finally {
      await refused.app.close();
    }
  });

  it('a malformed OPENAI_BASE_URL stops the app at boot, naming the variable', async () => {
    Object.assign(process.env, { OPENAI_BASE_URL: 'not-a-url' });
    await expect(Test.createTestingModule({ imports: [AppModule] }).compile()).rejects.toThrow(
      'OPENAI_BASE_URL must be an http(s) URL such as http://127.0.0.1:11434/v1, got "not-a-url"',
    );
  });
});
