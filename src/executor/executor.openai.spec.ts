/**
 * The OpenAI-compatible path, end to end against a local fake of the chat/completions API:
 * the model is chosen by environment, calls two tools in one turn, then answers.
 */
import { Test } from '@nestjs/testing';
import { ChatOpenAI } from '@langchain/openai';
import { EXECUTOR_CHAT_MODEL } from './executor.constants';
import { ExecutorModule } from './executor.module';
import { createDemoTools } from '../demo/tools/demo-tools';
import { AgentExecutor, type ExecutorEvent } from './executor.types';
import { startFakeOpenAi, type FakeOpenAi } from './fixtures/fake-openai-server';
import { expectWellFormed, framesOf, runToEnd } from './fixtures/run-recorder';

const ANSWER = 'Paris is partly cloudy at 18 °C; it is evening in Tokyo.';

describe('OpenAI-compatible model (fake local server)', () => {
  let fake: FakeOpenAi;
  const saved = { ...process.env };
  /** How the fake misbehaves in the current test. */
  let quirk: 'none' | 'no-ids' | 'overloaded' = 'none';
  beforeEach(() => {
    quirk = 'none';
    fake.requests.length = 0;
  });

  beforeAll(async () => {
    fake = await startFakeOpenAi((request) => {
      if (quirk === 'overloaded') return { status: 400, message: 'model is overloaded, try later' };
      if (request.messages.some((m) => m.role === 'tool')) return { text: ANSWER, pieces: ['Paris is partly ', 'cloudy at 18 °C; ', 'it is evening in Tokyo.'] };
      const id = (given: string): string | undefined => (quirk === 'no-ids' ? undefined : given);
      return {
        toolCalls: [
          { id: id('call_w'), name: 'weather', args: { city: 'Paris' } },
          { id: id('call_t'), name: 'world_clock', args: { place: 'Tokyo' } },
        ],
      };
    });
  });

  afterAll(async () => {
    process.env = { ...saved };
    await fake.close();
  });

  const requests = () => fake.requests;

  it('is chosen by OPENAI_BASE_URL / OPENAI_API_KEY / MODEL and runs tools through it', async () => {
    process.env.OPENAI_BASE_URL = fake.baseURL;
    process.env.OPENAI_API_KEY = 'sk-local-test';
    process.env.MODEL = 'fake-model';
    const moduleRef = await Test.createTestingModule({ imports: [ExecutorModule.forRoot({ tools: createDemoTools() })] }).compile();
    expect(moduleRef.get(EXECUTOR_CHAT_MODEL)).toBeInstanceOf(ChatOpenAI);

    const events = await runToEnd(moduleRef.get(AgentExecutor).run('weather in Paris and the time in Tokyo', { correlationId: 'oa-1' }));
    expectWellFormed(events);
    const frames = framesOf(events);
    expect(frames.filter((f) => f.phase === 'started').map((f) => [f.toolCallId, f.name, f.args])).toEqual([
      ['call_w', 'weather', { city: 'Paris' }],
      ['call_t', 'world_clock', { place: 'Tokyo' }],
    ]);
    expect(frames.filter((f) => f.phase === 'completed').map((f) => f.toolCallId).sort()).toEqual(['call_t', 'call_w']);
    expect(events[events.length - 1].event).toMatchObject({ type: 'reply', text: ANSWER });
    // The answer streamed: the first piece at once, the rest coalesced, exactly the model's text.
    const answer = events.map((e) => e.event).filter((e): e is Extract<ExecutorEvent, { type: 'answer' }> => e.type === 'answer');
    expect(answer[0]).toEqual({ type: 'answer', text: 'Paris is partly ', append: false, last: false });
    expect(answer.slice(1).every((e) => e.append)).toBe(true);
    expect(answer.map((e) => e.last)).toEqual([...answer.slice(1).map(() => false), true]);
    expect(answer.map((e) => e.text).join('')).toBe(ANSWER);

    expect(requests()).toHaveLength(2);
    const [first, second] = requests();
    expect(first.path).toBe('/v1/chat/completions');
    expect(first.auth).toBe('Bearer sk-local-test');
    expect(first.body.model).toBe('fake-model');
    expect(first.body.stream).toBe(true);
    expect(first.body.tools?.map((t) => t.function.name)).toEqual(['weather', 'world_clock', 'calculator', 'search_docs', 'read_doc', 'slow_task']);
    // The second turn carries the tools' results under the ids the model gave.
    const toolResults = second.body.messages.filter((m) => m.role === 'tool');
    expect(toolResults.map((m) => m.tool_call_id)).toEqual(['call_w', 'call_t']);
    expect(String(toolResults[0].content)).toContain('"city":"Paris"');
  });

  const executorFromEnv = async (): Promise<AgentExecutor> => {
    process.env.OPENAI_BASE_URL = fake.baseURL;
    process.env.OPENAI_API_KEY = 'sk-local-test';
    const moduleRef = await Test.createTestingModule({ imports: [ExecutorModule.forRoot({ tools: createDemoTools() })] }).compile();
    return moduleRef.get(AgentExecutor);
  };

  it('gives calls without ids stable ids that the tool results carry back', async () => {
    quirk = 'no-ids';
    const events = await runToEnd((await executorFromEnv()).run('weather in Paris and the time in Tokyo', { correlationId: 'oa-2' }));
    expectWellFormed(events);
    const started = framesOf(events).filter((f) => f.phase === 'started');
    expect(started.map((f) => f.toolCallId)).toEqual([expect.stringMatching(/^call_[0-9a-f-]{36}$/), expect.stringMatching(/^call_[0-9a-f-]{36}$/)]);
    expect(framesOf(events).filter((f) => f.phase === 'completed')).toHaveLength(2);
    const toolResults = requests()[1].body.messages.filter((m) => m.role === 'tool');
    expect(toolResults.map((m) => m.tool_call_id)).toEqual(started.map((f) => f.toolCallId));
  });

  it('turns an endpoint error into an error event', async () => {
    quirk = 'overloaded';
    const events = await runToEnd((await executorFromEnv()).run('hello', { correlationId: 'oa-3' }));
    expect(events.map((e) => e.event.type)).toEqual(['progress', 'error']);
    expect(events[1].event).toMatchObject({ type: 'error', error: expect.stringContaining('model is overloaded, try later') });
  });
});
