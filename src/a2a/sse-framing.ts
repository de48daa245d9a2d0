import type { MessageEvent } from '@nestjs/common';
import { Observable, type OperatorFunction } from 'rxjs';
import type { ProtocolVersion } from './a2a.constants';
import type { TaskEvent } from './task-event';

export type JsonRpcId = string | number | null;

/** How each event is wrapped: a JSON-RPC response (JSON-RPC binding) or bare (HTTP+JSON binding). */
export type StreamFraming = { binding: 'jsonrpc'; requestId: JsonRpcId } | { binding: 'rest' };

export const KEEP_ALIVE: MessageEvent = { comment: 'keep-alive' };

/** The JSON-RPC success envelope around an already serialised result. */
export function jsonRpcResult(requestId: JsonRpcId, resultJson: string): string {
  return `${jsonRpcResultPrefix(requestId)}${resultJson}}`;
}

function jsonRpcResultPrefix(requestId: JsonRpcId): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(requestId)},"result":`;
}

/**
 * Task events as one stream's SSE messages: `id` is the task's sequence number (what a client
 * sends back as Last-Event-ID), `data` one line of JSON, and a keep-alive comment every
 * `keepAliveMs` while the stream is open, so idle streams stay up. The serialised
 * StreamResponse is shared by every subscriber of a version; only the JSON-RPC envelope, which
 * holds the request id, is per stream. One subscriber per stream, not an operator each for the
 * framing, the keep-alive and the error handling: an event takes one hop here instead of three.
 * `endsQuietly` says which errors end the stream (it completes) rather than fail it.
 */
export function toSseStream(
  version: ProtocolVersion,
  framing: StreamFraming,
  keepAliveMs: number,
  endsQuietly: (err: unknown) => boolean = () => false,
): OperatorFunction<TaskEvent, MessageEvent> {
  const prefix = framing.binding === 'jsonrpc' ? jsonRpcResultPrefix(framing.requestId) : '';
  const suffix = framing.binding === 'jsonrpc' ? '}' : '';
  return (events) =>
    new Observable<MessageEvent>((subscriber) => {
      const timer = setInterval(() => subscriber.next(KEEP_ALIVE), keepAliveMs);
      timer.unref();
      const subscription = events.subscribe({
        next: (event) => subscriber.next({ id: String(event.seq), data: prefix + event.jsonFor(version) + suffix }),
        error: (err: unknown) => (endsQuietly(err) ? subscriber.complete() : subscriber.error(err)),
        complete: () => subscriber.complete(),
      });
      return () => {
        clearInterval(timer);
        subscription.unsubscribe();
      };
    });
}

/** One SSE message on the wire, byte for byte as Nest's @Sse writes it: fields, then a blank line. */
export function formatSse(message: MessageEvent): string {
  let out = '';
  if (message.id !== undefined) out += `id: ${message.id}\n`;
  if (message.comment !== undefined) out += `: ${message.comment}\n`;
  if (message.data !== undefined) out += `data: ${typeof message.data === 'string' ? message.data : JSON.stringify(message.data)}\n`;
  return `${out}\n`;
}
