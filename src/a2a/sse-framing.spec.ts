import { PassThrough } from 'node:stream';
import type { MessageEvent } from '@nestjs/common';
// Nest's own SSE writer, to prove the JSON-RPC stream frames events byte for byte as @Sse does.
import { SseStream } from '@nestjs/core/router/sse-stream';
import { Role, TaskState } from '@a2a-js/sdk';
import { Subject, lastValueFrom, of, throwError, toArray } from 'rxjs';
import { formatSse, jsonRpcResult, toSseStream, KEEP_ALIVE } from './sse-framing';
import { TaskEvent } from './task-event';

function nestWrites(messages: MessageEvent[]): Promise<string> {
  const sse = new SseStream();
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
});
