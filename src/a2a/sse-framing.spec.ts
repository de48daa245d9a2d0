import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import type { MessageEvent } from '@nestjs/common';
// Nest's own SSE writer, to prove the JSON-RPC stream frames events byte for byte as @Sse does.
import { SseStream as NestSseStream } from '@nestjs/core/router/sse-stream';
import { Role, TaskState } from '@a2a-js/sdk';
import { Subject, lastValueFrom, of, throwError, toArray } from 'rxjs';
import { formatSse, jsonRpcResult, toSseStream, KEEP_ALIVE, ResponseWriter, TaskSseStream, type StreamFraming } from './sse-framing';
import { TaskEvent, ToolFrameEvent } from './task-event';
import { TaskEventStream, type TaskEventSink } from './task-stream';

/** A response that takes writes one at a time (each done a turn later) past a small high-water mark. */
function fakeResponse(highWaterMark = 1 << 20): { response: ServerResponse; text: () => string; ended: () => boolean } {
  const chunks: string[] = [];
  const response = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      chunks.push(chunk);
      setImmediate(callback);
    },
  });
  return { response: response as unknown as ServerResponse, text: () => chunks.join(''), ended: () => response.writableEnded };
}

/** A stream of given events, then its end (or an error); `stopped` says whether it was stopped. */
function eventsThen(events: TaskEvent[], end?: unknown): { stream: TaskEventStream; stopped: () => boolean } {
  let stopped = false;
  const stream = new TaskEventStream((sink: TaskEventSink) => {
    for (const event of events) sink.next(event);
    if (end === undefined) sink.complete();
    else if (end !== 'open') sink.error(end);
    return () => (stopped = true);
  });
  return { stream, stopped: () => stopped };
}

function nestWrites(messages: MessageEvent[]): Promise<string> {
  const sse = new NestSseStream();
  const sink = new PassThrough();
  let out = '';
  sink.on('data', (chunk: Buffer) => (out += chunk.toString()));
  sse.pipe(sink);
  sse.commitHeaders();
  for (const m of messages) sse.write(m);
  sse.end();
  return new Promise((resolve) => sink.on('end', () => resolve(out)));
}

const statusEvent = (seq: number) =>
  new TaskEvent(seq, {
    payload: {
      $case: 'statusUpdate',
      value: {
        taskId: 't',
        contextId: 'c',
        status: {
          state: TaskState.TASK_STATE_WORKING,
          message: {
            messageId: 'm',
            contextId: 'c',
            taskId: 't',
            role: Role.ROLE_AGENT,
            parts: [{ content: { $case: 'text', value: 'line one\nline two' }, metadata: undefined, filename: '', mediaType: '' }],
            metadata: undefined,
            extensions: [],
            referenceTaskIds: [],
          },
          timestamp: undefined,
        },
        metadata: undefined,
      },
    },
  });

describe('SSE framing', () => {
  it('writes messages exactly as Nest @Sse does (after its leading blank line)', async () => {
    const messages: MessageEvent[] = [{ id: '1', data: '{"a":"x\\ny"}' }, KEEP_ALIVE, { id: '2', data: '{}' }];
    expect(await nestWrites(messages)).toBe('\n' + messages.map(formatSse).join(''));
  });

  it('frames an event as a JSON-RPC response for JSON-RPC and bare for HTTP+JSON, with the sequence number as id', async () => {
    const event = statusEvent(7);
    const [rpc] = await lastValueFrom(of(event).pipe(toSseStream('1.0', { binding: 'jsonrpc', requestId: 'req-1' }, 60_000), toArray()));
    const [rest] = await lastValueFrom(of(event).pipe(toSseStream('1.0', { binding: 'rest' }, 60_000), toArray()));
    expect(rpc).toEqual({ id: '7', data: jsonRpcResult('req-1', event.json) });
    expect(JSON.parse(rpc.data as string)).toEqual({ jsonrpc: '2.0', id: 'req-1', result: JSON.parse(event.json) });
    expect(rest).toEqual({ id: '7', data: event.json });
    // one data line: a newline inside a narration line is escaped by JSON
    expect(formatSse(rest).split('\n').filter((l) => l.startsWith('data:'))).toHaveLength(1);
  });

  it('frames 0.3 events in the 0.3 shape', async () => {
    const [message] = await lastValueFrom(of(statusEvent(2)).pipe(toSseStream('0.3', { binding: 'jsonrpc', requestId: 3 }, 60_000), toArray()));
    expect(JSON.parse(message.data as string).result).toMatchObject({ kind: 'status-update', final: false, status: { state: 'working' } });
  });

  it('adds a keep-alive comment at each interval while the source is open, and stops after', () => {
    jest.useFakeTimers();
    try {
      const source = new Subject<TaskEvent>();
      const seen: MessageEvent[] = [];
      const sub = source.pipe(toSseStream('1.0', { binding: 'rest' }, 1000)).subscribe((m) => seen.push(m));
      jest.advanceTimersByTime(2500);
      source.next(statusEvent(1));
      source.complete();
      jest.advanceTimersByTime(5000);
      expect(seen).toEqual([KEEP_ALIVE, KEEP_ALIVE, { id: '1', data: statusEvent(1).json }]);
      expect(sub.closed).toBe(true);
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('ends the stream quietly on the errors it is told to, and fails it on the others', async () => {
    const quiet = (err: unknown): boolean => err instanceof RangeError;
    const framing = { binding: 'rest' } as const;
    await expect(lastValueFrom(throwError(() => new RangeError('overrun')).pipe(toSseStream('1.0', framing, 60_000, quiet), toArray()))).resolves.toEqual([]);
    await expect(lastValueFrom(throwError(() => new Error('broken')).pipe(toSseStream('1.0', framing, 60_000, quiet)))).rejects.toThrow('broken');
  });

/** A tool frame's event of task `taskId` (two tasks' events have different heads). */
const toolEvent = (seq: number, taskId: string, phase: 'started' | 'completed') =>
  new ToolFrameEvent(
    seq,
    `{"artifactUpdate":{"taskId":${JSON.stringify(taskId)},"contextId":"c","artifact":{"artifactId":`,
    JSON.stringify(`tool-call-a${seq}`),
    JSON.stringify({ toolCallId: `a${seq}`, name: 'lookup', phase, ...(phase === 'started' ? { args: { q: 'é\n' } } : { result: 1 }) }),
    phase !== 'started',
  );

  describe('TaskSseStream', () => {
    const never = (): boolean => false;
    const rpc: StreamFraming = { binding: 'jsonrpc', requestId: 'req-9' };

    it.each([
      ['JSON-RPC 1.0', rpc, '1.0'],
      ['JSON-RPC 0.3', { binding: 'jsonrpc', requestId: 4 }, '0.3'],
      ['HTTP+JSON', { binding: 'rest' }, '1.0'],
    ] as const)('writes to a response (%s) exactly the frames its messages() give @Sse', async (_name, framing, version) => {
      const events = [statusEvent(1), toolEvent(2, 't', 'started'), toolEvent(3, 't', 'completed'), toolEvent(4, 'other', 'completed'), statusEvent(5), toolEvent(6, 't', 'started'), new TaskEvent(7, statusEvent(7).json, true, true)];
      const messages = await lastValueFrom(new TaskSseStream(eventsThen(events).stream, version, framing, 60_000, never).messages().pipe(toArray()));
      const { response, text, ended } = fakeResponse();
      const wrote = new TaskSseStream(eventsThen(events).stream, version, framing, 60_000, never).writeTo(response, () => undefined);
      expect(wrote).toBe(true);
      expect(ended()).toBe(true);
      await new Promise((resolve) => response.once('finish', resolve));
      expect(text()).toBe(messages.map(formatSse).join(''));
    });

    it('ends the response quietly on the errors it is told to, and reports the others', () => {
      const quiet = (err: unknown): boolean => err instanceof RangeError;
      const failures: unknown[] = [];
      for (const err of [new RangeError('overrun'), new Error('broken')]) {
        const { response, ended } = fakeResponse();
        new TaskSseStream(eventsThen([statusEvent(1)], err).stream, '1.0', rpc, 60_000, quiet).writeTo(response, (e) => failures.push(e));
        expect(ended()).toBe(true);
      }
      expect(failures).toEqual([new Error('broken')]);
    });

    it('keeps an open stream alive, and stops it (and the keep-alive) when the response closes', () => {
      jest.useFakeTimers();
      try {
        const { stream, stopped } = eventsThen([], 'open');
        const { response, text } = fakeResponse();
        expect(new TaskSseStream(stream, '1.0', rpc, 1000, never).writeTo(response, () => undefined)).toBe(false);
        jest.advanceTimersByTime(2500);
        expect(text()).toBe(formatSse(KEEP_ALIVE).repeat(2));
        response.emit('close');
        expect(stopped()).toBe(true);
        expect(jest.getTimerCount()).toBe(0);
      } finally {
        jest.useRealTimers();
      }
    });

    it('arms no keep-alive and no close listener for a stream that ends as it attaches (a task that had ended), and a keep-alive for a stream left open', () => {
      const setInterval = jest.spyOn(global, 'setInterval');
      try {
        const { response, ended } = fakeResponse();
        new TaskSseStream(eventsThen([statusEvent(1)]).stream, '1.0', rpc, 1000, never).writeTo(response, () => undefined);
        expect(ended()).toBe(true);
        expect(setInterval).not.toHaveBeenCalled();
        // Nothing left to stop on its close either.
        expect(response.listenerCount('close')).toBe(0);
        const open = fakeResponse();
        new TaskSseStream(eventsThen([statusEvent(1)], 'open').stream, '1.0', rpc, 1000, never).writeTo(open.response, () => undefined);
        expect(setInterval).toHaveBeenCalledTimes(1);
        open.response.emit('close');
      } finally {
        setInterval.mockRestore();
      }
    });

    it('takes no tick to flush a stream that ends as it attaches; one left open sends what it wrote as it attached at the end of the turn', async () => {
      const writes: string[] = [];
      const nextTick = jest.spyOn(process, 'nextTick');
      try {
        const ended = fakeResponse();
        new TaskSseStream(eventsThen([statusEvent(1), statusEvent(2)]).stream, '1.0', rpc, 60_000, never, new ResponseWriter(ended.response)).writeTo(ended.response, () => undefined);
        expect(ended.ended()).toBe(true);
        expect(nextTick).not.toHaveBeenCalled();
        const open = fakeResponse();
        const write = open.response.write.bind(open.response);
        open.response.write = ((chunk: string) => (writes.push(chunk), write(chunk))) as typeof open.response.write;
        const opened = new TaskSseStream(eventsThen([statusEvent(1), statusEvent(2)], 'open').stream, '1.0', rpc, 60_000, never, new ResponseWriter(open.response));
        expect(opened.writeTo(open.response, () => undefined)).toBe(true);
        expect(nextTick).toHaveBeenCalledTimes(1);
        expect(writes).toEqual([]);
        await new Promise<void>((resolve) => setImmediate(resolve));
        expect(writes).toHaveLength(1);
        expect(writes[0]).toBe([statusEvent(1), statusEvent(2)].map((e) => formatSse({ id: String(e.seq), data: jsonRpcResult('req-9', e.jsonFor('1.0')) })).join(''));
        open.response.emit('close');
      } finally {
        nextTick.mockRestore();
      }
    });

    it('stops at once a stream whose response closed before it attached (the client left during dispatch)', async () => {
      const { stream, stopped } = eventsThen([], 'open');
      const { response } = fakeResponse();
      response.destroy();
      await new Promise((resolve) => response.once('close', resolve));
      new TaskSseStream(stream, '1.0', rpc, 1000, never).writeTo(response, () => undefined);
      expect(stopped()).toBe(true);
    });

    it('hands the chunks of one turn to the response as one write, in order, and the last one with its end', async () => {
      const writes: string[] = [];
      const { response, text } = fakeResponse();
      const write = response.write.bind(response);
      response.write = ((chunk: string) => (writes.push(chunk), write(chunk))) as typeof response.write;
      const end = response.end.bind(response);
      response.end = ((chunk?: string) => (writes.push(`end ${chunk ?? ''}`), end(chunk))) as typeof response.end;
      const writer = new ResponseWriter(response);
      writer.write('a');
      writer.write('b');
      expect(writes).toEqual([]);
      await new Promise<void>((resolve) => process.nextTick(resolve));
      expect(writes).toEqual(['ab']);
      writer.write('c');
      writer.write('d');
      writer.endStream();
      expect(writes).toEqual(['ab', 'end cd']);
      await new Promise((resolve) => response.once('finish', resolve));
      expect(text()).toBe('abcd');
      // Nothing is written after the end, not even what the turn's flush would have sent.
      await new Promise<void>((resolve) => process.nextTick(resolve));
      expect(writes).toEqual(['ab', 'end cd']);
      // With nothing pending, the end is a bare one.
      const bare = fakeResponse();
      const ends: unknown[] = [];
      const endBare = bare.response.end.bind(bare.response);
      bare.response.end = ((chunk?: string) => (ends.push(chunk), endBare(chunk))) as typeof response.end;
      new ResponseWriter(bare.response).endStream();
      expect(ends).toEqual([undefined]);
    });

    it("sends a turn's chunk out within its flush: the socket corked for the write and uncorked at once, unless corked by another", async () => {
      const log: string[] = [];
      const socket = {
        writableCorked: 0,
        cork: () => void (socket.writableCorked++, log.push('cork')),
        uncork: () => void (socket.writableCorked--, log.push('uncork')),
      };
      const { response } = fakeResponse();
      const write = response.write.bind(response);
      response.write = ((chunk: string) => (log.push(`write ${chunk} corked ${socket.writableCorked}`), write(chunk))) as typeof response.write;
      const end = response.end.bind(response);
      response.end = ((chunk?: string) => (log.push(`end ${chunk ?? ''} corked ${socket.writableCorked}`), end(chunk))) as typeof response.end;
      Object.defineProperty(response, 'socket', { value: socket });
      const writer = new ResponseWriter(response);
      writer.write('a');
      writer.write('b');
      await new Promise<void>((resolve) => process.nextTick(resolve));
      expect(log).toEqual(['cork', 'write ab corked 1', 'uncork']);
      expect(socket.writableCorked).toBe(0);
      // Corked by someone else (Node, for an earlier write of this tick): left to them.
      socket.writableCorked = 1;
      writer.write('c');
      await new Promise<void>((resolve) => process.nextTick(resolve));
      expect(log.slice(3)).toEqual(['write c corked 1']);
      expect(socket.writableCorked).toBe(1);
      // The end does not wait for the turn: what is pending goes with it, as the response ends.
      socket.writableCorked = 0;
      writer.write('d');
      writer.endStream();
      expect(log.slice(4)).toEqual(['end d corked 0']);
    });

    it("paces on the response's writes: busy from a write that fills its buffer until it drains", async () => {
      const { response } = fakeResponse(100);
      const writer = new ResponseWriter(response);
      writer.write('x'.repeat(50));
      expect(writer.ready()).toBe(true);
      writer.write('x'.repeat(60));
      expect(writer.ready()).toBe(false);
      const again = new Promise<void>((resolve) => writer.whenReady(resolve));
      await again;
      expect(writer.ready()).toBe(true);
      // Ready already: the callback still comes, a turn later.
      await new Promise<void>((resolve) => writer.whenReady(resolve));
      // A wait given up is not called back.
      writer.write('x'.repeat(200));
      let called = false;
      writer.whenReady(() => (called = true))();
      await new Promise((resolve) => response.once('drain', resolve));
      expect(called).toBe(false);
      expect(writer.ready()).toBe(true);
    });
  });
});

/** A server whose every response is `respond`'s, with no Date header (so two responses' bytes compare). */
async function serving(respond: (response: ServerResponse, request: IncomingMessage) => void): Promise<{ server: Server; port: number }> {
  const server = createServer((request, response) => {
    response.sendDate = false;
    respond(response, request);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** The raw bytes of one response to a GET of `path`, head and chunked body as they came over the socket. */
function rawResponse(port: number, path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
  });
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ResponseWriter on an HTTP response', () => {
  // Multi-byte characters (2, 3 and 4 bytes in UTF-8) make a chunk's length in bytes differ from its length in characters.
  const turns = [['id: 1\ndata: {"a":1}\n\n'], ['id: 2\ndata: {"é":"ü"}\n\n', 'id: 3\ndata: "€😀"\n\n'], [': keep-alive\n\n'], ['x'.repeat(40_000), 'y'], ['id: 4\ndata: last\n\n']];
  // What Node's `write` is given for the same turns: one write per turn, but a chunk past the buffer's size goes at once, alone.
  const nodeWrites = [[turns[0].join('')], [turns[1].join('')], [turns[2].join('')], turns[3]];

  it('sends the same bytes as Node\'s `write` per turn, the chunks after the head straight to the socket', async () => {
    let writes = 0;
    const { server, port } = await serving((response, request) => {
      response.writeHead(200, { 'Content-Type': 'text/event-stream' });
      void (async () => {
        if (request.url === '/node') {
          for (const writes of nodeWrites) {
            for (const chunk of writes) response.write(chunk);
            await turn();
          }
          response.end(turns[turns.length - 1].join(''));
          return;
        }
        const writer = new ResponseWriter(response);
        for (const chunk of turns[0]) writer.write(chunk);
        await turn();
        // Counted on the socket (a wrapped response.write would take Node's path, see below).
        const socket = response.socket as Socket;
        const socketWrite = socket.write;
        socket.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
          writes++;
          return socketWrite.apply(this, args);
        } as Socket['write'];
        for (const chunks of turns.slice(1, -1)) {
          for (const chunk of chunks) writer.write(chunk);
          await turn();
        }
        socket.write = socketWrite;
        for (const chunk of turns[turns.length - 1]) writer.write(chunk);
        writer.endStream();
      })();
    });
    try {
      const [node, written] = [await rawResponse(port, '/node'), await rawResponse(port, '/writer')];
      expect(node.toString('latin1')).toContain('Transfer-Encoding: chunked');
      expect(written.equals(node)).toBe(true);
      // After the head, one socket write per chunk handed over (the 40,000-character chunk goes at
      // once, alone): 4, where Node's write makes four per chunk (length, CRLF, chunk, CRLF).
      expect(writes).toBe(4);
    } finally {
      server.close();
    }
  });

  it("passes every chunk through a response's own `write` when a host's middleware replaced it (compression)", async () => {
    const seen: string[] = [];
    const { server, port } = await serving((response) => {
      response.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const write = response.write.bind(response) as (chunk: string) => boolean;
      // As compression does: the instance's write, which must see the body to encode it.
      response.write = ((chunk: string) => (seen.push(chunk), write(chunk))) as typeof response.write;
      void (async () => {
        const writer = new ResponseWriter(response);
        for (const chunks of turns.slice(0, -1)) {
          for (const chunk of chunks) writer.write(chunk);
          await turn();
        }
        writer.endStream();
      })();
    });
    try {
      await rawResponse(port, '/');
      expect(seen.join('')).toBe(turns.slice(0, -1).flat().join(''));
    } finally {
      server.close();
    }
  });

  it('paces on the socket after a write straight to it: busy while the client does not read, ready once it drains', async () => {
    let writer: ResponseWriter | undefined;
    let full!: () => void;
    const filled = new Promise<void>((resolve) => (full = resolve));
    const { server, port } = await serving((response) => {
      response.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const w = (writer = new ResponseWriter(response));
      w.write('head\n\n');
      void (async () => {
        await turn();
        // Past the kernel's and the socket's buffers: the client is not reading yet.
        while (w.ready()) {
          w.write('z'.repeat(60_000));
          await turn();
        }
        full();
      })();
    });
    const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n'));
    try {
      socket.pause();
      await filled;
      expect((writer as ResponseWriter).ready()).toBe(false);
      const ready = new Promise<void>((resolve) => (writer as ResponseWriter).whenReady(resolve));
      socket.resume();
      await ready;
      expect((writer as ResponseWriter).ready()).toBe(true);
    } finally {
      socket.destroy();
      server.closeAllConnections();
      server.close();
    }
  });
});
