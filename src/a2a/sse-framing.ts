import type { MessageEvent } from '@nestjs/common';
import { Observable, map, type OperatorFunction } from 'rxjs';
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
 * Task events as SSE messages: `id` is the task's sequence number (what a client sends back as
 * Last-Event-ID), `data` one line of JSON. The serialised StreamResponse is shared by every
 * subscriber of a version; only the JSON-RPC envelope, which holds the request id, is per stream.
 */
export function toSseMessages(version: ProtocolVersion, framing: StreamFraming): OperatorFunction<TaskEvent, MessageEvent> {
  const prefix = framing.binding === 'jsonrpc' ? jsonRpcResultPrefix(framing.requestId) : '';
  const suffix = framing.binding === 'jsonrpc' ? '}' : '';
  return map((event) => ({ id: String(event.seq), data: prefix + event.jsonFor(version) + suffix }));
}

/** Adds a comment message every `intervalMs` while the source is open, so idle streams stay up. */
export function withKeepAlive(intervalMs: number): OperatorFunction<MessageEvent, MessageEvent> {
  return (source) =>
    new Observable<MessageEvent>((subscriber) => {
      const timer = setInterval(() => subscriber.next(KEEP_ALIVE), intervalMs);
      timer.unref();
      const subscription = source.subscribe(subscriber);
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
