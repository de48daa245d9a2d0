/**
 * An incremental `text/event-stream` parser following the WHATWG "event stream interpretation"
 * rules: lines end in CR, LF or CRLF (also split across chunks); `data:` lines join with "\n";
 * one leading space after the colon is dropped; comment lines (`:`) are skipped; the last
 * event id persists until changed; an event dispatches on a blank line when it has data.
 * One event may not exceed `maxEventLength` characters, which bounds memory against a hostile server.
 */
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
  private buffer = '';
  private sawCr = false;
  private data: string[] = [];
  private eventType = '';
  private lastEventId: string | undefined;
  private retry: number | undefined;
  private started = false;
  private eventLength = 0;

  constructor(
    private readonly onMessage: (message: SseMessage) => void,
    private readonly maxEventLength = DEFAULT_MAX_SSE_EVENT_LENGTH,
  ) {}

  /** Feeds a decoded chunk; dispatches every event it completes. */
  push(chunk: string): void {
    let text = chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // A CR that ended the previous chunk already ended a line: skip the LF of its CRLF.
    if (this.sawCr && text.startsWith('\n')) text = text.slice(1);
    this.sawCr = false;
    this.buffer += text;
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== '\n' && c !== '\r') continue;
      this.line(this.buffer.slice(start, i));
      if (c === '\r') {
        if (i + 1 === this.buffer.length) this.sawCr = true;
        else if (this.buffer[i + 1] === '\n') i++;
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    if (this.eventLength + this.buffer.length > this.maxEventLength) {
      throw new A2aClientError(`an SSE event exceeds ${this.maxEventLength} characters`);
    }
  }

  /** The stream ended: an incomplete event (no blank line after it) is discarded, as the spec says. */
  end(): void {
    this.buffer = '';
    this.data = [];
    this.eventLength = 0;
    this.eventType = '';
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        this.eventLength += value.length + 1;
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value === '' ? undefined : value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        // unknown fields are ignored, per spec
        break;
    }
  }

  private dispatch(): void {
    if (this.data.length === 0) {
      this.eventType = '';
      return;
    }
    const message: SseMessage = { event: this.eventType || 'message', data: this.data.join('\n') };
    if (this.lastEventId !== undefined) message.id = this.lastEventId;
    if (this.retry !== undefined) message.retry = this.retry;
    this.data = [];
    this.eventLength = 0;
    this.eventType = '';
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
