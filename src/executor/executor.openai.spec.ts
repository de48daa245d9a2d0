/**
 * The OpenAI-compatible path, end to end against a local fake of the chat/completions API:
 * the model is chosen by environment, calls two tools in one turn, then answers.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Test } from '@nestjs/testing';
import { ChatOpenAI } from '@langchain/openai';
import { EXECUTOR_CHAT_MODEL } from './executor.constants';
import { ExecutorModule } from './executor.module';
import { createDemoTools } from '../demo/tools/demo-tools';
import { AgentExecutor } from './executor.types';
import { expectWellFormed, framesOf, runToEnd } from './fixtures/run-recorder';

interface ChatRequest {
  model: string;
  stream?: boolean;
  messages: Array<{ role: string; content: unknown; tool_call_id?: string; tool_calls?: Array<{ id: string }> }>;
  tools?: Array<{ type: string; function: { name: string } }>;
}

async function body(req: IncomingMessage): Promise<ChatRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
}

// One completion id for every answer, as some OpenAI-compatible servers do.
const completion = (message: Record<string, unknown>, finishReason: string) => ({
  id: 'chatcmpl-fake',
  object: 'chat.completion',
  created: 1_760_000_000,
  model: 'fake-model',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason, logprobs: null }],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
});

describe('OpenAI-compatible model (fake local server)', () => {
  let server: Server;
  let baseURL: string;
  const requests: Array<{ path: string; auth?: string; body: ChatRequest }> = [];
  const saved = { ...process.env };
  /** How the fake misbehaves in the current test. */
  let quirk: 'none' | 'no-ids' | 'overloaded' = 'none';
  beforeEach(() => {
    quirk = 'none';
    requests.length = 0;
  });

  beforeAll(async () => {
    server = createServer((req, res) => {
      void body(req).then((parsed) => {
        requests.push({ path: req.url ?? '', auth: req.headers.authorization, body: parsed });
        if (quirk === 'overloaded') {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'model is overloaded, try later', type: 'invalid_request_error' } }));
          return;
        }
        const answered = parsed.messages.some((m) => m.role === 'tool');
        const reply = answered
          ? completion({ content: 'Paris is partly cloudy at 18 °C; it is evening in Tokyo.' }, 'stop')
          : completion(
              {
                content: null,
                tool_calls: [
                  { id: quirk === 'no-ids' ? '' : 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
                  { id: quirk === 'no-ids' ? '' : 'call_t', type: 'function', function: { name: 'world_clock', arguments: '{"place":"Tokyo"}' } },
                ],
              },
              'tool_calls',
            );
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    process.env = { ...saved };
    await new Promise((resolve) => server.close(resolve));
  });

  it('is chosen by OPENAI_BASE_URL / OPENAI_API_KEY / MODEL and runs tools through it', async () => {
    process.env.OPENAI_BASE_URL = baseURL;
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
    expect(events[events.length - 1].event).toMatchObject({ type: 'reply', text: 'Paris is partly cloudy at 18 °C; it is evening in Tokyo.' });

    expect(requests).toHaveLength(2);
    const [first, second] = requests;
    expect(first.path).toBe('/v1/chat/completions');
    expect(first.auth).toBe('Bearer sk-local-test');
    expect(first.body.model).toBe('fake-model');
    expect(first.body.tools?.map((t) => t.function.name)).toEqual(['weather', 'world_clock', 'calculator', 'search_docs', 'read_doc', 'slow_task']);
    // The second turn carries the tools' results under the ids the model gave.
    const toolResults = second.body.messages.filter((m) => m.role === 'tool');
    expect(toolResults.map((m) => m.tool_call_id)).toEqual(['call_w', 'call_t']);
    expect(String(toolResults[0].content)).toContain('"city":"Paris"');
  });

  const executorFromEnv = async (): Promise<AgentExecutor> => {
    process.env.OPENAI_BASE_URL = baseURL;
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
    const toolResults = requests[1].body.messages.filter((m) => m.role === 'tool');
    expect(toolResults.map((m) => m.tool_call_id)).toEqual(started.map((f) => f.toolCallId));
  });

  it('turns an endpoint error into an error event', async () => {
    quirk = 'overloaded';
    const events = await runToEnd((await executorFromEnv()).run('hello', { correlationId: 'oa-3' }));
    expect(events.map((e) => e.event.type)).toEqual(['progress', 'error']);
    expect(events[1].event).toMatchObject({ type: 'error', error: expect.stringContaining('model is overloaded, try later') });
  });
});
