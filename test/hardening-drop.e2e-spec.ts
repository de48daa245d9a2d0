/**
 * Clients that vanish: 10,000 streams opened on loopback and dropped mid-stream (destroyed, or
 * reset), in batches, against runs that keep going; afterwards every listener, run, stream,
 * subscription, timer and socket is back to its baseline and the heap has not grown. Once more
 * with authentication on (1,000 streams, every request with its API key). And a
 * client that stops reading is cut off after a bounded server-side buffer, without slowing the
 * clients that read.
 */
import { connect, type Socket } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { A2aModule, AgentBus, AgentRuntimeService, ExecutorModule, RuntimeModule, TaskService } from '../src';
import { A2aAuthService } from '../src/a2a/auth/a2a-auth.service';
import { OfflineChatModel, readCurrentTurn } from '../src/executor/models/offline-chat-model';
import { sleep } from '../src/executor/abortable';
import { ScriptedBusModule } from './support/a2a-test-app';
import { ScriptedWorker, type ScriptedRun } from './support/scripted-worker';
import { manual } from './support/scripts';
import { eventually, readSse, streamRetryingOn503 } from './support/sse';
import { STORE_MODES, useStoreMode } from './support/store-modes';

const AUTH_KEY = 'drop-key-5e4d3c2b1a09f8e7';
const BATCH = 250;
/** One dropped stream in this many starts its own run (SendStreamingMessage), cancelled by the drop. */
const STARTS_A_RUN_EVERY = 20;
const LONG_TASKS = 4;

/**
 * "tick T x K": T model turns, each calling K tools that end one after another (every TICK_MS),
 * so a run keeps sending frames for a while; then an answer. (Each turn is a few graph steps,
 * well within LangGraph's recursion limit.)
 */
const TICK_MS = 250;

class TickerModel extends OfflineChatModel {
  _llmType(): string {
    return 'ticker-test';
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const turn = readCurrentTurn(messages);
    const [, turns, perTurn] = (/tick (\d+) x (\d+)/.exec(turn.request) ?? ['', '1', '1']).map(Number);
    if (turn.modelTurns >= turns) return this.result(new AIMessage(`ticked ${turns} turns`));
    const calls = Array.from({ length: perTurn }, (_, k) => ({ id: `t${turn.modelTurns}_${k}`, name: 'tick', args: { ms: (k + 1) * TICK_MS } }));
    return this.result(new AIMessage({ content: '', tool_calls: calls }));
  }
}

const tick = tool(
  async ({ ms }: { ms: number }, config) => {
    await sleep(ms, config?.signal);
    return { ms };
  },
  { name: 'tick', description: 'waits, then answers', schema: z.object({ ms: z.number() }) },
);

const gc = (): void => {
  v8.setFlagsFromString('--expose-gc');
  const collect = vm.runInNewContext('gc') as () => void;
  for (let i = 0; i < 4; i++) collect();
};

function countByType(resources: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of resources) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

/**
 * Opens a stream over a raw socket and resolves once its first event has arrived (mid-stream),
 * with the socket still open.
 */
function openStream(port: number, path: string, body: unknown, lastEventId?: number, credentials = ''): Promise<Socket> {
  const payload = JSON.stringify(body);
  const resume = lastEventId === undefined ? '' : `Last-Event-ID: ${lastEventId}\r\n`;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let seen = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no event on ${path} within 30 s`));
    }, 30_000);
    socket.setEncoding('utf8');
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('data', (chunk: string) => {
      seen += chunk;
      const headerEnd = seen.indexOf('\r\n\r\n');
      if (headerEnd >= 0 && !/content-type: text\/event-stream/i.test(seen.slice(0, headerEnd))) {
        clearTimeout(timer);
        socket.destroy();
        reject(new Error(`${path} answered without a stream: ${seen.slice(0, 500)}`));
        return;
      }
      if (!seen.includes('\ndata: ')) return;
      clearTimeout(timer);
      socket.removeAllListeners('data');
      socket.on('error', () => undefined);
      resolve(socket);
    });
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n${credentials}${resume}Content-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
    );
  });
}

/** Redis mode at reduced scale, the same contract (each drop there also subscribes and unsubscribes in Redis; keeps CI time small). */
const REDIS_DROPPED_STREAMS = 1_000;

describe.each([
  { mode: 'memory' as const, auth: 'off', DROPPED_STREAMS: 10_000 },
  // Reduced scale: the same paths with the credential check in front of each (keeps CI time small).
  { mode: 'memory' as const, auth: 'on', DROPPED_STREAMS: 1_000 },
  { mode: 'redis' as const, auth: 'off', DROPPED_STREAMS: REDIS_DROPPED_STREAMS },
])('dropped clients (e2e, $mode store, authentication $auth)', ({ mode, auth, DROPPED_STREAMS }) => {
  const store = useStoreMode(mode);
  let app: INestApplication;
  let base: string;
  let port: number;
  /** The caller the key names (tasks are looked up as their owner sees them). */
  let caller: string | undefined;
  const keyed = auth === 'on';
  const credentials = keyed ? `X-API-Key: ${AUTH_KEY}\r\n` : '';
  const keyHeader: Record<string, string> = keyed ? { 'x-api-key': AUTH_KEY } : {};

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RuntimeModule.forRoot({ executor: ExecutorModule.forRoot({ model: new TickerModel({}), tools: [tick] }) }),
        // Finished tasks expire at once, so what stays in memory is only what leaked.
        A2aModule.forRoot({ taskTtlMs: 50, disconnectGraceMs: 0, keepAliveMs: 1_000, auth: keyed ? { apiKeys: [AUTH_KEY] } : false, ...store.options() }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'], bodyParser: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
    port = Number(new URL(base).port);
    caller = app.get(A2aAuthService).authenticate(keyHeader);
  });
  afterAll(async () => {
    await app.close();
  });
  afterAll(() => store.stop());

  const rpc = (method: string, params: unknown) => ({ jsonrpc: '2.0', id: 1, method, params });
  const message = (text: string) => ({ messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] });

  async function dropBatch(longTasks: string[], offset: number, size: number): Promise<void> {
    const sockets = await Promise.all(
      Array.from({ length: size }, async (_, k) => {
        const n = offset + k;
        const task = longTasks[n % longTasks.length];
        if (n % STARTS_A_RUN_EVERY === 0) return openStream(port, '/a2a', rpc('SendStreamingMessage', { message: message('tick 1 x 2') }), undefined, credentials);
        // Most resume just behind the live edge (Last-Event-ID), one in four from a Task snapshot.
        const lastSeq = (await app.get(TaskService).find(task, caller))!.lastSeq;
        const resume = n % 4 === 1 ? undefined : Math.max(0, lastSeq - 1);
        return n % 2 === 0
          ? openStream(port, '/a2a', rpc('SubscribeToTask', { id: task }), resume, credentials)
          : openStream(port, `/tasks/${task}:subscribe`, {}, resume, credentials);
      }),
    );
    // Half leave with a FIN, half with a TCP reset.
    sockets.forEach((socket, k) => (k % 2 === 0 ? socket.destroy() : socket.resetAndDestroy()));
  }

  function snapshot() {
    const tasks = app.get(TaskService).metrics();
    return {
      busListeners: app.get(AgentBus).listenerCount(),
      activeRuns: app.get(AgentRuntimeService).activeRuns(),
      tasks: tasks.tasks,
      liveTasks: tasks.liveTasks,
      topicSubscriptions: tasks.topicSubscriptions,
      openStreams: tasks.openStreams,
    };
  }

  it(`${DROPPED_STREAMS} streams dropped mid-stream against running tasks: everything back to baseline, heap not grown`, async () => {
    // Warm up (lazy modules, JIT, pools), then take the baseline.
    const warm = await startLongTasks(1);
    await dropBatch(warm, 0, BATCH);
    await cancelAll(warm);
    await settle();
    const baseline = snapshot();
    const resources = countByType(process.getActiveResourcesInfo());
    gc();
    const heapBefore = process.memoryUsage().heapUsed;

    const longTasks = await startLongTasks(LONG_TASKS);
    for (let offset = 0; offset < DROPPED_STREAMS; offset += BATCH) await dropBatch(longTasks, offset, BATCH);
    // The runs kept going all along: each long task has ticked since.
    const ticked = await Promise.all(longTasks.map(async (id) => (await app.get(TaskService).find(id, caller))!.lastSeq));
    expect(Math.min(...ticked)).toBeGreaterThan(10);
    expect(app.get(AgentRuntimeService).activeRuns()).toBeGreaterThanOrEqual(LONG_TASKS);
    await cancelAll(longTasks);
    await settle();

    expect(snapshot()).toEqual(baseline);
    await eventually(() => {
      const now = countByType(process.getActiveResourcesInfo());
      return Object.keys({ ...now, ...resources }).every((type) => (now[type] ?? 0) <= (resources[type] ?? 0));
    }, 10_000, `active handles back to ${JSON.stringify(resources)}`);
    gc();
    const grown = process.memoryUsage().heapUsed - heapBefore;
    // A leak of a few hundred bytes per stream would be megabytes here.
    expect(grown).toBeLessThan(8 * 1024 * 1024);
    // eslint-disable-next-line no-console
    console.info(`dropped ${DROPPED_STREAMS} streams (authentication ${auth}); heap after GC ${(grown / 1024 / 1024).toFixed(1)} MB from the baseline`);
  }, 180_000);

  async function startLongTasks(count: number): Promise<string[]> {
    return Promise.all(
      Array.from({ length: count }, async () => {
        const response = await fetch(`${base}/a2a`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...keyHeader },
          // Long enough (~200 s) to outlast the drops on a loaded machine; cancelled once they are done.
          body: JSON.stringify(rpc('SendMessage', { message: message('tick 40 x 20'), configuration: { returnImmediately: true } })),
        });
        return ((await response.json()) as { result: { task: { id: string } } }).result.task.id;
      }),
    );
  }

  async function cancelAll(ids: string[]): Promise<void> {
    await Promise.all(
      ids.map((id) =>
        fetch(`${base}/tasks/${id}:cancel`, { method: 'POST', headers: { 'a2a-version': '1.0', ...keyHeader } }).then((r) => r.text()),
      ),
    );
  }

  async function settle(): Promise<void> {
    await eventually(() => {
      const s = snapshot();
      return s.activeRuns === 0 && s.liveTasks === 0 && s.openStreams === 0 && s.tasks === 0;
    }, 15_000, 'runs, tasks and streams to end');
  }
});

describe.each(STORE_MODES)('a client that stops reading (e2e, %s store)', (mode) => {
  const store = useStoreMode(mode);
  // Redis mode at reduced scale (every frame also goes through Redis; keeps CI time small): still far more than a stalled socket buffers.
  const FRAMES = mode === 'memory' ? 1_500 : 500;
  const RESULT = 'r'.repeat(30_000);
  const MAX_EVENTS = 200;
  let app: INestApplication;
  let base: string;
  let worker: ScriptedWorker;
  /**
   * Per client (header x-client): the most a response held in its buffer, how often write() said
   * "wait" and when it first did, when each write came, when it closed.
   */
  const responses = new Map<string, { maxBuffered: number; refused: number; largestWrite: number; firstRefusedAt?: number; writtenAt: number[]; closedAt?: number }>();

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ScriptedBusModule, A2aModule.forRoot({ maxEventsPerTask: MAX_EVENTS, maxFrameFieldBytes: 64 * 1024, ...store.options() })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'], forceCloseConnections: true });
    app.use((req: { headers: Record<string, unknown> }, res: NodeJS.WritableStream & { writableLength: number; write: (...args: unknown[]) => boolean }, next: () => void) => {
      const client = req.headers['x-client'];
      if (typeof client === 'string') {
        const seen = { maxBuffered: 0, refused: 0, largestWrite: 0, firstRefusedAt: undefined as number | undefined, writtenAt: [] as number[], closedAt: undefined as number | undefined };
        responses.set(client, seen);
        const write = res.write.bind(res) as (...args: unknown[]) => boolean;
        res.write = (...args: unknown[]) => {
          const ok = write(...args);
          seen.largestWrite = Math.max(seen.largestWrite, Buffer.byteLength(args[0] as string));
          seen.maxBuffered = Math.max(seen.maxBuffered, res.writableLength);
          seen.writtenAt.push(Date.now());
          if (!ok) {
            seen.refused += 1;
            seen.firstRefusedAt ??= Date.now();
          }
          return ok;
        };
        res.on('close', () => (seen.closedAt = Date.now()));
      }
      next();
    });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
    worker = new ScriptedWorker(app.get(AgentBus), manual).start();
  });
  afterAll(async () => {
    worker.stop();
    await app.close();
  });
  afterAll(() => store.stop());

  async function startTask(): Promise<ScriptedRun> {
    const nextRun = worker.nextRun();
    await fetch(`${base}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'storm' }] }, configuration: { returnImmediately: true } } }),
    }).then((r) => r.text());
    return nextRun;
  }

  /** A stream of the task for `client` (a 503 is tried again: see streamRetryingOn503). */
  const subscribe = (id: string, client: string): Promise<Response> =>
    streamRetryingOn503(() => fetch(`${base}/tasks/${id}:subscribe`, { method: 'POST', headers: { 'a2a-version': '1.0', 'x-client': client } }), client);

  /**
   * Fast readers of one storm: how long until each had every event, and the event ids each saw.
   * The writing waits while a reader is more than half the cap behind: on a loaded machine these
   * readers (in this process) can read slower than the loop writes, and the server rightly cuts
   * a reader twice the cap behind, or in Redis mode goes on from a snapshot (seen at load 5-15:
   * "terminated" with ECONNRESET, and ids 41, 381-670, 970-1003). The stalled clients fall behind
   * all the same; a server that held the readers back for them fails the wait.
   */
  async function storm(run: ScriptedRun, readers: Promise<Response>[]): Promise<{ ms: number; ids: number[][] }> {
    const began = Date.now();
    const ids: number[][] = readers.map(() => []);
    let broke: unknown;
    const done = readers.map(async (response, r) => {
      try {
        for await (const message of readSse(await response)) if (message.data !== undefined) ids[r].push(Number(message.id));
      } catch (err) {
        broke ??= err;
        throw err;
      }
    });
    // Awaited at the end; until then a broken reader fails the wait below.
    for (const reading of done) reading.catch(() => undefined);
    const newestOf = (seen: number[]): number => seen[seen.length - 1] ?? 0;
    for (let i = 0; i < FRAMES; i++) {
      run.started(`c${i}`, 'fetch', { i });
      run.completed(`c${i}`, 'fetch', RESULT);
      // About 30 MB/s: what readers on loopback take, far more than a stalled socket buffers.
      if (i % 10 === 9) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        // The Task is event 1, then two per tool.
        const written = 1 + 2 * (i + 1);
        await eventually(
          () => {
            if (broke !== undefined) throw new Error(`a reader's stream broke at event ${ids.map(newestOf).join(' / ')} of ${written}: ${String(broke)}`);
            return ids.every((seen) => newestOf(seen) >= written - MAX_EVENTS / 2);
          },
          10_000,
          () => `the readers to keep up (event ${written} written, they have up to ${ids.map(newestOf).join(' / ')})`,
        );
      }
    }
    run.reply('done');
    await Promise.all(done);
    return { ms: Date.now() - began, ids };
  }

  it('is cut off after a bounded buffer (write() said wait; the task is not cancelled), and the readers get every event, not held back by it', async () => {
    const quiet = await startTask();
    const alone = await storm(quiet, [subscribe(quiet.id, 'alone-1'), subscribe(quiet.id, 'alone-2')]);

    const run = await startTask();
    // One stalled client per binding: each reads the response headers and first event, then nothing.
    const port = Number(new URL(base).port);
    const rpcBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: run.id } });
    const stalled = await Promise.all(
      [
        `POST /tasks/${run.id}:subscribe HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nX-Client: stalled-rest\r\nContent-Length: 0\r\n\r\n`,
        `POST /a2a HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nX-Client: stalled-rpc\r\nContent-Type: application/json\r\nContent-Length: ${rpcBody.length}\r\n\r\n${rpcBody}`,
      ].map(
        (request) =>
          new Promise<Socket>((resolve) => {
            const socket = connect(port, '127.0.0.1');
            socket.once('data', () => {
              socket.pause();
              resolve(socket);
            });
            socket.write(request);
          }),
      ),
    );
    const withStalled = await storm(run, [subscribe(run.id, 'reader-1'), subscribe(run.id, 'reader-2')]);

    // Every reader got every event, in order, the terminal one last.
    for (const ids of [...alone.ids, ...withStalled.ids]) {
      expect(ids.slice(1)).toEqual(Array.from({ length: ids.length - 1 }, (_, k) => ids[0] + 1 + k));
      expect(ids[ids.length - 1]).toBe(2 * FRAMES + 3); // the Task, the frames, the answer, COMPLETED
    }
    for (const client of ['stalled-rest', 'stalled-rpc']) {
      const slow = responses.get(client)!;
      await eventually(() => slow.closedAt !== undefined, 10_000, `the server to drop ${client}`);
      expect(slow.refused).toBeGreaterThan(0);
      // Bounded: the high-water mark plus the event that crossed it, whatever the task produced.
      expect(slow.maxBuffered).toBeLessThanOrEqual(16 * 1024 + slow.largestWrite);
      expect(slow.maxBuffered).toBeLessThan(100 * 1024);
    }
    // Not held back by the stalled clients: while both sat on a full buffer and were not yet
    // dropped, the readers were still being written to (a server pacing every follower to the
    // slowest would write them nothing until the drop). Order of events, not a time limit.
    const stalledFull = Math.max(...['stalled-rest', 'stalled-rpc'].map((c) => responses.get(c)!.firstRefusedAt!));
    const stalledDropped = Math.min(...['stalled-rest', 'stalled-rpc'].map((c) => responses.get(c)!.closedAt!));
    for (const reader of ['reader-1', 'reader-2']) {
      expect(responses.get(reader)!.writtenAt.filter((at) => at > stalledFull && at < stalledDropped).length).toBeGreaterThan(0);
    }
    expect(worker.cancels).toEqual([]);
    expect(app.get(TaskService).metrics().openStreams).toBe(0);
    stalled.forEach((socket) => socket.destroy());
    const buffered = ['stalled-rest', 'stalled-rpc'].map((c) => `${(responses.get(c)!.maxBuffered / 1024).toFixed(0)} KiB`).join(' / ');
    // eslint-disable-next-line no-console
    console.info(`stalled clients (HTTP+JSON / JSON-RPC): cut off with ${buffered} buffered; readers ${withStalled.ms} ms vs ${alone.ms} ms alone`);
    // Two storms of 30 MB (90 MB in memory mode) through this process: past Jest's 60 s at load 13.
  }, 180_000);
});
