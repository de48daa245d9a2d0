/**
 * The answer as the model writes it: text deltas in, coalesced `answer` events out. A fast
 * model would otherwise cost one stream event per token; here a piece leaves once `flushChars`
 * characters are waiting or `flushMs` after the first of them, whichever comes first. The first
 * piece of an answer leaves at once, so coalescing never delays the first byte.
 */
import type { ExecutorEvent } from '../executor.types';

export type AnswerEvent = Extract<ExecutorEvent, { type: 'answer' }>;

export interface AnswerChunking {
  /** A waiting piece leaves this long after its first character arrived (0: at once). */
  flushMs: number;
  /** A waiting piece leaves as soon as it holds this many characters (0: every delta at once). */
  flushChars: number;
}

export const DEFAULT_ANSWER_CHUNKING: AnswerChunking = { flushMs: 20, flushChars: 64 };

export class AnswerStream {
  /** The model message whose text is being streamed. */
  private messageId: string | undefined;
  /** Messages whose text turned out to be narration: their later deltas are not answer either. */
  private readonly withdrawn = new Set<string>();
  /** Whether the current answer has begun on the stream (its `append: false` piece is out). */
  private begun = false;
  /** Text sent since the answer began, and text waiting to be sent. */
  private sent = '';
  private waiting = '';
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly emit: (event: AnswerEvent) => void,
    private readonly chunking: AnswerChunking = DEFAULT_ANSWER_CHUNKING,
  ) {}

  /** A text delta of model message `messageId`. */
  write(messageId: string, text: string): void {
    if (text === '' || this.withdrawn.has(messageId)) return;
    if (messageId !== this.messageId) {
      // Another model call: its text replaces whatever the previous one wrote.
      this.reset();
      this.messageId = messageId;
    }
    if (!this.begun) {
      this.begun = true;
      this.sent = text;
      this.emit({ type: 'answer', text, append: false, last: false });
      return;
    }
    this.waiting += text;
    if (this.waiting.length >= this.chunking.flushChars) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.chunking.flushMs);
  }

  /**
   * The model turned to tools: what it wrote in this turn was narration. The answer sent so far
   * is withdrawn with an empty `append: false` piece, and the message's later text is ignored.
   */
  withdraw(messageId = this.messageId): void {
    if (messageId !== undefined) this.withdrawn.add(messageId);
    if (messageId !== this.messageId) return;
    const begun = this.begun;
    this.reset();
    if (begun) this.emit({ type: 'answer', text: '', append: false, last: false });
  }

  /**
   * The run answered `text`: the waiting rest goes out as the last piece, or, when the pieces
   * sent do not add up to `text` (a model that does not stream, a node that rewrote the reply),
   * the whole text replaces them.
   */
  finish(text: string): void {
    this.cancelTimer();
    if (this.begun && this.sent.length + this.waiting.length === text.length && text === this.sent + this.waiting) {
      this.emit({ type: 'answer', text: this.waiting, append: true, last: true });
    } else {
      this.emit({ type: 'answer', text, append: false, last: true });
    }
    this.reset();
  }

  /** The run ends without an answer (error, cancel): what the model wrote so far goes out. */
  flush(): void {
    this.cancelTimer();
    if (this.waiting === '') return;
    const text = this.waiting;
    this.sent += text;
    this.waiting = '';
    this.emit({ type: 'answer', text, append: true, last: false });
  }

  /** Stops the timer; nothing more is emitted. */
  dispose(): void {
    this.cancelTimer();
  }

  private reset(): void {
    this.cancelTimer();
    this.messageId = undefined;
    this.begun = false;
    this.sent = '';
    this.waiting = '';
  }

  private cancelTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
