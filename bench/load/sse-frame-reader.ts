import { parseToolCalls } from '../../src/extensions';
import { PUBLISHED_AT_FIELD } from '../lib/scenario';

const FIELD = `"${PUBLISHED_AT_FIELD}":`;
/** Frames checked in full at the start of each stream, then one in CHECK_EVERY. */
const CHECK_FIRST = 3;
const CHECK_EVERY = 500;

export interface FrameStats {
  events: number;
  frames: number;
  checkedFrames: number;
  invalidFrames: number;
  /** The first JSON-RPC error the server sent on the stream, if any. */
  error?: string;
  /** Whether the stream carried the task's COMPLETED status (a stream that ends without it failed). */
  completed: boolean;
}

/**
 * Reads one A2A SSE stream incrementally. Cheap enough to keep up with the raw-SSE limit on one
 * core: it splits events and finds the publish stamp by scanning, and parses in full (JSON +
 * parseToolCalls) only a sample of frames, to prove the bytes are real tool-call-v1 frames.
 */
export class SseFrameReader {
  readonly stats: FrameStats = { events: 0, frames: 0, checkedFrames: 0, invalidFrames: 0, completed: false };
  private pending = '';

  /** @param onLatency receives publish-to-receipt latency of each frame, in µs */
  constructor(private readonly onLatency: (us: number) => void) {}

  /** Feeds one received chunk; `receivedUs` is when its bytes arrived. */
  push(chunk: string, receivedUs: number): void {
    let text = this.pending + chunk;
    let start = 0;
    let end: number;
    while ((end = text.indexOf('\n\n', start)) !== -1) {
      this.readEvent(text.slice(start, end), receivedUs);
      start = end + 2;
    }
    text = text.slice(start);
    this.pending = text;
  }

  private readEvent(event: string, receivedUs: number): void {
    const data = event.indexOf('data:');
    if (data === -1) return; // comment or keep-alive
    this.stats.events++;
    if (event.indexOf('"artifactUpdate"', data) === -1) {
      if (this.stats.error === undefined && event.indexOf('"error"', data) !== -1) this.stats.error = event.slice(data + 5, data + 400).trim();
      if (event.indexOf('"TASK_STATE_COMPLETED"', data) !== -1) this.stats.completed = true;
      return;
    }
    const at = event.indexOf(FIELD, data);
    if (at === -1) return; // an artifact that is not one of ours (e.g. the final answer)
    this.stats.frames++;
    this.onLatency(receivedUs - parseFloat(event.slice(at + FIELD.length, at + FIELD.length + 24)));
    if (this.stats.frames <= CHECK_FIRST || this.stats.frames % CHECK_EVERY === 0) this.check(event.slice(data + 5));
  }

  private check(json: string): void {
    this.stats.checkedFrames++;
    try {
      const parsed = JSON.parse(json) as { result?: { artifactUpdate?: { artifact?: { parts?: unknown } } } };
      if (parseToolCalls(parsed.result?.artifactUpdate?.artifact?.parts).length !== 1) this.stats.invalidFrames++;
    } catch {
      this.stats.invalidFrames++;
    }
  }
}
