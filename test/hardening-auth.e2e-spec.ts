import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory, createAuthenticatingFetchWithRetry } from '@a2a-js/sdk/client';
import { AppModule } from '../src/app.module';
import { AgentRuntimeService, EXECUTOR_CHAT_MODEL, EXECUTOR_TOOLS, TaskService } from '../src';
import { OfflineChatModel, readCurrentTurn } from '../src/executor/models/offline-chat-model';
import { createSlowTaskTool } from '../src/demo/tools/slow-task.tool';
import { CaptureLogger } from './support/capture-logger';
import { describeEvent, drain, userMessage } from './support/clients';
import { collect, eventually, readSse, rpc, wireMessage, type SseMessage } from './support/sse';

const KEY_A = 'ts-key-a-5f0c2e9d81b7463aa';
const KEY_B = 'ts-key-b-0d9e8c7b6a5f4e3dd';
const TOKEN = 'ts-bearer-3c4b5a69788796a5b';
const SECRETS = [KEY_A, KEY_B, TOKEN];

/**
 * A model that puts the server's key where only a careless agent would: in a tool's arguments
 * (as a value and as a key), in a tool that echoes it back and in one that throws with it, and in
 * its answer. "wait N" calls slow_task instead, to keep a task running.
 */
class CarelessModel extends OfflineChatModel {
  _llmType(): string {
    return 'careless-test';
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const turn = readCurrentTurn(messages);
    const wait = /wait (\d+)/.exec(turn.request);
    if (turn.modelTurns === 0 && wait) {
      return this.result(new AIMessage({ content: '', tool_calls: [{ id: 'w', name: 'slow_task', args: { ms: Number(wait[1]) } }] }));
    }
    if (turn.modelTurns === 0 && turn.request.includes('leak')) {
      return this.result(
        new AIMessage({
          content: '',
          tool_calls: [
            { id: 'e', name: 'echo', args: { note: `the key is ${KEY_A}`, [KEY_A]: true, nested: [{ deep: `Bearer ${TOKEN}` }] } },
            { id: 'b', name: 'boom', args: {} },
          ],
        }),
      );
    }
    return this.result(new AIMessage(`done; the key ${KEY_A} worked`));
  }
}

const tools = [
  tool(async ({ note }: { note: string }) => ({ echoed: note, again: `${KEY_A}!`, header: `X-API-Key: ${KEY_B}` }), {
    name: 'echo',
    description: 'echoes',
    schema: z.object({ note: z.string() }).passthrough(),
  }),
  tool(
    () => {
      throw new Error(`upstream refused key ${KEY_A}`);
    },
    { name: 'boom', description: 'throws', schema: z.object({}) },
  ),
  createSlowTaskTool(),
];

const as = (credential: 'a' | 'b' | 'bearer' | 'none' | 'wrong'): Record<string, string> =>
  ({
    a: { 'x-api-key': KEY_A },
    b: { 'x-api-key': KEY_B },
    bearer: { authorization: `Bearer ${TOKEN}` },
    none: {},
    wrong: { 'x-api-key': `${KEY_A.slice(0, -1)}x` },
  })[credential];

describe('auth (e2e): API keys and bearer tokens from the environment, owner-only tasks, no secret anywhere', () => {
  let app: INestApplication;
  let base: string;
  const logs = new CaptureLogger();
  const wire: string[] = [];
  const saved = { ...process.env };

  /** fetch that keeps every byte the server answered, for the final "secret nowhere" check. */
  async function call(path: string, init: RequestInit & { headers?: Record<string, string> }): Promise<Response> {
    const response = await fetch(`${base}${path}`, init);
    const text = await response.text();
    response.headers.forEach((value, name) => wire.push(`${name}: ${value}`));
    wire.push(text);
    return new Response(text, { status: response.status, headers: response.headers });
  }
  const jsonRpc = (method: string, params: unknown, headers: Record<string, string>) =>
    call('/a2a', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'auth-1', method, params }),
    });
  const rest = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    call(path, { method, headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });

  async function startSlowTask(owner: 'a' | 'b' | 'bearer'): Promise<{ id: string; reader: AsyncGenerator<SseMessage>; abort: () => void }> {
    const controller = new AbortController();
    const response = await rpc(base, 'SendStreamingMessage', { message: wireMessage('wait 5000') }, { headers: as(owner), signal: controller.signal });
    const reader = readSse(response);
    const first = (await reader.next()).value as SseMessage;
    wire.push(first.data ?? '');
    return { id: (JSON.parse(first.data!) as { result: { task: { id: string } } }).result.task.id, reader, abort: () => controller.abort() };
  }

  beforeAll(async () => {
    process.env.TOOLSTREAM_API_KEYS = `${KEY_A},${KEY_B}`;
    process.env.TOOLSTREAM_BEARER_TOKENS = TOKEN;
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    logs.captureOutput();
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .setLogger(logs)
      .overrideProvider(EXECUTOR_CHAT_MODEL)
      .useValue(new CarelessModel({}))
      .overrideProvider(EXECUTOR_TOOLS)
      .useValue(tools)
      .compile();
    app = moduleRef.createNestApplication({ logger: logs, bodyParser: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
  });

  afterAll(async () => {
    await app.close();
    logs.release();
    process.env = { ...saved };
  });

  it('keeps the agent card and /healthz public, the card declaring both schemes', async () => {
    expect((await call('/healthz', {})).status).toBe(200);
    const card = (await (await call('/.well-known/agent-card.json', {})).json()) as Record<string, unknown>;
    expect(card.securitySchemes).toEqual({
      apiKey: { apiKeySecurityScheme: expect.objectContaining({ location: 'header', name: 'X-API-Key' }), type: 'apiKey', in: 'header', name: 'X-API-Key' },
      bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: 'Bearer' }), type: 'http', scheme: 'bearer' },
    });
    // ProtoJSON leaves out the empty scope list: either scheme alone satisfies the card.
    expect(card.securityRequirements).toEqual([{ schemes: { apiKey: {} } }, { schemes: { bearer: {} } }]);
  });

  it.each(['none', 'wrong'] as const)('answers 401 to %s credentials on both bindings, in each binding\'s error shape', async (credential) => {
    const jsonRpcRefusal = await jsonRpc('GetTask', { id: 'x' }, as(credential));
    expect(jsonRpcRefusal.status).toBe(401);
    expect(jsonRpcRefusal.headers.get('www-authenticate')).toContain('Bearer realm="a2a"');
    expect(await jsonRpcRefusal.json()).toEqual({
      jsonrpc: '2.0',
      // Refused from the headers, before a byte of the body (and its id) is read.
      id: null,
      error: {
        code: -32000,
        message: expect.stringMatching(credential === 'none' ? /^Authentication required: send / : /^Invalid credentials: send /),
        data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'UNAUTHENTICATED', domain: 'toolstream', metadata: {} }],
      },
    });
    for (const [method, path] of [
      ['POST', '/message:send'],
      ['POST', '/message:stream'],
      ['GET', '/tasks'],
      ['GET', '/tasks/x'],
      ['POST', '/tasks/x:cancel'],
      ['POST', '/tasks/x:subscribe'],
    ]) {
      const refusal = await rest(method, path, as(credential), method === 'POST' ? { message: wireMessage('hi') } : undefined);
      expect(refusal.status).toBe(401);
      expect(refusal.headers.get('www-authenticate')).toContain('ApiKey realm="a2a", header="X-API-Key"');
      expect(await refusal.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    }
    expect(app.get(TaskService).metrics().tasks).toBe(0);
  });

  it("a task is its creator's: another caller gets task-not-found for GetTask, ListTasks, SubscribeToTask, CancelTask and a Last-Event-ID resume", async () => {
    const task = await startSlowTask('a');
    for (const other of ['b', 'bearer'] as const) {
      for (const [method, params] of [
        ['GetTask', { id: task.id }],
        ['CancelTask', { id: task.id }],
        ['SubscribeToTask', { id: task.id }],
        ['SendMessage', { message: wireMessage('more', { taskId: task.id }) }],
      ] as const) {
        const response = await jsonRpc(method, params, as(other));
        expect(response.status).toBe(200);
        expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32001);
      }
      const resume = await jsonRpc('SubscribeToTask', { id: task.id }, { ...as(other), 'last-event-id': '1' });
      expect(((await resume.json()) as { error: { code: number } }).error.code).toBe(-32001);
      for (const [method, path] of [
        ['GET', `/tasks/${task.id}`],
        ['POST', `/tasks/${task.id}:cancel`],
        ['POST', `/tasks/${task.id}:subscribe`],
      ]) {
        const response = await rest(method, path, { ...as(other), 'last-event-id': '1' });
        expect(response.status).toBe(404);
        expect(await response.json()).toMatchObject({ error: { status: 'NOT_FOUND', details: [expect.objectContaining({ reason: 'TASK_NOT_FOUND' })] } });
      }
      const listed = (await (await rest('GET', '/tasks', as(other))).json()) as { tasks: { id: string }[]; totalSize: number };
      expect(listed.tasks.map((t) => t.id)).not.toContain(task.id);
      const listedRpc = (await (await jsonRpc('ListTasks', {}, as(other))).json()) as { result: { tasks: { id: string }[] } };
      expect(listedRpc.result.tasks.map((t) => t.id)).not.toContain(task.id);
    }
    // The owner still sees it, resumes it, and cancels it.
    expect(((await (await jsonRpc('GetTask', { id: task.id }, as('a'))).json()) as { result: { id: string } }).result.id).toBe(task.id);
    expect(((await (await rest('GET', '/tasks', as('a'))).json()) as { tasks: { id: string }[] }).tasks.map((t) => t.id)).toContain(task.id);
    const resumed = await rpc(base, 'SubscribeToTask', { id: task.id }, { headers: { ...as('a'), 'Last-Event-ID': '1' } });
    const cancelled = (await (await jsonRpc('CancelTask', { id: task.id }, as('a'))).json()) as { result: { status: { state: string } } };
    expect(cancelled.result.status.state).toBe('TASK_STATE_CANCELED');
    const rest_ = await collect(resumed);
    wire.push(...rest_.map((m) => m.data ?? ''));
    expect(rest_[rest_.length - 1].data).toContain('TASK_STATE_CANCELED');
    for await (const message of task.reader) wire.push(message.data ?? '');
  });

  it('serves the SDK clients that send a key or a token, each binding', async () => {
    for (const [header, transport] of [
      [as('bearer'), 'JSONRPC'],
      [as('b'), 'HTTP+JSON'],
    ] as const) {
      const authFetch = createAuthenticatingFetchWithRetry(fetch, { headers: async () => header, shouldRetryWithHeaders: async () => undefined });
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch }), new RestTransportFactory({ fetchImpl: authFetch })],
          preferredTransports: [transport],
        }),
      );
      const client = await factory.createFromUrl(base);
      const events = await drain(client.sendMessageStream({ tenant: '', message: userMessage('hello'), configuration: undefined, metadata: undefined }));
      // The answer streams in pieces; joined, they are the scrubbed answer.
      const described = events.map(describeEvent).reduce<string[]>((out, e) => {
        const last = out[out.length - 1];
        if (e.startsWith('answer: ') && last?.startsWith('answer: ')) out[out.length - 1] = last + e.slice('answer: '.length);
        else out.push(e);
        return out;
      }, []);
      expect(described).toEqual(['task', 'WORKING: thinking', 'answer: done; the key [redacted] worked', 'COMPLETED']);
    }
  });

  it('never lets a secret reach the logs or the wire: not from tool args, results, errors, answers, nor a pasted key', async () => {
    const streamed = await collect(await rpc(base, 'SendStreamingMessage', { message: wireMessage(`leak it: ${KEY_B}`) }, { headers: as('a') }));
    wire.push(...streamed.map((m) => m.data ?? ''));
    const lines = streamed.map((m) => m.data ?? '');
    expect(lines.some((l) => l.includes('"phase":"started"') && l.includes('the key is [redacted]'))).toBe(true);
    expect(lines.some((l) => l.includes('"phase":"completed"') && l.includes('"again":"[redacted]!"'))).toBe(true);
    expect(lines.some((l) => l.includes('"phase":"failed"') && l.includes('upstream refused key [redacted]'))).toBe(true);
    expect(lines[lines.length - 1]).toContain('TASK_STATE_COMPLETED');
    const taskId = (JSON.parse(lines[0]) as { result: { task: { id: string } } }).result.task.id;
    const stored = await jsonRpc('GetTask', { id: taskId }, as('a'));
    expect(await stored.text()).toContain('leak it: [redacted]');
    // A run that fails logs nothing secret either; then everything settles.
    await (await jsonRpc('SendMessage', { message: wireMessage('wait 1') }, as('bearer'))).text();
    await eventually(() => app.get(AgentRuntimeService).activeRuns() === 0, 5_000, 'runs to end');
    const everything = [logs.text(), ...wire].join('\n');
    expect(everything.length).toBeGreaterThan(5_000);
    for (const secret of SECRETS) expect(everything).not.toContain(secret);
    expect(await app.get(TaskService).find(taskId, undefined)).toBeUndefined();
  });
});
