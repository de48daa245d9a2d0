/**
 * An incremental `text/event-stream` parser: eventsource-parser (the WHATWG "event stream
 * interpretation" rules; each chunk is scanned once, so a large event costs linear time) with
 * what the client needs on top: the last event id persists until changed, as in EventSource;
 * one event may not exceed `maxEventLength` characters, which bounds memory against a hostile server.
 */
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { A2aClientError } from './errors';

/** 8 MiB of text: far above any frame (the server caps args/results at 16 KiB each). */
export const DEFAULT_MAX_SSE_EVENT_LENGTH = 8 * 1024 * 1024;

export interface SseMessage {
  /** The event's `id:` (the last one seen on this stream), if any. */
  id?: string;
  /** The `event:` type; "message" when none was given. */
  event: string;
  data: string;
  /** A reconnection delay the server asked for with `retry:`, if any. */
  retry?: number;
}

export class SseParser {
  private readonly parser: EventSourceParser;
  private lastEventId: string | undefined;
  private retry: number | undefined;
  private overflow = false;
  private started = false;
  private endsInCr = false;

  constructor(
    private readonly onMessage: (message: SseMessage) => void,
    private readonly maxEventLength = DEFAULT_MAX_SSE_EVENT_LENGTH,
  ) {
    this.parser = createParser({
      onEvent: (event) => this.dispatch(event),
      onRetry: (ms) => (this.retry = ms),
      onError: (error) => {
        // Unknown fields and bad retry values are ignored, per spec; only the size limit stops the stream.
        if (error.type === 'max-buffer-size-exceeded') this.overflow = true;
      },
      maxBufferSize: maxEventLength,
    });
  }

  /** Feeds a decoded chunk; dispatches every event it completes. */
  push(chunk: string): void {
    if (chunk === '') return;
    // A text chunk may carry the BOM itself (TextDecoder strips it from bytes).
    if (!this.started) chunk = chunk.charCodeAt(0) === 0xfeff ? chunk.slice(1) : chunk;
    this.started = true;
    this.endsInCr = chunk.endsWith('\r');
    this.parser.feed(chunk);
    if (this.overflow) throw new A2aClientError(`an SSE event exceeds ${this.maxEventLength} characters`);
  }

  /** The stream ended: an incomplete event (no blank line after it) is discarded, as the spec says. */
  end(): void {
    // A CR that ended the stream ended its line (the parser waits to see whether LF follows).
    if (this.endsInCr) this.parser.feed('\n');
    this.parser.reset();
    this.started = false;
    this.endsInCr = false;
  }

  private dispatch(event: EventSourceMessage): void {
    if (event.id !== undefined) this.lastEventId = event.id === '' ? undefined : event.id;
    const message: SseMessage = { event: event.event || 'message', data: event.data };
    if (this.lastEventId !== undefined) message.id = this.lastEventId;
    if (this.retry !== undefined) message.retry = this.retry;
    this.onMessage(message);
  }
}

/**
 * Reads a fetch response body as SSE messages, in order, until the body ends. `onChunk` hears
 * every chunk, comments (keep-alives) included: what an idle-connection watchdog needs.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, onChunk?: () => void): AsyncGenerator<SseMessage> {
  const queue: SseMessage[] = [];
  const parser = new SseParser((m) => queue.push(m));
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      onChunk?.();
      parser.push(decoder.decode(value, { stream: true }));
      while (queue.length > 0) yield queue.shift() as SseMessage;
    }
    parser.push(decoder.decode());
    parser.end();
    while (queue.length > 0) yield queue.shift() as SseMessage;
  } finally {
    // Early exit (consumer stopped, abort): release the connection.
    await reader.cancel().catch(() => undefined);
  }
}
