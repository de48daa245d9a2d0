import { gzipSync } from 'node:zlib';
import { parseToolCall } from '../src/extensions';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import { manual } from './support/scripts';
import { collect, dataOf, rpc, wireMessage } from './support/sse';

interface WireError {
  code: number;
  message: string;
  status?: string;
  data?: { '@type': string; fieldViolations?: { field: string; description: string }[] }[];
  details?: unknown[];
}

/** A JSON-RPC error response: the expected HTTP status, a JSON-RPC envelope, no stack. */
async function rpcError(response: Response, status = 200): Promise<WireError> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as { jsonrpc: string; error: WireError };
  expect(body.jsonrpc).toBe('2.0');
  return body.error;
}

/** An HTTP+JSON error response: the status, a google.rpc.Status body whose code is that status. */
async function restError(response: Response, status: number): Promise<WireError> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toContain('application/a2a+json');
  const { error } = (await response.json()) as { error: WireError };
  expect(error.code).toBe(status);
  return error;
}

const send = (base: string, path: string, body: BodyInit, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers }, duplex: 'half' } as RequestInit);

const rpcBody = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 'l1', method, params });

/** A body sent in chunks without Content-Length, so only the parser's count can stop it. */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, (at += 1000)));
    },
  });
}

describe('limits (e2e): each a clear error with the A2A/JSON-RPC code, naming the limit', () => {
  let t: ScriptedA2aApp;

  beforeAll(async () => {
    t = await startScriptedA2aApp(
      manual,
      { maxBodyBytes: 4096, maxPartsPerMessage: 4, maxTextLength: 200, maxHistoryLength: 2, maxFrameFieldBytes: 512 },
      // As the demo app runs: A2aModule reads the bodies itself.
      { bodyParser: false },
    );
  });
  afterAll(async () => {
    await t.close();
  });

  describe('request body size (maxBodyBytes)', () => {
    const big = rpcBody('SendMessage', { message: wireMessage('x'.repeat(5000)) });

    it('JSON-RPC: HTTP 413 with error -32600 naming the limit, declared length or not', async () => {
      for (const body of [big, chunked(big)]) {
        const error = await rpcError(await send(t.base, '/a2a', body), 413);
        expect(error).toMatchObject({ code: -32600, message: 'The request body exceeds the limit of 4096 bytes (maxBodyBytes)' });
        expect(error.data?.[0]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'body' }] });
      }
    });

    it('HTTP+JSON: 413 with a google.rpc.Status body naming the limit, for both content types', async () => {
      for (const type of ['application/json', 'application/a2a+json']) {
        const body = JSON.stringify({ message: wireMessage('x'.repeat(5000)) });
        expect((await restError(await send(t.base, '/message:send', chunked(body), { 'content-type': type }), 413)).message).toContain('4096 bytes (maxBodyBytes)');
      }
    });

    it('counts a compressed body after inflation: gzip within the limit works, a gzip bomb is 413, broken gzip is 400', async () => {
      const small = gzipSync(rpcBody('GetTask', { id: 'nope' }));
      expect((await rpcError(await send(t.base, '/a2a', small, { 'content-encoding': 'gzip' }))).code).toBe(-32001);
      const bomb = gzipSync(' '.repeat(1_000_000) + rpcBody('GetTask', { id: 'x' }));
      expect(bomb.length).toBeLessThan(4096);
      expect((await rpcError(await send(t.base, '/a2a', bomb, { 'content-encoding': 'gzip' }), 413)).code).toBe(-32600);
      const broken = await rpcError(await send(t.base, '/a2a', 'not gzip', { 'content-encoding': 'gzip' }), 400);
      expect(broken).toMatchObject({ code: -32600, message: expect.stringMatching(/^The request body could not be read: /) });
      expect((await restError(await send(t.base, '/message:send', 'x', { 'content-encoding': 'zz' }), 415)).message).toContain('zz');
      expect((await rpcError(await send(t.base, '/a2a', '{}', { 'content-type': 'application/json; charset=latin1' }), 415)).code).toBe(-32600);
    });
  });

  it('nesting depth (maxJsonDepth, default 64): deeper bodies are refused before anything walks them', async () => {
    const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
    for (const levels of [65, 600]) {
      const body = `{"jsonrpc":"2.0","id":"deep","method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":${deep(levels)}}]}}}`;
      const error = await rpcError(await send(t.base, '/a2a', body), 400);
      expect(error).toMatchObject({ code: -32600, message: 'The request body nests arrays and objects deeper than 64 levels (maxJsonDepth)' });
      const rest = await restError(await send(t.base, '/message:send', `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":${deep(levels)}}}`), 400);
      expect(rest.message).toContain('(maxJsonDepth)');
    }
    const fine = `{"jsonrpc":"2.0","id":"ok","method":"GetTask","params":{"id":"x","metadata":${deep(60)}}}`;
    expect((await rpcError(await send(t.base, '/a2a', fine))).code).toBe(-32001);
  });

  it('a task path that is not valid percent-encoding: 400 naming the field, in the binding\'s shape', async () => {
    for (const [method, path] of [
      ['GET', '/tasks/%E0%A4%A'],
      ['POST', '/tasks/%ZZ:cancel'],
      ['POST', '/tasks/%:subscribe'],
    ]) {
      const error = await restError(await fetch(`${t.base}${path}`, { method, headers: { 'a2a-version': '1.0' } }), 400);
      expect(error).toMatchObject({ status: 'INVALID_ARGUMENT', message: expect.stringMatching(/^Invalid parameters: id: is not valid percent-encoding/) });
    }
  });

  it('parts per message (maxPartsPerMessage): -32602 / 400 naming the limit, on every binding and version', async () => {
    const parts = Array.from({ length: 5 }, (_, i) => ({ text: `p${i}` }));
    const v1 = await rpcError(await rpc(t.base, 'SendMessage', { message: wireMessage('x', { parts }) }));
    expect(v1).toMatchObject({ code: -32602, message: 'Invalid parameters: message.parts: has 5 parts; the limit is 4 (maxPartsPerMessage)' });
    const legacy = { message: { kind: 'message', messageId: 'm', role: 'user', parts: parts.map((p) => ({ kind: 'text', ...p })) } };
    expect((await rpcError(await rpc(t.base, 'message/send', legacy, { version: '0.3' }))).message).toContain('maxPartsPerMessage');
    const rest = await restError(await send(t.base, '/message:stream', JSON.stringify({ message: wireMessage('x', { parts }) })), 400);
    expect(rest).toMatchObject({ status: 'INVALID_ARGUMENT', message: expect.stringContaining('the limit is 4 (maxPartsPerMessage)') });
  });

  it('text length (maxTextLength): the text the agent reads, data parts included', async () => {
    const long = await rpcError(await rpc(t.base, 'SendMessage', { message: wireMessage('y'.repeat(201)) }));
    expect(long).toMatchObject({ code: -32602, message: 'Invalid parameters: message.parts: carry 201 characters of text; the limit is 200 (maxTextLength)' });
    const data = await rpcError(await rpc(t.base, 'SendMessage', { message: wireMessage('hi', { parts: [{ text: 'hi' }, { data: { blob: 'z'.repeat(200) } }] }) }));
    expect(data.message).toContain('maxTextLength');
  });

  it('messages per conversation (maxHistoryLength): the next one asks for a new conversation', async () => {
    let contextId = '';
    for (let i = 0; i < 2; i++) {
      const nextRun = t.worker.nextRun();
      const response = await rpc(t.base, 'SendMessage', { message: wireMessage(`turn ${i}`, contextId ? { contextId } : {}), configuration: { returnImmediately: true } });
      contextId = ((await response.json()) as { result: { task: { contextId: string } } }).result.task.contextId;
      (await nextRun).reply(`answer ${i}`);
    }
    const third = await rpcError(await rpc(t.base, 'SendMessage', { message: wireMessage('turn 2', { contextId }) }));
    expect(third).toMatchObject({ code: -32602, message: expect.stringContaining(`conversation ${contextId} already holds 2 messages, the limit (maxHistoryLength)`) });
    expect(third.data?.[0].fieldViolations?.[0].field).toBe('message.contextId');
  });

  it('frame fields and narration from the bus (maxFrameFieldBytes): capped, redacted, JSON-safe, still valid frames', async () => {
    const nextRun = t.worker.nextRun();
    const stream = rpc(t.base, 'SendStreamingMessage', { message: wireMessage('go') });
    const run = await nextRun;
    const cyclic: Record<string, unknown> = { big: 12345678901234567890n };
    cyclic.self = cyclic;
    run.progress('n'.repeat(10_000));
    run.started('c1', 'fetch', { page: 'p'.repeat(10_000), apiKey: 'sk-should-not-leak' });
    run.completed('c1', 'fetch', cyclic);
    run.started('c2', 'x'.repeat(2_000));
    run.failed('c2', 'x'.repeat(2_000), 'e'.repeat(10_000));
    run.reply('done');
    const events = (await collect(await stream)).map((m) => dataOf(m).result as Record<string, { artifact?: { parts: unknown[] } }>);
    const frames = events.flatMap((e) => (e.artifactUpdate?.artifact ? [parseToolCall(e.artifactUpdate.artifact.parts)] : [])).filter((f) => f !== undefined);
    expect(frames.map((f) => f.phase)).toEqual(['started', 'completed', 'started', 'failed']);
    for (const frame of frames) {
      const fields = frame.phase === 'started' ? frame.args : frame.phase === 'completed' ? frame.result : frame.error;
      expect(Buffer.byteLength(JSON.stringify(fields ?? null))).toBeLessThanOrEqual(512);
      expect(Buffer.byteLength(JSON.stringify(frame.name))).toBeLessThanOrEqual(512);
    }
    expect(frames[0]).toMatchObject({ args: { apiKey: '[redacted]', page: expect.stringContaining('…[truncated: 10000 bytes]') } });
    expect(frames[1]).toMatchObject({ result: { big: '12345678901234567890', self: '[circular]' } });
    expect(JSON.stringify(events)).not.toContain('sk-should-not-leak');
    const narration = JSON.stringify(events[1]);
    expect(narration).toContain('…[truncated: 10000 bytes]');
    expect(narration.length).toBeLessThan(2_000);
  });
});

describe("limits (e2e) behind the application's own JSON parser", () => {
  it("answers its 413 in the binding's shape, naming that parser's limit", async () => {
    const t = await startScriptedA2aApp(manual);
    try {
      const body = rpcBody('SendMessage', { message: wireMessage('x'.repeat(150_000)) });
      const error = await rpcError(await send(t.base, '/a2a', chunked(body)), 413);
      expect(error.message).toBe("The request body exceeds the limit of 102400 bytes (the application's JSON parser limit)");
      const rest = await restError(await send(t.base, '/message:send', chunked(JSON.stringify({ message: wireMessage('x'.repeat(150_000)) }))), 413);
      expect(rest.message).toContain('102400 bytes');
      // A declared length past maxBodyBytes is refused even though that parser read the body.
      const capped = await startScriptedA2aApp(manual, { maxBodyBytes: 1000 });
      try {
        expect((await rpcError(await send(capped.base, '/a2a', rpcBody('GetTask', { id: 'y'.repeat(2000) })), 413)).message).toContain('1000 bytes (maxBodyBytes)');
      } finally {
        await capped.close();
      }
    } finally {
      await t.close();
    }
  });
});
