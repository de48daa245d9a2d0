/**
 * Agents that call agents, as real processes: the built demo app three times on free ports.
 * A (parent) knows `middle` (B) and `ghost` (nobody listens); B knows `leaf` (C) and `back` (A),
 * so A → B → C is a three-level chain and A → B → A → … a loop. A client talks to A only, with
 * the official SDK client, and sees B's (and C's) tool calls nested under the calls that
 * delegated to them, live. The last block runs the parent in Redis mode: two instances sharing
 * one redis-server, the delegation asked on one and read or cancelled through the other.
 */
import { StreamResponse, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, type Client } from '@a2a-js/sdk/client';
import { TOOL_CALL_V1_EXTENSION_URI, parseToolCall, type ToolCallArtifactData } from '../src/extensions';
import { buildOnce, freePort, startBuiltServer, type BuiltServer } from './support/built-server';
import { userMessage } from './support/clients';
import { startRedis, type TestRedis } from './support/redis-server';
import { collect, dataOf, rpc } from './support/sse';

const extensions = { serviceParameters: { 'A2A-Extensions': TOOL_CALL_V1_EXTENSION_URI } };
const send = (text: string) => ({ tenant: '', message: userMessage(text), configuration: undefined, metadata: undefined });

/** What a client reads of a stream: narration, frames (with their parent) and the end. */
interface Seen {
  lines: string[];
  frames: ToolCallArtifactData[];
  taskId?: string;
  answer: string;
}

function see(event: StreamResponse, seen: Seen): void {
  const payload = event.payload;
  switch (payload?.$case) {
    case 'task':
      seen.taskId = payload.value.id;
      return;
    case 'statusUpdate': {
      const state = TaskState[payload.value.status?.state ?? 0].replace('TASK_STATE_', '');
      const text = payload.value.status?.message?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      seen.lines.push(text ? `${state}: ${text}` : state);
      return;
    }
    case 'artifactUpdate': {
      const frame = parseToolCall(payload.value.artifact?.parts);
      if (frame) {
        seen.frames.push(frame);
        seen.lines.push(`${frame.phase} ${frame.name}${frame.parentToolCallId ? ` < ${frame.parentToolCallId}` : ''}`);
      } else {
        const text = payload.value.artifact?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('') ?? '';
        seen.answer = payload.value.append ? seen.answer + text : text;
      }
      return;
    }
  }
}

async function ask(client: Client, question: string, onEvent?: (seen: Seen) => void): Promise<Seen> {
  const seen: Seen = { lines: [], frames: [], answer: '' };
  for await (const event of client.sendMessageStream(send(question), extensions)) {
    see(event, seen);
    onEvent?.(seen);
  }
  return seen;
}

const clientOf = (base: string): Promise<Client> =>
  new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['JSONRPC'] })).createFromUrl(base);

/** The agent's newest task, read again (for up to 15 s) until it says CANCELED. */
/**
 * Asks through `sender` for a delegated slow step and cancels the parent task through `canceller`
 * once the remote's slow_task has started: the parent ends CANCELED with its forwarded and
 * delegating calls failed "cancelled", and the remote task (the newest on `remoteBase`) is CANCELED.
 */
async function cancelMidDelegation(sender: Client, canceller: Client, remoteBase: string): Promise<void> {
  let cancelled: Promise<unknown> | undefined;
  const seen = await ask(sender, 'ask middle: take a slow step of 9000 ms', (s) => {
    if (!cancelled && frameOf(s, 'slow_task', 'started') && s.taskId) cancelled = canceller.cancelTask({ tenant: '', id: s.taskId, metadata: undefined });
  });
  await cancelled;
  expect(seen.lines.at(-1)).toMatch(/^CANCELED/);
  expect(frameOf(seen, 'slow_task', 'failed')).toMatchObject({ error: 'cancelled' });
  expect(frameOf(seen, 'middle', 'failed')).toMatchObject({ error: 'cancelled' });
  const task = await newestTaskOnceCanceled(remoteBase);
  expect(task.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  expect(task.history[0].parts[0].content).toEqual({ $case: 'text', value: 'take a slow step of 9000 ms' });
}

async function newestTaskOnceCanceled(base: string): Promise<Task> {
  const remote = await clientOf(base);
  const page = await remote.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 1, pageToken: '', historyLength: 0, statusTimestampAfter: undefined, includeArtifacts: undefined });
  const read = () => remote.getTask({ tenant: '', id: page.tasks[0].id, historyLength: undefined });
  const deadline = Date.now() + 15_000;
  let task = await read();
  while (task.status?.state !== TaskState.TASK_STATE_CANCELED && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    task = await read();
  }
  return task;
}

const frameOf = (seen: Seen, name: string, phase: ToolCallArtifactData['phase']) => seen.frames.find((f) => f.name === name && f.phase === phase);
const indexOf = (seen: Seen, name: string, phase: ToolCallArtifactData['phase']) => seen.frames.findIndex((f) => f.name === name && f.phase === phase);

describe('agents that call agents: three demo app processes (e2e)', () => {
  let a: BuiltServer;
  let b: BuiltServer;
  let c: BuiltServer;
  let ghostPort: number;
  let client: Client;

  beforeAll(async () => {
    await buildOnce();
    const [portA, portB] = [await freePort(), await freePort()];
    ghostPort = await freePort();
    c = await startBuiltServer({});
    // A and B know each other, so both ports are chosen first; a card not readable at boot is read at the first call.
    [a, b] = await Promise.all([
      startBuiltServer({ TOOLSTREAM_REMOTE_AGENTS: `middle=http://127.0.0.1:${portB}, ghost=http://127.0.0.1:${ghostPort}` }, portA),
      startBuiltServer({ TOOLSTREAM_REMOTE_AGENTS: `leaf=${c.base},back=http://127.0.0.1:${portA}` }, portB),
    ]);
    client = await clientOf(a.base);
  }, 300_000);

  afterAll(async () => {
    await Promise.all([a, b, c].filter(Boolean).map((s) => s.stop()));
  });

  it('the parent card lists each remote agent as a skill', async () => {
    const card = (await (await fetch(`${b.base}/.well-known/agent-card.json`)).json()) as { skills: Array<{ id: string; examples: string[] }> };
    expect(card.skills.map((s) => s.id)).toEqual(expect.arrayContaining(['remote-agent-leaf', 'remote-agent-back']));
    // The example is the remote's own first example, addressed to it.
    const leafCard = (await (await fetch(`${c.base}/.well-known/agent-card.json`)).json()) as { skills: Array<{ examples: string[] }> };
    expect(card.skills.find((s) => s.id === 'remote-agent-leaf')?.examples[0]).toBe(`ask leaf: ${leafCard.skills[0].examples[0]}`);
  });

  it('the remote weather and world_clock calls appear nested, live between the delegating call\'s start and end', async () => {
    const seen = await ask(client, 'ask middle: weather in Paris and the time in Tokyo');
    const delegating = frameOf(seen, 'middle', 'started');
    expect(delegating?.parentToolCallId).toBeUndefined();
    for (const name of ['weather', 'world_clock']) {
      expect(frameOf(seen, name, 'started')?.parentToolCallId).toBe(delegating?.toolCallId);
      expect(frameOf(seen, name, 'completed')?.toolCallId).toMatch(new RegExp(`^${delegating?.toolCallId}/`));
      expect(indexOf(seen, name, 'started')).toBeGreaterThan(indexOf(seen, 'middle', 'started'));
      expect(indexOf(seen, name, 'completed')).toBeLessThan(indexOf(seen, 'middle', 'completed'));
    }
    expect(seen.lines).toContain('WORKING: middle: checking the weather; checking the clock');
    expect(String((frameOf(seen, 'middle', 'completed') as { result?: unknown }).result)).toMatch(/^Paris: .*In Tokyo it is/);
    expect(seen.answer).toMatch(/^middle: Paris: /);
    expect(seen.lines.at(-1)).toBe('COMPLETED');
  });

  it('a three-level chain forwards transitively: C\'s calls nest under B\'s call under A\'s', async () => {
    const seen = await ask(client, 'ask middle: ask leaf: weather in Rome');
    const top = frameOf(seen, 'middle', 'started');
    const second = frameOf(seen, 'leaf', 'started');
    const weather = frameOf(seen, 'weather', 'completed');
    expect(second?.parentToolCallId).toBe(top?.toolCallId);
    expect(weather?.parentToolCallId).toBe(second?.toolCallId);
    expect(weather?.toolCallId).toMatch(new RegExp(`^${top?.toolCallId}/[^/]+/[^/]+$`));
    expect(seen.lines).toContain('WORKING: middle: leaf: checking the weather');
    expect(frameOf(seen, 'middle', 'completed')).toBeDefined();
    expect(seen.answer).toContain('Rome');
  });

  it('a loop is refused at the depth limit with a clear failed frame, and every level still answers', async () => {
    const seen = await ask(client, 'ask middle: ask back: ask middle: ask back: ask middle: weather in Paris');
    const refused = seen.frames.find((f) => f.phase === 'failed');
    expect(refused).toMatchObject({ name: 'middle', error: 'middle was not asked: the chain of agents is 4 deep, the limit is 4 (agents may be asking each other in a loop)' });
    // Refused at the fifth call: four levels below the user's call.
    expect(refused?.toolCallId.split('/')).toHaveLength(5);
    expect(seen.frames.filter((f) => f.phase === 'completed').map((f) => f.name)).toEqual(['back', 'middle', 'back', 'middle']);
    expect(seen.lines.at(-1)).toBe('COMPLETED');
  });

  it('a remote agent that is down fails the delegating call with a clear message; the run goes on', async () => {
    const seen = await ask(client, 'ask ghost: weather in Paris');
    expect(frameOf(seen, 'ghost', 'failed')).toMatchObject({
      error: expect.stringMatching(new RegExp(`^ghost \\(http://127\\.0\\.0\\.1:${ghostPort}\\) is unreachable: .*ECONNREFUSED`)),
    });
    expect(seen.lines.at(-1)).toBe('COMPLETED');
    expect(a.output()).toContain(`ghost (http://127.0.0.1:${ghostPort}) is unreachable`);
  });

  it('cancelling the parent cancels the remote task (GetTask on the remote says CANCELED) and ends the forwarded open tool "cancelled"', async () => {
    await cancelMidDelegation(client, client, b.base);
  });
  it('a client that leaves mid-delegation cancels the parent task and the remote task, once the rejoin grace has passed', async () => {
    const controller = new AbortController();
    const seen: Seen = { lines: [], frames: [], answer: '' };
    try {
      for await (const event of client.sendMessageStream(send('ask middle: take a slow step of 9000 ms'), { ...extensions, signal: controller.signal })) {
        see(event, seen);
        if (frameOf(seen, 'slow_task', 'started')) controller.abort();
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    }
    expect(frameOf(seen, 'slow_task', 'started')).toBeDefined();
    // Both end CANCELED well before the 9 s step would have completed.
    const [parent, remote] = await Promise.all([newestTaskOnceCanceled(a.base), newestTaskOnceCanceled(b.base)]);
    expect(parent.id).toBe(seen.taskId);
    expect(parent.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(remote.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(remote.history[0].parts[0].content).toEqual({ $case: 'text', value: 'take a slow step of 9000 ms' });
  });

  describe('with the parent in Redis mode (two instances on one redis-server)', () => {
    let redis: TestRedis;
    let r1: BuiltServer;
    let r2: BuiltServer;

    beforeAll(async () => {
      redis = await startRedis();
      const env = { TOOLSTREAM_REDIS_URL: redis.url, TOOLSTREAM_REMOTE_AGENTS: `middle=${b.base}` };
      [r1, r2] = await Promise.all([startBuiltServer(env), startBuiltServer(env)]);
    }, 120_000);

    afterAll(async () => {
      await Promise.all([r1, r2].filter(Boolean).map((s) => s.stop()));
      await redis?.stop();
    });

    it('forwards the remote calls nested and live, and the other instance reads them back from Redis', async () => {
      const seen = await ask(await clientOf(r1.base), 'ask middle: weather in Paris and the time in Tokyo');
      const delegating = frameOf(seen, 'middle', 'started');
      for (const name of ['weather', 'world_clock']) {
        expect(frameOf(seen, name, 'started')?.parentToolCallId).toBe(delegating?.toolCallId);
        expect(indexOf(seen, name, 'started')).toBeGreaterThan(indexOf(seen, 'middle', 'started'));
        expect(indexOf(seen, name, 'completed')).toBeLessThan(indexOf(seen, 'middle', 'completed'));
      }
      expect(seen.lines.at(-1)).toBe('COMPLETED');
      // The same task through the second instance: the snapshot and a full replay, both from Redis.
      const other = await clientOf(r2.base);
      const task = await other.getTask({ tenant: '', id: seen.taskId!, historyLength: undefined });
      const stored = task.artifacts.map((artifact) => parseToolCall(artifact.parts)).filter((f): f is ToolCallArtifactData => !!f);
      expect(stored.filter((f) => f.parentToolCallId === delegating?.toolCallId).map((f) => `${f.name} ${f.phase}`).sort()).toEqual(['weather completed', 'world_clock completed']);
      // A finished task has nothing left to subscribe to, but a resume from its first event replays the log.
      const replay: Seen = { lines: [], frames: [], answer: '' };
      const resumed = await rpc(r2.base, 'SubscribeToTask', { id: seen.taskId }, { headers: { 'last-event-id': '1', ...extensions.serviceParameters } });
      for (const message of await collect(resumed)) see(StreamResponse.fromJSON(dataOf(message).result), replay);
      expect(replay.frames.map((f) => `${f.name} ${f.phase} ${f.parentToolCallId ?? '-'}`)).toEqual(seen.frames.map((f) => `${f.name} ${f.phase} ${f.parentToolCallId ?? '-'}`));
      expect(replay.answer).toBe(seen.answer);
    });

    it('a CancelTask sent to the other instance cancels the run, the remote task, and ends the forwarded open tool "cancelled"', async () => {
      await cancelMidDelegation(await clientOf(r1.base), await clientOf(r2.base), b.base);
    });
  });
});
