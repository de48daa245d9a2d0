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
    expect(server.output()).toContain('drained: 0 finished, 1 cancelled');
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
    expect(server.output()).toContain('drained: 1 finished, 0 cancelled');
  });
});
