/**
 * Overlap under load: 500 concurrent tasks on the real executor, each with its own tools, over
 * both bindings and both protocol versions. Every stream's frames must be exactly its run's
 * frames as the runtime published them on the bus: none delivered to the wrong stream, none lost.
 * Once more with authentication on (150 tasks, three callers with API keys taking turns): the
 * same, and no caller can read another's task.
 */
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { A2aModule, AgentBus, AgentRuntimeService, ExecutorModule, RuntimeModule, TaskService, type TaskTopicKind, type TaskTopicPayloads } from '../src';
import { parseToolCall, type ToolCallArtifactData } from '../src/extensions';
import { EventEmitterAgentBus } from '../src/runtime';
import { OfflineChatModel, readCurrentTurn } from '../src/executor/models/offline-chat-model';
import { collect, eventually } from './support/sse';
import { useStoreMode } from './support/store-modes';

const OVERLAPPING_TASKS = 500;
const CALLS_PER_TASK = 3;

/** The default bus, also keeping every tool frame the runtime publishes, per task. */
@Injectable()
class RecordingBus extends EventEmitterAgentBus {
  readonly frames = new Map<string, ToolCallArtifactData[]>();

  constructor(emitter: EventEmitter2) {
    super(emitter);
  }

  override publish<K extends TaskTopicKind>(kind: K, correlationId: string, payload: TaskTopicPayloads[K]): void {
    if (kind === 'toolframe') {
      const list = this.frames.get(correlationId) ?? [];
      list.push(JSON.parse(JSON.stringify((payload as TaskTopicPayloads['toolframe']).frame)) as ToolCallArtifactData);
      this.frames.set(correlationId, list);
    }
    super.publish(kind, correlationId, payload);
  }
}

/** "use N": CALLS_PER_TASK parallel calls of tool_N, then an answer from their results. */
class PerTaskModel extends OfflineChatModel {
  _llmType(): string {
    return 'per-task-test';
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const turn = readCurrentTurn(messages);
    const n = Number(/use (\d+)/.exec(turn.request)?.[1]);
    if (turn.modelTurns > 0) return this.result(new AIMessage(`task ${n}: ${turn.outcomes.map((o) => JSON.stringify(o.value)).join(' ')}`));
    const calls = Array.from({ length: CALLS_PER_TASK }, (_, k) => ({ id: `r${n}_${k}`, name: `tool_${n}`, args: { n, part: k } }));
    return this.result(new AIMessage({ content: '', tool_calls: calls }));
  }
}

const tools = Array.from({ length: OVERLAPPING_TASKS }, (_, i) =>
  tool(
    async ({ part }: { n: number; part: number }) => {
      await new Promise((resolve) => setTimeout(resolve, (i * 7 + part * 5) % 20));
      return { owner: i, part };
    },
    { name: `tool_${i}`, description: `tool ${i}`, schema: z.object({ n: z.number(), part: z.number() }) },
  ),
);

type Binding = 'JSON-RPC 1.0' | 'HTTP+JSON 1.0' | 'JSON-RPC 0.3';
const BINDINGS: Binding[] = ['JSON-RPC 1.0', 'HTTP+JSON 1.0', 'JSON-RPC 0.3'];

const KEYS = ['overlap-key-a-19f2e3d4', 'overlap-key-b-5a6b7c8d', 'overlap-key-c-0e1f2a3b'];
/**
 * Redis mode at reduced scale, the same contract: one instance takes ~10 runs/s from the run
 * queue on a loaded 2-core CI runner (500 took ~45 s there). 500 overlapping tasks over three
 * processes on one Redis: test/a2a-multi-process.e2e-spec.ts.
 */
const REDIS_OVERLAPPING_TASKS = 150;
const REDIS_OVERLAPPING_TASKS_AUTH = 60;

describe.each([
  { mode: 'memory' as const, auth: 'off', OVERLAPPING_TASKS, keys: [] as string[] },
  // Reduced scale: the same paths behind the credential check (keeps CI time small).
  { mode: 'memory' as const, auth: 'on', OVERLAPPING_TASKS: 150, keys: KEYS },
  // The same contract on the Redis store (one instance, role all; every run through the run queue).
  { mode: 'redis' as const, auth: 'off', OVERLAPPING_TASKS: REDIS_OVERLAPPING_TASKS, keys: [] as string[] },
  { mode: 'redis' as const, auth: 'on', OVERLAPPING_TASKS: REDIS_OVERLAPPING_TASKS_AUTH, keys: KEYS },
])('overlap under load (e2e, $mode store, authentication $auth)', ({ mode, OVERLAPPING_TASKS, keys }) => {
  const store = useStoreMode(mode);
  let app: INestApplication;
  let base: string;
  /** The n-th stream's caller (the callers take turns); no header when authentication is off. */
  const keyOf = (n: number): Record<string, string> => (keys.length > 0 ? { 'x-api-key': keys[n % keys.length] } : {});

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RuntimeModule.forRoot({ executor: ExecutorModule.forRoot({ model: new PerTaskModel({}), tools }) }),
        // In Redis mode every task runs at once, as in memory (the run queue's default is 32 at a time).
        A2aModule.forRoot({ auth: keys.length > 0 ? { apiKeys: keys } : false, ...store.options({ maxConcurrentRuns: OVERLAPPING_TASKS }) }),
      ],
    })
      .overrideProvider(AgentBus)
      .useFactory({ factory: () => new RecordingBus(new EventEmitter2({ wildcard: false, maxListeners: 0 })) })
      .compile();
    app = moduleRef.createNestApplication({ logger: ['error', 'warn'], bodyParser: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
  });
  afterAll(async () => {
    await app.close();
  });
  afterAll(() => store.stop());

  function request(binding: Binding, n: number): Promise<Response> {
    const text = `use ${n}`;
    if (binding === 'HTTP+JSON 1.0') {
      return fetch(`${base}/message:stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/a2a+json', 'a2a-version': '1.0', ...keyOf(n) },
        body: JSON.stringify({ message: { messageId: `m${n}`, role: 'ROLE_USER', parts: [{ text }] } }),
      });
    }
    const legacy = binding === 'JSON-RPC 0.3';
    const message = legacy ? { kind: 'message', messageId: `m${n}`, role: 'user', parts: [{ kind: 'text', text }] } : { messageId: `m${n}`, role: 'ROLE_USER', parts: [{ text }] };
    return fetch(`${base}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(legacy ? {} : { 'a2a-version': '1.0' }), ...keyOf(n) },
      body: JSON.stringify({ jsonrpc: '2.0', id: n, method: legacy ? 'message/stream' : 'SendStreamingMessage', params: { message } }),
    });
  }

  /** A stream's task id and tool-call-v1 frames, read from the wire of its binding and version. */
  async function read(binding: Binding, response: Response): Promise<{ taskId: string; frames: ToolCallArtifactData[]; last: string }> {
    const results = (await collect(response))
      .filter((m) => m.data)
      .map((m) => {
        const json = JSON.parse(m.data!) as Record<string, unknown>;
        return (binding === 'HTTP+JSON 1.0' ? json : json.result) as Record<string, { id?: string; artifact?: { parts: unknown[] } } | string | undefined> & {
          kind?: string;
          id?: string;
          artifact?: { parts: unknown[] };
        };
      });
    const first = results[0];
    const taskId = binding === 'JSON-RPC 0.3' ? first.id! : (first.task as { id: string }).id;
    const frames = results
      .map((r) => (binding === 'JSON-RPC 0.3' ? (r.kind === 'artifact-update' ? r.artifact : undefined) : (r.artifactUpdate as { artifact?: { parts: unknown[] } } | undefined)?.artifact))
      .map((artifact) => (artifact ? parseToolCall(artifact.parts) : undefined))
      .filter((frame): frame is ToolCallArtifactData => frame !== undefined);
    return { taskId, frames, last: JSON.stringify(results[results.length - 1]) };
  }

  it(`${OVERLAPPING_TASKS} concurrent tasks with distinct tools: every stream carries exactly its run's frames as published, no more, no fewer`, async () => {
    const streams = await Promise.all(
      Array.from({ length: OVERLAPPING_TASKS }, async (_, n) => {
        const binding = BINDINGS[n % BINDINGS.length];
        return { n, binding, ...(await read(binding, await request(binding, n))) };
      }),
    );
    const bus = app.get(AgentBus) as RecordingBus;
    let delivered = 0;
    for (const stream of streams) {
      expect(stream.last).toMatch(/TASK_STATE_COMPLETED|"state":"completed"/);
      const published = bus.frames.get(stream.taskId) ?? [];
      expect(published).toHaveLength(2 * CALLS_PER_TASK);
      // Exactly the run's frames, in the order published: nothing from another task, nothing lost.
      expect(stream.frames).toEqual(published);
      for (const frame of stream.frames) {
        expect(frame.name).toBe(`tool_${stream.n}`);
        expect(frame.toolCallId).toMatch(new RegExp(`^r${stream.n}_\\d$`));
        if (frame.phase === 'completed') expect(frame.result).toEqual({ owner: stream.n, part: Number(frame.toolCallId.slice(-1)) });
      }
      delivered += stream.frames.length;
    }
    expect(new Set(streams.map((s) => s.taskId)).size).toBe(OVERLAPPING_TASKS);
    if (keys.length > 0) {
      // Each task is its caller's: the owner reads it, the next caller gets "not found".
      const reads = await Promise.all(
        streams.map(async ({ n, taskId }) =>
          Promise.all([n, n + 1].map((k) => fetch(`${base}/tasks/${taskId}`, { headers: { 'a2a-version': '1.0', ...keyOf(k) } }).then((r) => r.status))),
        ),
      );
      expect(reads.filter(([own, other]) => own !== 200 || other !== 404)).toEqual([]);
    }
    expect(delivered).toBe([...bus.frames.values()].reduce((sum, frames) => sum + frames.length, 0));
    await eventually(() => app.get(AgentRuntimeService).activeRuns() === 0 && app.get(TaskService).metrics().openStreams === 0, 10_000, 'everything released');
    expect(app.get(TaskService).metrics()).toMatchObject({ liveTasks: 0, topicSubscriptions: 0, openStreams: 0 });
    // eslint-disable-next-line no-console
    console.info(`overlap: ${OVERLAPPING_TASKS} concurrent tasks${keys.length > 0 ? ` of ${keys.length} callers` : ''}, ${delivered} frames, each on its own stream, none lost`);
  }, 120_000);
});
