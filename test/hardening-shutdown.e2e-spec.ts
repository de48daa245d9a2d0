/**
 * Graceful shutdown of the built server: `npm run build` once, then `node dist/main.js` as a
 * child process on a free port; a stream on a slow run; SIGTERM. New requests are refused (503),
 * the running task reaches a terminal state within the drain time, its streams get that final
 * event and close, and the process exits 0.
 */
import { buildOnce, startBuiltServer } from './support/built-server';
import { readSse, type SseMessage } from './support/sse';

const post = (base: string, method: string, params: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'sd', method, params }),
  });
const message = (text: string) => ({ messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] });

/** Reads a stream until an event matches; returns the reader to go on with. */
async function until(reader: AsyncGenerator<SseMessage>, match: (data: string) => boolean): Promise<string> {
  for (;;) {
    const { value, done } = await reader.next();
    if (done) throw new Error('the stream ended first');
    if (value.data && match(value.data)) return value.data;
  }
}

async function rest(reader: AsyncGenerator<SseMessage>): Promise<string[]> {
  const data: string[] = [];
  for await (const message of reader) if (message.data) data.push(message.data);
  return data;
}

/** After SIGTERM: new requests are refused with 503 on both bindings, in their shapes (polls until the signal has landed). */
async function expectRefused(base: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  let response = await post(base, 'SendMessage', { message: message('hello') });
  while (response.status !== 503 && Date.now() < deadline) {
    await response.text();
    await new Promise((resolve) => setTimeout(resolve, 20));
    response = await post(base, 'SendMessage', { message: message('hello') });
  }
  expect(response.status).toBe(503);
  expect(response.headers.get('retry-after')).toBe('5');
  expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 'sd', error: { code: -32603, message: 'The server is shutting down and takes no new requests; retry shortly' } });
  const listed = await fetch(`${base}/tasks`, { headers: { 'a2a-version': '1.0' } });
  expect(listed.status).toBe(503);
  expect(await listed.json()).toMatchObject({ error: { code: 503, status: 'UNAVAILABLE' } });
  const health = await fetch(`${base}/healthz`);
  expect(health.status).toBe(503);
  expect(await health.json()).toMatchObject({ status: 'error', error: { a2a: { status: 'down', draining: true } } });
}

/** A stream on any binding and version, with what a finished one must end with. */
interface Stream {
  name: string;
  events: AsyncGenerator<SseMessage>;
  /** Whether a data event is the terminal CANCELED status of this version. */
  cancelled: (data: string) => boolean;
}

const cancelled10 = (d: string) => d.includes('TASK_STATE_CANCELED');
const cancelled03 = (d: string) => d.includes('"state":"canceled"') && d.includes('"final":true');

/** Starts a stream of a slow run on one binding and version; resolves with the task id and the id of its tool's `started` event. */
async function startStream(base: string, kind: 'JSON-RPC 1.0' | 'JSON-RPC 0.3' | 'HTTP+JSON'): Promise<Stream & { taskId: string; startedId: string }> {
  const text = 'take a slow step of 10000 ms';
  const response =
    kind === 'JSON-RPC 1.0'
      ? await post(base, 'SendStreamingMessage', { message: message(text) })
      : kind === 'JSON-RPC 0.3'
        ? await fetch(`${base}/a2a`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 'sd', method: 'message/stream', params: { message: { kind: 'message', messageId: `m-${Math.random()}`, role: 'user', parts: [{ kind: 'text', text }] } } }),
          })
        : await fetch(`${base}/message:stream`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
            body: JSON.stringify({ message: message(text) }),
          });
  expect(response.status).toBe(200);
  const events = readSse(response);
  let taskId = '';
  for (;;) {
    const { value, done } = await events.next();
    if (done) throw new Error(`${kind}: the stream ended before its tool started`);
    const data = value.data ?? '';
    const found = /"(?:id|taskId)":"([0-9a-f-]{36})"/.exec(data);
    if (!taskId && found) taskId = found[1];
    if (data.includes('"phase":"started"')) return { name: `${kind} start`, events, cancelled: kind === 'JSON-RPC 0.3' ? cancelled03 : cancelled10, taskId, startedId: value.id ?? '' };
  }
}

/** Joins a running task on one binding and version, from Last-Event-ID when given. */
async function joinStream(base: string, kind: 'JSON-RPC 1.0' | 'JSON-RPC 0.3' | 'HTTP+JSON', taskId: string, lastEventId?: string): Promise<Stream> {
  const resume: Record<string, string> = lastEventId === undefined ? {} : { 'last-event-id': lastEventId };
  const response =
    kind === 'JSON-RPC 1.0'
      ? await post(base, 'SubscribeToTask', { id: taskId }, resume)
      : kind === 'JSON-RPC 0.3'
        ? await fetch(`${base}/a2a`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...resume },
            body: JSON.stringify({ jsonrpc: '2.0', id: 'sd', method: 'tasks/resubscribe', params: { id: taskId } }),
          })
        : await fetch(`${base}/tasks/${taskId}:subscribe`, { method: 'POST', headers: { 'a2a-version': '1.0', ...resume } });
  if (response.status !== 200) throw new Error(`${kind} ${lastEventId ?? ''}: ${response.status} ${await response.text()}`);
  const events = readSse(response);
  // The first event is there (a replayed one, or the Task): the stream is attached.
  expect((await events.next()).done).toBe(false);
  return { name: `${kind} ${lastEventId === undefined ? 'subscribe' : 'resume'}`, events, cancelled: kind === 'JSON-RPC 0.3' ? cancelled03 : cancelled10 };
}

describe('graceful shutdown of the built server (e2e)', () => {
  beforeAll(async () => {
    // Shared with the other tests of the built server: one build, never two at once over dist/.
    await buildOnce();
  }, 180_000);

  it('SIGTERM: new requests 503, the slow run past the drain time is cancelled, its streams end with CANCELED, exit 0', async () => {
    const server = await startBuiltServer({ TOOLSTREAM_DRAIN_TIMEOUT_MS: '1000' });
    const origin = readSse(await post(server.base, 'SendStreamingMessage', { message: message('take a slow step of 8000 ms') }));
    const first = await until(origin, (d) => d.includes('"task"'));
    const taskId = (JSON.parse(first) as { result: { task: { id: string } } }).result.task.id;
    await until(origin, (d) => d.includes('"phase":"started"'));
    const watcher = readSse(await post(server.base, 'SubscribeToTask', { id: taskId }));
    await watcher.next();

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await expectRefused(server.base);
    const [originRest, watcherRest] = await Promise.all([rest(origin), rest(watcher)]);
    const closedAfter = Date.now() - signalled;
    for (const events of [originRest, watcherRest]) {
      expect(events.find((d) => d.includes('"phase":"failed"'))).toContain('"error":"cancelled"');
      expect(events[events.length - 1]).toContain('TASK_STATE_CANCELED');
      expect(events[events.length - 1]).toContain('the server is shutting down');
    }
    // Bounded: the drain time, plus the cancel and a flush (generous on a shared machine).
    expect(closedAfter).toBeLessThan(1_000 + 5_000);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    // A request sent before the signal landed may have started (and finished) a task of its own.
    expect(server.output()).toMatch(/drained: \d+ finished, 1 cancelled/);
  });

  it('SIGTERM: a run that ends within the drain time completes, its stream gets COMPLETED, exit 0', async () => {
    const server = await startBuiltServer({ TOOLSTREAM_DRAIN_TIMEOUT_MS: '15000' });
    const origin = readSse(await post(server.base, 'SendStreamingMessage', { message: message('take a slow step of 1500 ms') }));
    await until(origin, (d) => d.includes('"phase":"started"'));
    server.child.kill('SIGTERM');
    await expectRefused(server.base);
    const events = await rest(origin);
    expect(events.find((d) => d.includes('"phase":"completed"'))).toContain('"waitedMs":1500');
    expect(events[events.length - 1]).toContain('TASK_STATE_COMPLETED');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    // As above: a request sent before the signal landed may have started (and finished) a task of its own.
    expect(server.output()).toMatch(/drained: [1-9]\d* finished, 0 cancelled/);
  });

  it('SIGTERM: every stream of every binding and version, starting or resuming, ends with the cancelled frame and CANCELED status', async () => {
    const DRAIN_MS = 1_500;
    const server = await startBuiltServer({ TOOLSTREAM_DRAIN_TIMEOUT_MS: String(DRAIN_MS) });
    const kinds = ['JSON-RPC 1.0', 'JSON-RPC 0.3', 'HTTP+JSON'] as const;
    const started = await Promise.all(kinds.map((kind) => startStream(server.base, kind)));
    // Each task resumed (from just before its tool's `started` event, which is replayed) and joined on the two other bindings.
    const joined = await Promise.all(
      started.flatMap((origin, i) => [
        joinStream(server.base, kinds[(i + 1) % 3], origin.taskId, String(Number(origin.startedId) - 1)),
        joinStream(server.base, kinds[(i + 2) % 3], origin.taskId),
      ]),
    );
    const streams: Stream[] = [...started, ...joined];

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    const endings = await Promise.all(
      streams.map(async (stream) => {
        const data = await rest(stream.events).catch((err: unknown) => [`${stream.name} broke off: ${String(err)}`]);
        return { name: stream.name, data, cancelled: stream.cancelled };
      }),
    );
    const closedAfter = Date.now() - signalled;
    const outcomes = endings.map(({ name, data, cancelled }) => ({
      name,
      failedCancelled: data.some((d) => d.includes('"phase":"failed"') && d.includes('"error":"cancelled"')),
      endsCancelled: cancelled(data[data.length - 1] ?? '') && (data[data.length - 1] ?? '').includes('the server is shutting down'),
      last: `${data.length} events, the last: ${(data[data.length - 1] ?? '').slice(0, 600)}`,
    }));
    const broken = outcomes.filter((o) => !o.failedCancelled || !o.endsCancelled);
    if (broken.length > 0) console.info(`streams that did not end with the cancelled frame and status:\n${broken.map((o) => `${o.name}: ${o.last}`).join('\n')}`);
    expect(outcomes.map(({ name, failedCancelled, endsCancelled }) => ({ name, failedCancelled, endsCancelled }))).toEqual(
      streams.map(({ name }) => ({ name, failedCancelled: true, endsCancelled: true })),
    );
    // Bounded: the drain time plus the cancel and the flush (generous on a shared machine).
    expect(closedAfter).toBeLessThan(DRAIN_MS + 5_000);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).toMatch(/drained: \d+ finished, 3 cancelled, 0 stream\(s\) left open/);
    console.info(`shutdown: ${streams.length} streams (3 bindings/versions, starting, resuming, joining) all ended with CANCELED ${closedAfter} ms after SIGTERM (drain ${DRAIN_MS} ms)`);
  });
});
