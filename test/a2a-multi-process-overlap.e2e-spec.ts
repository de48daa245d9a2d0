/**
 * Overlap across real processes: 500 tasks at once, spread over three `node dist/main.js` on one
 * redis-server of the test's own (an api instance and two of role all, so the runs spread over
 * two processes through the run queue), from three callers with API keys taking turns. Each
 * task computes its own expression, so every frame says which task it belongs to. Counted:
 * misdelivered frames (a frame of another task, whoever's, on a stream) and lost frames (a frame
 * the task logged that its stream did not carry, or a stream that did not end COMPLETED); both
 * must be 0.
 */
import { parseToolCall, type ToolCallArtifactData } from '../src/extensions';
import { buildOnce, startBuiltServer, type BuiltServer } from './support/built-server';
import { startRedis, type TestRedis } from './support/redis-server';
import { readSse } from './support/sse';

jest.setTimeout(240_000);

const OVERLAPPING_TASKS = 500;
const KEYS = ['overlap-mp-key-a-3c9d0e1f', 'overlap-mp-key-b-7a8b6c5d', 'overlap-mp-key-c-2e4f6a8b'];

interface Seen {
  taskId: string;
  frames: ToolCallArtifactData[];
  lastState?: string;
}

/** The task id, tool frames and final state of a JSON-RPC 1.0 stream. */
async function read(response: Response): Promise<Seen> {
  const seen: Seen = { taskId: '', frames: [] };
  for await (const message of readSse(response)) {
    if (message.data === undefined) continue;
    const result = (JSON.parse(message.data) as { result: Record<string, Record<string, unknown>> }).result;
    if (result.task) seen.taskId = result.task.id as string;
    const frame = parseToolCall((result.artifactUpdate?.artifact as { parts?: unknown[] } | undefined)?.parts);
    if (frame) seen.frames.push(frame);
    const state = (result.statusUpdate?.status as { state?: string } | undefined)?.state;
    if (state) seen.lastState = state;
  }
  return seen;
}

const rpc = (base: string, key: string, method: string, params: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${base}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': key, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });

/**
 * A read's JSON answer, asked again once if the connection broke: a keep-alive socket the server
 * closed as idle just as the client reused it (seen under load) is no answer of the server's.
 */
async function readOnce(call: () => Promise<Response>): Promise<unknown> {
  try {
    return await (await call()).json();
  } catch {
    return (await call()).json();
  }
}

describe('overlap across three processes on one Redis (e2e)', () => {
  let redis: TestRedis;
  let servers: BuiltServer[] = [];

  beforeAll(async () => {
    await buildOnce();
    redis = await startRedis();
    const env = (role: string): Record<string, string> => ({
      TOOLSTREAM_REDIS_URL: redis.url,
      TOOLSTREAM_ROLE: role,
      TOOLSTREAM_API_KEYS: KEYS.join(','),
      TOOLSTREAM_OFFLINE_PIECE_DELAY_MS: '5',
    });
    servers = await Promise.all([startBuiltServer(env('api')), startBuiltServer(env('all')), startBuiltServer(env('all'))]);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await redis?.stop();
  });

  it(`${OVERLAPPING_TASKS} overlapping tasks of three callers spread over the instances: 0 misdelivered, 0 lost frames`, async () => {
    // Task n: the n-th caller's, sent to the n-th instance, computing its own expression.
    const expressionOf = (n: number): string => `${1000 + n}*7`;
    const streams = await Promise.all(
      Array.from({ length: OVERLAPPING_TASKS }, async (_, n) => {
        const response = await rpc(servers[n % servers.length].base, KEYS[n % KEYS.length], 'SendStreamingMessage', {
          message: { messageId: `overlap-${n}`, role: 'ROLE_USER', parts: [{ text: `what's ${expressionOf(n)}` }] },
        });
        expect(response.status).toBe(200);
        return { n, ...(await read(response)) };
      }),
    );

    // What each task logged, read back whole on an instance other than the one that streamed it.
    const logged = await Promise.all(
      streams.map(async (stream) => {
        const base = servers[(stream.n + 1) % servers.length].base;
        return read(await rpc(base, KEYS[stream.n % KEYS.length], 'SubscribeToTask', { id: stream.taskId }, { 'last-event-id': '0' }));
      }),
    );
    const key = (frame: ToolCallArtifactData): string => JSON.stringify(frame);
    /** Whether the frame is about task n's own expression (tool call ids repeat across tasks: call_0 in each). */
    const ofTask = (frame: ToolCallArtifactData, n: number): boolean =>
      frame.phase === 'started'
        ? (frame.args as { expression?: string } | undefined)?.expression === expressionOf(n)
        : frame.phase === 'completed' && JSON.stringify(frame.result ?? null).includes(String((1000 + n) * 7));
    let misdelivered = 0;
    let lost = 0;
    let delivered = 0;
    for (const [i, stream] of streams.entries()) {
      const expected = logged[i].frames;
      const own = new Set(expected.map(key));
      // A frame of another task (whoever's): not in this task's log, or about another expression.
      misdelivered += stream.frames.filter((frame) => !own.has(key(frame)) || !ofTask(frame, stream.n)).length;
      delivered += stream.frames.length;
      // Each task calls the calculator once, started then completed, and ends COMPLETED; its stream carries all of it.
      const carried = new Set(stream.frames.map(key));
      lost += expected.filter((frame) => !carried.has(key(frame))).length + Math.max(0, 2 - expected.filter((frame) => ofTask(frame, stream.n)).length);
      if (stream.lastState !== 'TASK_STATE_COMPLETED') lost += 1;
    }
    // Each task is its caller's: the next caller gets "not found" on any instance.
    const foreignReads = await Promise.all(
      streams.map((stream) => readOnce(() => rpc(servers[stream.n % servers.length].base, KEYS[(stream.n + 1) % KEYS.length], 'GetTask', { id: stream.taskId }))),
    );
    expect(servers.map((s) => s.child.exitCode)).toEqual(servers.map(() => null));
    const leaked = foreignReads.filter((answer) => (answer as { error?: { code: number } }).error?.code !== -32001).length;

    // eslint-disable-next-line no-console
    console.info(`overlap over ${servers.length} processes: ${OVERLAPPING_TASKS} tasks of ${KEYS.length} callers, ${delivered} frames delivered; misdelivered ${misdelivered}, lost ${lost}, readable by another caller ${leaked}`);
    expect(new Set(streams.map((s) => s.taskId)).size).toBe(OVERLAPPING_TASKS);
    expect({ misdelivered, lost, leaked }).toEqual({ misdelivered: 0, lost: 0, leaked: 0 });
    expect(delivered).toBe(2 * OVERLAPPING_TASKS);
  });
});
