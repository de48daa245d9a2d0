import { TOOL_CALL_V1_EXTENSION_URI } from '../extensions/tool-call-v1';
import type { A2aEndpoint } from './agent-card';
import { A2aClientError } from './errors';
import {
  drop,
  json,
  jsonRpcError,
  resumeIndex,
  startFakeServer,
  startSse,
  writeEvents,
  type FakeServer,
  type Handler,
} from './fixtures/fake-a2a-server';
import { TASK_ID, demoRun, events03, events10 } from './fixtures/streams';
import { followMessage, followTask, type FollowMessageOptions, type ReconnectInfo } from './follow';
import { initialTimelineState, reduceTimeline, type TimelineInput, type TimelineState } from './timeline.reducer';
import { TimelineStore } from './timeline.store';

const FAST_RETRY = { initialDelayMs: 5, maxDelayMs: 20 };
const EVENTS = events10();

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(handler: Handler, binding: A2aEndpoint['binding'] = 'JSONRPC', protocolVersion: A2aEndpoint['protocolVersion'] = '1.0') {
  server = await startFakeServer(handler);
  const endpoint: A2aEndpoint = { url: `${server.url}/a2a`, binding, protocolVersion };
  return { server, endpoint };
}

async function collect(events: AsyncIterable<TimelineInput>): Promise<TimelineInput[]> {
  const out: TimelineInput[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const reduced = (list: TimelineInput[]): TimelineState => list.reduce(reduceTimeline, initialTimelineState);
const uninterrupted = reduced(EVENTS.map((data, i) => ({ data, eventId: String(i + 1), receivedAt: 0 })));


function options(endpoint: A2aEndpoint, extra: Partial<FollowMessageOptions> = {}): FollowMessageOptions {
  return { endpoint, text: 'weather in Paris and the time in Tokyo', retry: FAST_RETRY, now: () => 0, ...extra };
}

/** A server holding the whole demo log: serves the send, and resumes after Last-Event-ID. */
function replayingServer(drops: number[]): Handler {
  let connection = 0;
  return (req, res) => {
    const method = req.body?.method;
    if (method !== 'SendStreamingMessage' && method !== 'SubscribeToTask') return jsonRpcError(res, req.body?.id, -32601, 'nope');
    const from = resumeIndex(req);
    const dropAt = drops[connection++];
    startSse(res);
    writeEvents(res, EVENTS, { from, to: dropAt, rpcId: req.body.id });
    if (dropAt !== undefined && dropAt < EVENTS.length) drop(res);
    else res.end();
  };
}

describe('followMessage over JSON-RPC 1.0', () => {
  it('sends SendStreamingMessage with the version and extension headers and yields every event with its id', async () => {
    const { server, endpoint } = await serve(replayingServer([]));
    const got = await collect(followMessage(options(endpoint, { headers: { Authorization: 'Bearer t' } })));
    expect(got.map((e) => e.eventId)).toEqual(EVENTS.map((_, i) => String(i + 1)));
    expect(got.map((e) => e.data)).toEqual(EVENTS);
    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/a2a');
    expect(req.headers['a2a-version']).toBe('1.0');
    expect(req.headers['a2a-extensions']).toBe(TOOL_CALL_V1_EXTENSION_URI);
    expect(req.headers['authorization']).toBe('Bearer t');
    expect(req.headers['accept']).toBe('text/event-stream');
    expect(req.body).toMatchObject({
      jsonrpc: '2.0',
      method: 'SendStreamingMessage',
      params: { message: { role: 'ROLE_USER', parts: [{ text: 'weather in Paris and the time in Tokyo' }] } },
    });
    expect(typeof (req.body.params?.message as { messageId?: unknown }).messageId).toBe('string');
  });

  it('resumes after drops with SubscribeToTask + Last-Event-ID: every event exactly once, same timeline', async () => {
    const { server, endpoint } = await serve(replayingServer([4, 9]));
    const reconnects: ReconnectInfo[] = [];
    const got = await collect(followMessage(options(endpoint, { onReconnect: (r) => reconnects.push(r) })));
    expect(got.map((e) => e.eventId)).toEqual(EVENTS.map((_, i) => String(i + 1)));
    expect(server.requests.map((r) => [r.body.method, r.headers['last-event-id'], r.body.params])).toEqual([
      ['SendStreamingMessage', undefined, expect.anything()],
      ['SubscribeToTask', '4', { id: TASK_ID }],
      ['SubscribeToTask', '9', { id: TASK_ID }],
    ]);
    expect(reconnects.map((r) => [r.attempt, r.lastEventId])).toEqual([
      [1, '4'],
      [1, '9'],
    ]);
    expect(reconnects[0].reason).toMatch(/stream (broke|ended)/);
    expect(reduced(got)).toEqual(uninterrupted);
  });

  it('a server that replays too much (no Last-Event-ID support) still gives the same timeline', async () => {
    let connection = 0;
    const { endpoint } = await serve((req, res) => {
      startSse(res);
      writeEvents(res, EVENTS, { to: connection++ === 0 ? 6 : undefined, rpcId: req.body.id });
      if (connection === 1) drop(res);
      else res.end();
    });
    const store = new TimelineStore();
    const final = await store.follow(followMessage(options(endpoint)));
    expect(final).toEqual(uninterrupted);
  });

  it('when the task ended while the client was away (-32004 on resubscribe) it reads the task once', async () => {
    const frames = EVENTS.filter((_, i) => demoRun[i].kind === 'frame') as Array<{ artifactUpdate: { artifact: unknown } }>;
    const { server, endpoint } = await serve((req, res) => {
      if (req.body.method === 'SendStreamingMessage') {
        startSse(res);
        writeEvents(res, EVENTS, { to: 5, rpcId: req.body.id });
        return drop(res);
      }
      if (req.body.method === 'SubscribeToTask') return jsonRpcError(res, req.body.id, -32004, 'task is in a terminal state');
      json(res, 200, {
        jsonrpc: '2.0',
        id: req.body.id,
        result: {
          id: TASK_ID,
          status: { state: 'TASK_STATE_COMPLETED' },
          artifacts: [...frames.map((f) => f.artifactUpdate.artifact), { artifactId: 'answer', parts: [{ text: 'Done.' }] }],
        },
      });
    });
    const final = await new TimelineStore().follow(followMessage(options(endpoint)));
    expect(server.requests.map((r) => r.body.method)).toEqual(['SendStreamingMessage', 'SubscribeToTask', 'GetTask']);
    expect(final.taskState).toBe('completed');
    expect(final.answer).toBe('Done.');
    expect([...final.tools.values()].map((t) => [t.name, t.phase])).toEqual([
      ['weather', 'completed'],
      ['world_clock', 'completed'],
      ['read_doc', 'failed'],
    ]);
  });

  it('retries a 503 before anything was accepted by sending the same message again', async () => {
    let n = 0;
    const { server, endpoint } = await serve((req, res) => {
      if (n++ === 0) return json(res, 503, { error: { code: 503, message: 'warming up' } });
      startSse(res);
      writeEvents(res, EVENTS, { rpcId: req.body.id });
      res.end();
    });
    const got = await collect(followMessage(options(endpoint)));
    expect(got).toHaveLength(EVENTS.length);
    // Nothing was accepted yet, so the message is sent again, with the same messageId.
    expect(server.requests.map((r) => r.body.method)).toEqual(['SendStreamingMessage', 'SendStreamingMessage']);
    const ids = server.requests.map((r) => (r.body.params?.message as { messageId: string }).messageId);
    expect(ids[0]).toBe(ids[1]);
  });

  it('fails at once, with the server message and code, on a JSON-RPC error', async () => {
    const { server, endpoint } = await serve((req, res) => jsonRpcError(res, req.body.id, -32602, 'params.message: must be an object'));
    const error = await collect(followMessage(options(endpoint))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(A2aClientError);
    expect(error).toMatchObject({
      message: 'SendStreamingMessage failed: params.message: must be an object (code -32602)',
      details: { code: -32602 },
    });
    expect(server.requests).toHaveLength(1);
  });

  it('fails clearly on an error event inside the stream and on an event that is not JSON', async () => {
    const { endpoint } = await serve((req, res) => {
      startSse(res);
      res.write(`id: 1\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: req.body.id, error: { code: -32603, message: 'boom' } })}\n\n`);
      res.end();
    });
    await expect(collect(followMessage(options(endpoint)))).rejects.toThrow('SendStreamingMessage failed: boom (code -32603)');
    await server?.close();
    const second = await serve((_req, res) => {
      startSse(res);
      res.end('id: 1\ndata: <html>oops</html>\n\n');
    });
    await expect(collect(followMessage(options(second.endpoint)))).rejects.toThrow(
      'SendStreamingMessage: the server sent an event that is not JSON: "<html>oops</html>"',
    );
  });

  it('gives up after the configured reconnects, saying why', async () => {
    const { server, endpoint } = await serve((_req, res) => res.destroy());
    await expect(collect(followMessage(options(endpoint, { retry: { ...FAST_RETRY, maxAttempts: 2 } })))).rejects.toThrow(
      /^gave up after 2 reconnects: SendStreamingMessage: could not reach .*\/a2a/,
    );
    expect(server.requests).toHaveLength(3);
  });

  it('drops an idle connection and resumes it', async () => {
    let n = 0;
    const { server, endpoint } = await serve((req, res) => {
      startSse(res);
      if (n++ === 0) {
        writeEvents(res, EVENTS, { to: 3, rpcId: req.body.id });
        return; // then silence, connection left open
      }
      writeEvents(res, EVENTS, { from: resumeIndex(req), rpcId: req.body.id });
      res.end();
    });
    const got = await collect(followMessage(options(endpoint, { idleTimeoutMs: 150 })));
    expect(got.map((e) => e.eventId)).toEqual(EVENTS.map((_, i) => String(i + 1)));
    expect(server.requests[1].headers['last-event-id']).toBe('3');
  });

  it('stops when aborted: the promise rejects with the abort reason and the connection is closed', async () => {
    const { server, endpoint } = await serve((req, res) => {
      startSse(res);
      writeEvents(res, EVENTS, { to: 2, rpcId: req.body.id });
    });
    const controller = new AbortController();
    const seen: TimelineInput[] = [];
    const done = (async () => {
      for await (const e of followMessage(options(endpoint, { signal: controller.signal }))) {
        seen.push(e);
        if (seen.length === 2) controller.abort();
      }
    })();
    await expect(done).rejects.toMatchObject({ name: 'AbortError' });
    await new Promise((r) => setTimeout(r, 50));
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].closedByClient).toBe(true);
  });
});

describe('other bindings and versions', () => {
  it('A2A 0.3 JSON-RPC: message/stream, X-A2A-Extensions, no A2A-Version, tasks/resubscribe to resume', async () => {
    const events = events03();
    let n = 0;
    const { server, endpoint } = await serve(
      (req, res) => {
        startSse(res);
        const first = n++ === 0;
        writeEvents(res, events, { from: resumeIndex(req), to: first ? 5 : undefined, rpcId: req.body.id });
        if (first) drop(res);
        else res.end();
      },
      'JSONRPC',
      '0.3',
    );
    const final = await new TimelineStore().follow(followMessage(options(endpoint)));
    const [send, resume] = server.requests;
    expect(send.headers['a2a-version']).toBeUndefined();
    expect(send.headers['x-a2a-extensions']).toBe(TOOL_CALL_V1_EXTENSION_URI);
    expect(send.body).toMatchObject({
      method: 'message/stream',
      params: { message: { kind: 'message', role: 'user', parts: [{ kind: 'text', text: expect.any(String) }] } },
    });
    expect(resume.body).toMatchObject({ method: 'tasks/resubscribe', params: { id: TASK_ID } });
    expect(resume.headers['last-event-id']).toBe('5');
    expect([...final.tools.values()]).toEqual([...uninterrupted.tools.values()]);
    expect(final.taskState).toBe('completed');
  });

  it('HTTP+JSON: POST /message:stream with bare StreamResponses, POST /tasks/{id}:subscribe to resume', async () => {
    let n = 0;
    const { server, endpoint } = await serve((req, res) => {
      startSse(res);
      const first = n++ === 0;
      writeEvents(res, EVENTS, { from: resumeIndex(req), to: first ? 6 : undefined, bare: true });
      if (first) drop(res);
      else res.end();
    }, 'HTTP+JSON');
    const final = await new TimelineStore().follow(followMessage(options(endpoint)));
    expect(server.requests.map((r) => [r.method, r.path, r.headers['last-event-id']])).toEqual([
      ['POST', '/a2a/message:stream', undefined],
      ['POST', `/a2a/tasks/${TASK_ID}:subscribe`, '6'],
    ]);
    expect(server.requests[0].body).toMatchObject({ message: { role: 'ROLE_USER' } });
    expect(final).toEqual(uninterrupted);
  });

  it('HTTP+JSON errors (google.rpc.Status) are reported with the HTTP status', async () => {
    const { endpoint } = await serve(
      (_req, res) => json(res, 400, { error: { code: 400, status: 'INVALID_ARGUMENT', message: 'message.parts is empty' } }),
      'HTTP+JSON',
    );
    await expect(collect(followMessage(options(endpoint)))).rejects.toMatchObject({
      message: 'SendStreamingMessage failed: message.parts is empty (code 400)',
      details: { status: 400, retryable: false },
    });
  });

  it('followTask subscribes to an existing task after a given event id', async () => {
    const { server, endpoint } = await serve(replayingServer([]));
    const got = await collect(followTask({ endpoint, taskId: TASK_ID, lastEventId: '10', retry: FAST_RETRY }));
    expect(got.map((e) => e.eventId)).toEqual(['11', '12', '13']);
    expect(server.requests[0].body).toMatchObject({ method: 'SubscribeToTask', params: { id: TASK_ID } });
  });
});
