/**
 * Clients that take their time, on raw sockets: unauthenticated bodies that never finish (401
 * before any body byte is read, and the socket closed), bodies that trickle past their time
 * budget (408, closed), and streams whose client stops reading (closed after the stall time,
 * the task going on, the client resuming where it was).
 */
import { connect, type Socket } from 'node:net';
import { manual } from './support/scripts';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import type { ScriptedRun } from './support/scripted-worker';
import { collect, eventually, rpc } from './support/sse';

const KEY = 'slow-key-0a1b2c3d4e5f607182';
const BODY_TIMEOUT_MS = 1_500;
const STALLED_MS = 1_500;
/** Slow-body connections opened at once. */
const SLOW_BODIES = 200;

/** A raw connection: everything it received, and whether the server closed it. */
interface RawConnection {
  socket: Socket;
  received: () => string;
  status: () => number;
  closed: Promise<void>;
}

function open(port: number, head: string): RawConnection {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(head);
  return { socket, received: () => received, status: () => Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0), closed };
}

/** Resolves when the connection closes, or fails after `ms` (a server holding a slow client for minutes). */
function closedWithin(connection: RawConnection, ms: number, what: string): Promise<void> {
  return Promise.race([
    connection.closed,
    new Promise<void>((_, reject) => setTimeout(() => reject(new Error(`${what}: still open after ${ms} ms; received ${JSON.stringify(connection.received().slice(0, 200))}`)), ms).unref()),
  ]);
}

const slowHead = (path: string, headers = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n${headers}\r\n{"jsonrpc":`;

describe('slow request bodies (e2e)', () => {
  let server: ScriptedA2aApp;
  let port: number;

  beforeAll(async () => {
    server = await startScriptedA2aApp(manual, { auth: { apiKeys: [KEY] }, bodyTimeoutMs: BODY_TIMEOUT_MS }, { bodyParser: false });
    port = Number(new URL(server.base).port);
  });
  afterAll(() => server.close());

  it(`${SLOW_BODIES} unauthenticated connections declaring a 100 kB body they never send: each answered 401 at once and closed`, async () => {
    const began = Date.now();
    const connections = Array.from({ length: SLOW_BODIES }, (_, i) => open(port, slowHead(i % 2 === 0 ? '/a2a' : '/message:send')));
    // Well under the body time budget: the answer does not wait for the body.
    await Promise.all(connections.map((c, i) => closedWithin(c, BODY_TIMEOUT_MS - 500 + 5_000, `connection ${i}`)));
    const ms = Date.now() - began;
    for (const connection of connections) {
      expect(connection.status()).toBe(401);
      expect(connection.received()).toMatch(/\r\nconnection: close\r\n/i);
      expect(connection.received()).toMatch(/www-authenticate: ApiKey/i);
    }
    expect(connections[0].received()).toContain('"code":-32000');
    expect(connections[1].received()).toContain('"status":"UNAUTHENTICATED"');
    console.info(`slow bodies: ${SLOW_BODIES} unauthenticated connections answered 401 and closed in ${ms} ms in all`);
  });

  it('an authenticated body that trickles past bodyTimeoutMs: 408 in the binding\'s shape, and the socket closed', async () => {
    const trickles = ['/a2a', '/message:send'].map((path) => {
      const connection = open(port, slowHead(path, `X-API-Key: ${KEY}\r\n`));
      const timer = setInterval(() => connection.socket.write(' '), 200);
      void connection.closed.then(() => clearInterval(timer));
      return connection;
    });
    await Promise.all(trickles.map((c, i) => closedWithin(c, BODY_TIMEOUT_MS + 10_000, `trickle ${i}`)));
    expect(trickles.map((c) => c.status())).toEqual([408, 408]);
    expect(trickles[0].received()).toContain('"code":-32600');
    expect(trickles[0].received()).toContain('within 1500 ms (bodyTimeoutMs)');
    expect(trickles[1].received()).toContain('"status":"DEADLINE_EXCEEDED"');
  });

  it('a client that sends its body in time is served, also on a kept-alive connection', async () => {
    for (let i = 0; i < 2; i++) {
      const response = await rpc(server.base, 'ListTasks', {}, { headers: { 'x-api-key': KEY } });
      expect(response.status).toBe(200);
    }
  });
});

describe('a stream whose client stops reading (e2e)', () => {
  let server: ScriptedA2aApp;
  let port: number;
  const RESULT = 'r'.repeat(30_000);

  beforeAll(async () => {
    server = await startScriptedA2aApp(manual, { stalledStreamTimeoutMs: STALLED_MS, maxFrameFieldBytes: 64 * 1024 });
    port = Number(new URL(server.base).port);
  });
  afterAll(() => server.close());

  it('is closed after stalledStreamTimeoutMs with its buffer full, counted; the task goes on and the client resumes with Last-Event-ID', async () => {
    const nextRun = server.worker.nextRun();
    const started = await rpc(server.base, 'SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'storm' }] }, configuration: { returnImmediately: true } });
    const taskId = ((await started.json()) as { result: { task: { id: string } } }).result.task.id;
    const run: ScriptedRun = await nextRun;

    // One client per binding reads the headers and the first event, then nothing.
    const rpcBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: taskId } });
    const stalled = [
      open(port, `POST /tasks/${taskId}:subscribe HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Length: 0\r\n\r\n`),
      open(port, `POST /a2a HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\nContent-Length: ${rpcBody.length}\r\n\r\n${rpcBody}`),
    ];
    await eventually(() => stalled.every((c) => c.received().includes('\nid: ')), 10_000, 'the first events');
    for (const connection of stalled) connection.socket.pause();

    // Frames keep coming (far fewer than the task keeps for replay), until the stalled clients are gone.
    let frames = 0;
    const producing = setInterval(() => {
      for (let k = 0; k < 5; k++, frames++) run.completed(`c${frames}`, 'fetch', RESULT);
    }, 20);
    try {
      await eventually(() => server.tasks.metrics().stalledStreamsClosed === 2, STALLED_MS + 15_000, 'the stalled streams to be closed');
    } finally {
      clearInterval(producing);
    }
    expect(server.tasks.metrics()).toMatchObject({ stalledStreamsClosed: 2, liveTasks: 1 });
    // Reading again, each client finds its connection reset.
    for (const connection of stalled) connection.socket.resume();
    await Promise.all(stalled.map((c, i) => closedWithin(c, 10_000, `stalled client ${i}`)));
    expect(server.worker.cancels).toEqual([]);

    // The client comes back from the last event it parsed and gets the rest, to the end.
    const lastSeen = Math.max(...[...stalled[0].received().matchAll(/\nid: (\d+)\n/g)].map((m) => Number(m[1])));
    const resumed = fetch(`${server.base}/tasks/${taskId}:subscribe`, { method: 'POST', headers: { 'a2a-version': '1.0', 'last-event-id': String(lastSeen) } });
    run.reply('done');
    const ids = (await collect(await resumed)).filter((m) => m.data).map((m) => Number(m.id));
    expect(ids[0]).toBe(lastSeen + 1);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, k) => lastSeen + 1 + k));
    expect(ids[ids.length - 1]).toBe(frames + 3); // the Task, the frames, the answer, COMPLETED
    console.info(`stalled streams: ${frames} frames of 30 kB produced; both stalled clients closed after ${STALLED_MS} ms of a full buffer, the task not cancelled`);
  });

  it('a slow reader that keeps draining its buffer is not cut', async () => {
    const nextRun = server.worker.nextRun();
    const started = await rpc(server.base, 'SendMessage', { message: { messageId: 'm2', role: 'ROLE_USER', parts: [{ text: 'storm' }] }, configuration: { returnImmediately: true } });
    const taskId = ((await started.json()) as { result: { task: { id: string } } }).result.task.id;
    const run = await nextRun;
    const reader = open(port, `POST /tasks/${taskId}:subscribe HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Length: 0\r\n\r\n`);
    await eventually(() => reader.received().includes('\nid: '), 10_000, 'the first event');
    // Reads in short bursts, pausing for a third of the stall time in between.
    const pacing = setInterval(() => {
      reader.socket.resume();
      setTimeout(() => reader.socket.pause(), 20);
    }, STALLED_MS / 3);
    for (let i = 0; i < 400; i++) {
      run.completed(`s${i}`, 'fetch', RESULT);
      if (i % 5 === 4) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    run.reply('done');
    try {
      await eventually(() => reader.received().includes('TASK_STATE_COMPLETED') || reader.socket.destroyed, 120_000, 'the slow reader to get the end');
    } finally {
      clearInterval(pacing);
    }
    expect(reader.socket.destroyed).toBe(false);
    expect(reader.received()).toContain('TASK_STATE_COMPLETED');
    reader.socket.destroy();
    expect(server.tasks.metrics().stalledStreamsClosed).toBe(2);
  });
});
