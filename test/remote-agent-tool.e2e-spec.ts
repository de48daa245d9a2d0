/**
 * remoteAgentTool against a real A2A server (A2aModule on a port, a scripted worker behind it)
 * through the official SDK client, called by a real executor run: what the remote agent does
 * shows up in the calling run, nested, live; failures name the agent; cancel reaches it.
 */
import { createServer, type Server } from 'node:net';
import { TaskState } from '@a2a-js/sdk';
import { Test } from '@nestjs/testing';
import { AgentExecutor, ExecutorModule, ScriptedChatModel } from '../src/executor';
import { eventually, record, runLines as lines, type Recorded } from '../src/executor/fixtures/run-recorder';
import { DELEGATION_METADATA_KEY, remoteAgentTool, type RemoteAgentToolOptions } from '../src/remote-agents';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import { failingDocLookup, parallelWeatherAndClock, slowTool } from './support/scripts';

const API_KEY = 'remote-agent-key-0123456789';

/** A parent run whose model asks `researcher` once, then answers "done". */
async function parentRun(tool: RemoteAgentToolOptions, metadata?: Record<string, unknown>, signal?: AbortSignal) {
  const model = new ScriptedChatModel({
    turns: [{ toolCalls: [{ name: tool.name, id: 'd1', args: { question: 'weather in Paris and the time in Tokyo' } }] }, { text: 'done' }],
  });
  const moduleRef = await Test.createTestingModule({ imports: [ExecutorModule.forRoot({ model, tools: [remoteAgentTool(tool)] })] }).compile();
  return record(moduleRef.get(AgentExecutor).run('ask researcher: weather in Paris and the time in Tokyo', { correlationId: 'parent', metadata, signal }));
}

const delegatingEnd = (events: Recorded[]) => {
  const found = events.map((e) => e.event).find((e) => e.type === 'toolFrame' && e.frame.toolCallId === 'd1' && e.frame.phase !== 'started');
  return found?.type === 'toolFrame' ? found.frame : undefined;
};

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('remoteAgentTool (e2e, a real A2A server and the SDK client)', () => {
  let remote: ScriptedA2aApp;

  beforeAll(async () => {
    remote = await startScriptedA2aApp(parallelWeatherAndClock);
  });
  afterAll(async () => {
    await remote.close();
  });
  beforeEach(() => {
    remote.worker.script = parallelWeatherAndClock;
  });

  it('forwards the remote tool calls live, nested under the delegating call, and completes it with the answer', async () => {
    const run = await parentRun({ name: 'researcher', url: remote.base });
    await run.done;
    expect(lines(run.events)).toEqual([
      'say thinking',
      'say running researcher',
      'started d1',
      'say researcher: thinking',
      'say researcher: checking the weather; checking the time',
      'started d1/call_weather < d1',
      'started d1/call_clock < d1',
      'completed d1/call_clock < d1',
      'completed d1/call_weather < d1',
      'completed d1',
      'reply done',
    ]);
    expect(delegatingEnd(run.events)).toMatchObject({ result: 'It is 18 °C and clear in Paris; in Tokyo it is 21:04.' });
    const nested = run.events.map((e) => e.event).find((e) => e.type === 'toolFrame' && e.frame.toolCallId === 'd1/call_weather');
    expect(nested).toMatchObject({ frame: { name: 'weather', args: { city: 'Paris' } } });
    // The remote saw the delegation one hop deep.
    const [task] = (await remote.tasks.list(undefined, { pageSize: 1 })).tasks;
    expect(task.snapshot().history[0].metadata).toEqual({ [DELEGATION_METADATA_KEY]: { depth: 1, maxDepth: 4 } });
  });

  it('falls back to A2A 0.3 when the card offers only 0.3', async () => {
    // The card as a 0.3-only agent serves it: no supportedInterfaces, the URL at the top level.
    const legacyCard: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input instanceof Request ? input.url : input).endsWith('/.well-known/agent-card.json')) return response;
      const { supportedInterfaces: _v1, ...legacy } = (await response.json()) as Record<string, unknown>;
      return new Response(JSON.stringify(legacy), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const seenVersions: string[] = [];
    const spying: typeof fetch = (input, init) => {
      seenVersions.push(new Headers(init?.headers).get('A2A-Version') ?? 'none');
      return legacyCard(input, init);
    };
    const run = await parentRun({ name: 'researcher', url: remote.base, fetch: spying });
    await run.done;
    expect(lines(run.events)).toContain('completed d1/call_weather < d1');
    expect(delegatingEnd(run.events)).toMatchObject({ phase: 'completed', result: 'It is 18 °C and clear in Paris; in Tokyo it is 21:04.' });
    // The card request announces 1.0; the message goes out as 0.3 (no A2A-Version 1.0 header).
    expect(seenVersions.slice(1).every((v) => v !== '1.0')).toBe(true);
  });

  it('fails the delegating call with the remote failure message, and the parent run goes on', async () => {
    remote.worker.script = async (run) => {
      run.started('call_doc', 'read_doc', { page: 'x' });
      await run.sleep(5);
      run.fail('the model provider is down');
    };
    const run = await parentRun({ name: 'researcher', url: remote.base });
    await run.done;
    expect(lines(run.events).slice(-4)).toEqual([
      'started d1/call_doc < d1',
      'failed d1/call_doc < d1: the model provider is down',
      'failed d1: researcher failed: the model provider is down',
      'reply done',
    ]);
  });

  it('keeps a remote tool failure as a nested failed frame while the delegation completes', async () => {
    remote.worker.script = failingDocLookup;
    const run = await parentRun({ name: 'researcher', url: remote.base });
    await run.done;
    expect(lines(run.events)).toContain('failed d1/call_doc < d1: no page named missing-page');
    expect(delegatingEnd(run.events)).toMatchObject({ phase: 'completed', result: 'I could not find the page missing-page.' });
  });

  it('cancelling the parent cancels the remote task and ends the forwarded open tools "cancelled"', async () => {
    remote.worker.script = slowTool;
    const abort = new AbortController();
    const run = await parentRun({ name: 'researcher', url: remote.base }, undefined, abort.signal);
    await eventually(() => lines(run.events).includes('started d1/call_slow < d1'), 30_000);
    const remoteRun = [...remote.worker.runs.values()].find((r) => !r.settled);
    abort.abort();
    await run.done;
    expect(lines(run.events).slice(-2)).toEqual(['failed d1/call_slow < d1: cancelled', 'failed d1: cancelled']);
    await eventually(() => remote.worker.cancels.some((c) => c.correlationId === remoteRun?.id), 10_000);
    const task = await remote.tasks.find(remoteRun?.id ?? '', undefined);
    await eventually(() => task?.snapshot().status?.state === TaskState.TASK_STATE_CANCELED, 10_000);
  });

  it('an unreachable agent fails the call naming the agent and the cause', async () => {
    const port = await closedPort();
    const run = await parentRun({ name: 'researcher', url: `http://127.0.0.1:${port}` });
    await run.done;
    expect(delegatingEnd(run.events)).toMatchObject({ phase: 'failed', error: expect.stringMatching(new RegExp(`^researcher \\(http://127\\.0\\.0\\.1:${port}\\) is unreachable: .*ECONNREFUSED`)) });
    expect(lines(run.events).at(-1)).toBe('reply done');
  });

  it('a dropped stream fails the call naming the agent, and the remote task is cancelled', async () => {
    remote.worker.script = slowTool;
    // The connection breaks once the remote's first tool frame has arrived.
    const dropping: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!response.headers.get('content-type')?.includes('text/event-stream') || !response.body) return response;
      const reader = response.body.getReader();
      let seen = '';
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          seen += new TextDecoder().decode(value);
          if (seen.includes('call_slow')) {
            await reader.cancel();
            controller.error(new TypeError('terminated'));
          }
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const run = await parentRun({ name: 'researcher', url: remote.base, fetch: dropping });
    await run.done;
    expect(delegatingEnd(run.events)).toMatchObject({ phase: 'failed', error: expect.stringMatching(/^researcher: the stream broke before its task finished: terminated/) });
    expect(lines(run.events)).toContain('failed d1/call_slow < d1: researcher: the stream broke before its task finished: terminated');
    expect(lines(run.events).at(-1)).toBe('reply done');
    const remoteRun = [...remote.worker.runs.values()].at(-1);
    await eventually(() => remote.worker.cancels.some((c) => c.correlationId === remoteRun?.id), 10_000);
  });

  it('refuses to delegate past the depth limit carried in the message metadata', async () => {
    const before = remote.worker.runs.size;
    const run = await parentRun({ name: 'researcher', url: remote.base }, { [DELEGATION_METADATA_KEY]: { depth: 2, maxDepth: 2 } });
    await run.done;
    expect(delegatingEnd(run.events)).toMatchObject({
      phase: 'failed',
      error: 'researcher was not asked: the chain of agents is 2 deep, the limit is 2 (agents may be asking each other in a loop)',
    });
    expect(remote.worker.runs.size).toBe(before);
  });

  describe('with credentials', () => {
    let secured: ScriptedA2aApp;
    beforeAll(async () => {
      secured = await startScriptedA2aApp(parallelWeatherAndClock, { auth: { apiKeys: [API_KEY], bearerTokens: [] } });
    });
    afterAll(async () => {
      await secured.close();
    });

    it('sends the API key and gets through', async () => {
      const run = await parentRun({ name: 'researcher', url: secured.base, apiKey: API_KEY });
      await run.done;
      expect(delegatingEnd(run.events)).toMatchObject({ phase: 'completed' });
    });

    it('a wrong key fails the call naming the agent, never the key, and lets go of the call at once', async () => {
      // The signals the tool's requests carry: the message's is aborted once the tool is done with its stream.
      const signals: AbortSignal[] = [];
      const watching: typeof fetch = (input, init) => {
        if (init?.signal) signals.push(init.signal);
        return fetch(input, init);
      };
      const run = await parentRun({ name: 'researcher', url: secured.base, apiKey: 'wrong-key-0123456789-abcdef', fetch: watching });
      await run.done;
      const end = delegatingEnd(run.events);
      expect(end).toMatchObject({ phase: 'failed', error: expect.stringMatching(/^researcher answered an error: Invalid credentials/) });
      expect(JSON.stringify(run.events)).not.toContain('wrong-key-0123456789-abcdef');
      // A refused stream brings no task id to cancel: the tool does not wait for one (it polled for
      // cancelTimeoutMs, 5 s, holding the process open: Jest's "did not exit" after this file).
      expect(signals.length).toBeGreaterThan(0);
      await eventually(() => signals.every((s) => s.aborted), 1_000);
    });
  });
});
