import { OutgoingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { MessageEvent } from '@nestjs/common';
import { Observable, type OperatorFunction } from 'rxjs';
import type { ProtocolVersion } from './a2a.constants';
import { joined, toolEventEnd, type SseMessageFraming, type TaskEvent } from './task-event';
import type { StreamPace, TaskEventSink, TaskEventStream } from './task-stream';

export type JsonRpcId = string | number | null;

/** How each event is wrapped: a JSON-RPC response (JSON-RPC binding) or bare (HTTP+JSON binding). */
export type StreamFraming = { binding: 'jsonrpc'; requestId: JsonRpcId } | { binding: 'rest' };

export const KEEP_ALIVE: MessageEvent = { comment: 'keep-alive' };
/** KEEP_ALIVE on the wire. */
const KEEP_ALIVE_SSE = ': keep-alive\n\n';

/** The JSON-RPC success envelope before its id, and between the id and the result. */
const JSON_RPC_RESULT_OPENING = '{"jsonrpc":"2.0","id":';
const JSON_RPC_RESULT_KEY = ',"result":';

/**
 * What ends a stream's messages (SseMessageFraming's `end`, `toolEnd` and `toolLastEnd`), per
 * binding: two constants, made once, where each stream joined its two tool ends (~120
 * characters each) as it attached.
 */
interface MessageEnds {
  end: string;
  toolEnd: string;
  toolLastEnd: string;
}

function messageEnds(end: string): MessageEnds {
  return { end, toolEnd: toolEventEnd(end), toolLastEnd: toolEventEnd(end, true) };
}

/** A JSON-RPC response closes after the event's JSON; a bare (HTTP+JSON) message ends there. */
const JSON_RPC_ENDS = messageEnds('}\n\n');
const BARE_ENDS = messageEnds('\n\n');

/** The JSON-RPC success envelope around an already serialised result. */
export function jsonRpcResult(requestId: JsonRpcId, resultJson: string): string {
  return `${jsonRpcResultPrefix(requestId)}${resultJson}}`;
}

function jsonRpcResultPrefix(requestId: JsonRpcId): string {
  return `${JSON_RPC_RESULT_OPENING}${JSON.stringify(requestId)}${JSON_RPC_RESULT_KEY}`;
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

/**
 * A response written event by event (the JSON-RPC binding): that stream's pace, and, once
 * TaskSseStream.writeTo attaches it, the sink of its events and the framing of their messages
 * (SseMessageFraming's fields, which TaskEvent.sseMessage reads from it). One object per stream
 * for all three, where they were three (a sink and a framing object besides the writer): at
 * 1,000 streams each separate object an event passes is one more cache line to fetch.
 *
 * The pace: busy from a write that fills the response's buffer until it drains. It keeps that
 * state itself rather than reading `writableNeedDrain` for every event of every stream.
 *
 * The chunks written in one go of the event loop (a tool call's started and completed frames,
 * a replay) leave as one `response.write` at the end of it: Node's HTTP response corks its socket
 * on a write and uncorks it on the next tick anyway, so they would share one syscall either way,
 * but each write costs its own chunk header, four socket writes and a Buffer.byteLength. The
 * chunks go out at once when they would fill the response's buffer (the pace is unchanged), and
 * before the response ends (`endStream`).
 *
 * Once the response's head has gone, a chunk goes to its socket as one string with its chunked
 * framing (writesToSocket): the bytes Node's `write` would send, without its four socket writes
 * and the `writev` of their pieces.
 */
export class ResponseWriter implements StreamPace, TaskEventSink, SseMessageFraming {
  // Declared in the order an event reads them (an object's fields lie in that order).
  /** What this turn wrote so far, not yet handed to the response. */
  private pending = '';
  /** What the response held when this turn's pending chunk began (see write). */
  private buffered = 0;
  private readonly highWaterMark: number;
  private full = false;
  /** The framing (see SseMessageFraming), set by `frame`; the tool frames' part kept up by sseMessage. */
  private version: ProtocolVersion = '1.0';
  toolHead?: string = undefined;
  toolLine = '';
  toolMiddle = '';
  toolEnd = '';
  toolLastEnd = '';
  line = '';
  end = '';
  /** Whether anything was written (the Task or a replay is written as the stream attaches). */
  wrote = false;
  ended = false;
  private waiting?: () => void = undefined;
  /** Its drain listener, made when the stream first fills its buffer (most never do). */
  private drained?: () => void = undefined;
  /** Stops the stream's events (what attaching returned). */
  stop?: () => void = undefined;
  private timer?: NodeJS.Timeout = undefined;
  private endsQuietly: (err: unknown) => boolean = noError;
  private failed: (err: unknown) => void = ignoreError;
  /**
   * While the stream attaches (writeTo): its first chunks wait in `pending` without a tick of
   * their own, scheduled once it has attached, if it is still open. A stream that ends as it
   * attaches (a task that ended before its stream attached, as an empty task does) ends the
   * response with them, and would have taken a tick for nothing.
   */
  attaching = false;

  constructor(private readonly response: ServerResponse) {
    this.highWaterMark = response.writableHighWaterMark;
  }

  /**
   * Frames the events it takes as a sink (TaskSseStream.writeTo, once, before they come): `line`
   * and the binding's `ends` as SseMessageFraming's, in that protocol version; `endsQuietly` says
   * which errors end the stream (the response ends) rather than fail it (`failed` hears of those,
   * then it ends).
   */
  frame(version: ProtocolVersion, line: string, ends: MessageEnds, endsQuietly: (err: unknown) => boolean, failed: (err: unknown) => void): void {
    this.version = version;
    this.line = line;
    this.end = ends.end;
    this.toolEnd = ends.toolEnd;
    this.toolLastEnd = ends.toolLastEnd;
    this.endsQuietly = endsQuietly;
    this.failed = failed;
  }

  next(event: TaskEvent): void {
    this.wrote = true;
    this.write(event.sseMessage(this.version, this));
  }

  error(err: unknown): void {
    if (!this.endsQuietly(err)) this.failed(err);
    this.endStream();
  }

  complete(): void {
    this.endStream();
  }

  ready(): boolean {
    return !this.full;
  }

  whenReady(callback: () => void): () => void {
    if (!this.full) {
      const next = setImmediate(callback);
      return () => clearImmediate(next);
    }
    this.waiting = callback;
    return () => {
      if (this.waiting === callback) this.waiting = undefined;
    };
  }

  write(chunk: string): void {
    if (this.pending === '') {
      this.pending = chunk;
      // Read once per pending chunk, not per event (three getters deep): only a write changes
      // it within a turn, and this writer is the response's only writer.
      this.buffered = this.response.writableLength;
      if (!this.attaching) process.nextTick(ResponseWriter.flushTurnOf, this);
    } else {
      this.pending += chunk;
    }
    if (this.pending.length + this.buffered >= this.highWaterMark) this.flush();
  }

  /**
   * Ends the stream: its keep-alive stopped, and the response ended with what waits, as one write
   * with the last chunk (a write, then an end, would be two, and a tick).
   */
  endStream(): void {
    this.ended = true;
    clearInterval(this.timer);
    const chunk = this.pending;
    this.pending = '';
    if (chunk !== '' && !this.response.destroyed && !this.response.writableEnded) this.response.end(chunk);
    else this.response.end();
  }

  /** Once attached and still open: what the stream wrote as it attached leaves at the end of the turn, as a later write's would. */
  attached(): void {
    if (this.pending !== '') process.nextTick(ResponseWriter.flushTurnOf, this);
  }

  keepAlive(ms: number): void {
    this.timer = setInterval(() => this.write(KEEP_ALIVE_SSE), ms);
    this.timer.unref();
  }

  /** Stops the stream's events and its keep-alive (the response closed). */
  stopAll(): void {
    clearInterval(this.timer);
    this.stop?.();
  }

  /**
   * The turn's chunk, at the end of the turn: written with the socket corked and uncorked at
   * once, so it leaves now. A write to an uncorked socket makes Node cork it and uncork it on
   * a tick of its own: the same one syscall, after one more tick per stream per turn.
   */
  private flushTurn(): void {
    const socket = this.response.socket;
    // A write straight to an uncorked socket leaves at once already.
    if (!socket || socket.writableCorked || this.pending === '' || writesToSocket(this.response, socket)) {
      this.flush();
      return;
    }
    socket.cork();
    try {
      this.flush();
    } finally {
      socket.uncork();
    }
  }

  /** flushTurn as the tick's callback, the writer its argument: no closure per writer (another object an event would touch). */
  private static flushTurnOf(this: void, writer: ResponseWriter): void {
    writer.flushTurn();
  }

  private flush(): void {
    const chunk = this.pending;
    if (chunk === '') return;
    this.pending = '';
    const response = this.response;
    if (response.destroyed || response.writableEnded) return;
    const socket = response.socket;
    const direct = !!socket && writesToSocket(response, socket);
    if ((direct ? socket.write(`${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`) : response.write(chunk)) || this.full) return;
    this.full = true;
    // A direct write's response does not know its socket is full: the socket says when it drains.
    (direct ? socket : response).once('drain', (this.drained ??= () => this.drain()));
  }

  private drain(): void {
    this.full = false;
    const callback = this.waiting;
    this.waiting = undefined;
    callback?.();
  }
}

const noError = (): boolean => false;
const ignoreError = (): void => undefined;

/** Node's own `write` of an HTTP/1 response, as every response inherits it unless something replaced it. */
const nodeWrite = OutgoingMessage.prototype.write;

/** The parts of Node's HTTP/1 response and socket (node:_http_outgoing) that writesToSocket reads. */
interface NodeResponseState {
  _headerSent?: unknown;
  _hasBody?: unknown;
  outputData?: { length: number };
  strictContentLength?: unknown;
}

/**
 * Whether Node's `response.write` would hand a chunk straight to the socket, chunked: the head
 * has gone (with the first write), the body is chunked, nothing waits in the response's own
 * buffer, and the socket is this response's and writable. Then `write` sends the chunk's length
 * in hex, CRLF, the chunk and CRLF as four socket writes (corking the socket for a tick), which
 * `flush` sends as one. Anything else, or a Node whose response lacks these fields, takes `write`.
 * So does a response whose `write` a host's middleware replaced (compression, byte counters): its
 * chunks must pass through that `write`, or a gzip stream would get raw bytes.
 */
function writesToSocket(response: ServerResponse, socket: Socket): boolean {
  const state = response as unknown as NodeResponseState;
  return (
    response.write === nodeWrite &&
    response.chunkedEncoding === true &&
    state._headerSent === true &&
    state._hasBody === true &&
    state.strictContentLength === false &&
    state.outputData?.length === 0 &&
    (socket as unknown as { _httpMessage?: unknown })._httpMessage === response &&
    socket.writable
  );
}

/**
 * One client's SSE stream of a task: its events framed for the binding and version, kept alive,
 * ended quietly on the errors `endsQuietly` names. An @Sse handler takes it as `messages()`; the
 * JSON-RPC binding has it `writeTo` its response, the same bytes with no operator hop and no
 * message object per event.
 */
export class TaskSseStream {
  constructor(
    private readonly events: TaskEventStream,
    private readonly version: ProtocolVersion,
    private readonly framing: StreamFraming,
    private readonly keepAliveMs: number,
    private readonly endsQuietly: (err: unknown) => boolean,
    /** The response's writer, when the stream's pace is that response (see ResponseWriter). */
    private readonly writer?: ResponseWriter,
  ) {}

  messages(): Observable<MessageEvent> {
    return this.events.pipe(toSseStream(this.version, this.framing, this.keepAliveMs, this.endsQuietly));
  }

  /**
   * Writes the stream to `response` (its headers already set) as formatSse frames `messages()`,
   * and ends the response after the last event; `failed` hears of an error that is not quiet.
   * Returns whether anything was written at once (the Task or a replay is written as the stream
   * attaches). The response's close stops the stream.
   */
  writeTo(response: ServerResponse, failed: (err: unknown) => void): boolean {
    const framing = this.framing;
    // One flat string from its pieces (the envelope's opening holds this stream's request id); a bare stream's is a constant.
    const line = framing.binding === 'jsonrpc' ? joined('\ndata: ', JSON_RPC_RESULT_OPENING, JSON.stringify(framing.requestId), JSON_RPC_RESULT_KEY) : '\ndata: ';
    const sink = this.writer ?? new ResponseWriter(response);
    sink.frame(this.version, line, framing.binding === 'jsonrpc' ? JSON_RPC_ENDS : BARE_ENDS, this.endsQuietly, failed);
    sink.attaching = true;
    try {
      sink.stop = this.events.attach(sink);
    } catch (err) {
      sink.attaching = false;
      failed(err);
      sink.endStream();
      return sink.wrote;
    }
    sink.attaching = false;
    // Ended as it attached (a task that had ended, or ended before its stream attached): there
    // is nothing left to stop, and nothing to keep alive (a task that had ended streams all of
    // it as it attaches).
    if (sink.ended) return sink.wrote;
    sink.attached();
    sink.keepAlive(this.keepAliveMs);
    // A client that left while the request was dispatched closed the response already: its
    // 'close' has fired, so nothing would stop the stream or its keep-alive.
    if (response.destroyed) sink.stopAll();
    // `on`, not `once`: a response closes once, and stopAll may run again (once made a wrapper and its state per stream).
    else response.on('close', () => sink.stopAll());
    return sink.wrote;
  }
}
