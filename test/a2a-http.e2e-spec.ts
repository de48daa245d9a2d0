import { Body, Controller, Module, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { A2aModule, type A2aModuleOptions } from '../src';
import { TOOL_CALL_V1_EXTENSION_URI } from '../src/extensions';
import { ScriptedBusModule, startScriptedA2aApp } from './support/a2a-test-app';
import { ScriptedWorker } from './support/scripted-worker';
import { parallelWeatherAndClock } from './support/scripts';
import { AgentBus } from '../src/runtime';
import { collect, dataOf, rpc, wireMessage } from './support/sse';
import { STORE_MODES, useStoreMode } from './support/store-modes';

/** Another route of the embedding application, to check A2A leaves it alone. */
@Controller('orders')
class OrdersController {
  @Post()
  create(@Body() body: unknown): unknown {
    return { received: body };
  }
}

@Module({ controllers: [OrdersController] })
class OrdersModule {}

async function startPrefixedApp(options: A2aModuleOptions): Promise<{ app: INestApplication; base: string }> {
  const moduleRef = await Test.createTestingModule({ imports: [ScriptedBusModule, A2aModule.forRoot(options), OrdersModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
  app.setGlobalPrefix('api');
  await app.listen(0, '127.0.0.1');
  new ScriptedWorker(app.get(AgentBus), parallelWeatherAndClock).start();
  return { app, base: await app.getUrl() };
}

const frameCount = (messages: { data?: string }[]) => messages.filter((m) => m.data?.includes('tool-call-v1+json')).length;

/** One contract, both task stores: in Redis mode each app is one instance of role all on a redis-server of the suite's own. */
describe.each(STORE_MODES)('HTTP details (e2e, %s store): card URLs, headers, activation, coexistence', (mode) => {
  const store = useStoreMode(mode);
  afterAll(() => store.stop());
  const prefixedApp = (options: A2aModuleOptions = {}) => startPrefixedApp({ ...options, ...store.options() });

  it('derives the card URLs from the request, global prefix included, and serves A2A under that prefix', async () => {
    const { app, base } = await prefixedApp();
    try {
      const card = (await (await fetch(`${base}/api/.well-known/agent-card.json`)).json()) as {
        supportedInterfaces: { url: string; protocolBinding: string; protocolVersion: string }[];
        url: string;
      };
      expect(card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion, i.url])).toEqual([
        ['JSONRPC', '1.0', `${base}/api/a2a`],
        ['HTTP+JSON', '1.0', `${base}/api`],
        ['JSONRPC', '0.3', `${base}/api/a2a`],
      ]);
      expect(card.url).toBe(`${base}/api/a2a`);
      const streamed = await collect(await rpc(`${base}/api`, 'SendStreamingMessage', { message: wireMessage('weather') }));
      expect(streamed).toHaveLength(9);
      const parseError = await fetch(`${base}/api/a2a`, { method: 'POST', body: '{', headers: { 'content-type': 'application/json' } });
      expect(((await parseError.json()) as { error: { code: number } }).error.code).toBe(-32700);
    } finally {
      await app.close();
    }
  });

  it('leaves the application’s other routes to Nest: a malformed body there gets Nest’s own 400', async () => {
    const { app, base } = await prefixedApp();
    try {
      const response = await fetch(`${base}/api/orders`, { method: 'POST', body: '{', headers: { 'content-type': 'application/json' } });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      const ok = await fetch(`${base}/api/orders`, { method: 'POST', body: '{"n":1}', headers: { 'content-type': 'application/json' } });
      expect(await ok.json()).toEqual({ received: { n: 1 } });
    } finally {
      await app.close();
    }
  });

  it('advertises the configured public URL instead of the request’s', async () => {
    const { app, base } = await prefixedApp({ publicUrl: 'https://agents.example.com/support/' });
    try {
      const card = (await (await fetch(`${base}/api/.well-known/agent-card.json`)).json()) as { supportedInterfaces: { url: string }[] };
      expect(card.supportedInterfaces.map((i) => i.url)).toEqual([
        'https://agents.example.com/support/a2a',
        'https://agents.example.com/support',
        'https://agents.example.com/support/a2a',
      ]);
    } finally {
      await app.close();
    }
  });

  describe('extension activation and the echo header', () => {
    it('echoes tool-call-v1 in A2A-Extensions on both bindings, and X-A2A-Extensions too for 0.3', async () => {
      const t = await startScriptedA2aApp(parallelWeatherAndClock, store.options());
      try {
        const headers = { 'A2A-Extensions': TOOL_CALL_V1_EXTENSION_URI };
        const v1 = await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('weather') }, { headers });
        expect(v1.headers.get('a2a-extensions')).toBe(TOOL_CALL_V1_EXTENSION_URI);
        expect(frameCount(await collect(v1))).toBe(4);
        const rest = await fetch(`${t.base}/message:stream`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
          body: JSON.stringify({ message: wireMessage('weather') }),
        });
        expect(rest.headers.get('a2a-extensions')).toBe(TOOL_CALL_V1_EXTENSION_URI);
        expect(frameCount(await collect(rest))).toBe(4);
        const v03 = await rpc(t.base, 'message/stream', { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'weather' }] } }, {
          version: null,
          headers: { 'X-A2A-Extensions': TOOL_CALL_V1_EXTENSION_URI },
        });
        expect(v03.headers.get('x-a2a-extensions')).toBe(TOOL_CALL_V1_EXTENSION_URI);
        const events = await collect(v03);
        expect(frameCount(events)).toBe(4);
        expect((dataOf(events[3]).result as { kind: string }).kind).toBe('artifact-update');
        const plain = await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('weather') }, { headers: { 'A2A-Extensions': 'https://example.com/other' } });
        expect(plain.headers.get('a2a-extensions')).toBeNull();
        expect(frameCount(await collect(plain))).toBe(0);
      } finally {
        await t.close();
      }
    });

    it('sends no frames to a client without extension header when toolFramesWhenNoExtensionHeader is off', async () => {
      const t = await startScriptedA2aApp(parallelWeatherAndClock, { toolFramesWhenNoExtensionHeader: false, ...store.options() });
      try {
        const response = await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('weather') });
        expect(response.headers.get('a2a-extensions')).toBeNull();
        const events = await collect(response);
        expect(frameCount(events)).toBe(0);
        expect(events).toHaveLength(5);
        const opted = await collect(await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('weather') }, { headers: { 'A2A-Extensions': TOOL_CALL_V1_EXTENSION_URI } }));
        expect(frameCount(opted)).toBe(4);
      } finally {
        await t.close();
      }
    });
  });

  it('answers HTTP+JSON in application/a2a+json, honouring historyLength and the ListTasks query', async () => {
    const t = await startScriptedA2aApp(parallelWeatherAndClock, store.options());
    try {
      const headers = { 'content-type': 'application/a2a+json', 'a2a-version': '1.0' };
      const sent = await fetch(`${t.base}/message:send`, { method: 'POST', headers, body: JSON.stringify({ message: wireMessage('weather') }) });
      expect(sent.status).toBe(200);
      expect(sent.headers.get('content-type')).toContain('application/a2a+json');
      const task = ((await sent.json()) as { task: { id: string; status: { state: string } } }).task;
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      const got = (await (await fetch(`${t.base}/tasks/${task.id}?historyLength=1`, { headers })).json()) as { history: { role: string }[] };
      expect(got.history.map((m) => m.role)).toEqual(['ROLE_AGENT']);
      const listed = (await (await fetch(`${t.base}/tasks?status=TASK_STATE_COMPLETED&pageSize=1&includeArtifacts=true`, { headers })).json()) as {
        tasks: { id: string; artifacts: unknown[] }[];
        nextPageToken: string;
        totalSize: number;
      };
      expect(listed.tasks[0].id).toBe(task.id);
      expect(listed.tasks[0].artifacts).toHaveLength(3);
      expect(listed.nextPageToken).toBe('');
      expect(listed.totalSize).toBe(1);
      const immediate = await fetch(`${t.base}/message:send`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: wireMessage('weather'), configuration: { returnImmediately: true } }),
      });
      expect(((await immediate.json()) as { task: { status: { state: string } } }).task.status.state).not.toBe('TASK_STATE_COMPLETED');
    } finally {
      await t.close();
    }
  });
});
