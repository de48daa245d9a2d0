import type { EventLog, EventLogView } from './event-log';
import { TaskEvent, ToolFrameEvent } from './task-event';

const TOOL_FRAME = 1;
const TERMINAL = 2;
/** A ToolFrameEvent kept as its artifact id and frame (the id's length is in the entry's upper bits). */
const COMPACT = 4;
const LAST_CHUNK = 8;
const FLAG_BITS = 16;
/**
 * An entry per event in the segment: its end and its flags, each as four 8-bit characters (a
 * character above 255 would make the whole segment a two-byte string, twice its bytes).
 */
const ENTRY = 8;

/**
 * A settled task's events as a kept task holds them once its store has flattened it: a part of one
 * string (a segment) shared with other tasks flattened with it, holding each event's entry (its end
 * and flags) and then what it keeps of each event (its JSON, or a tool frame's artifact id and
 * frame: a third of its JSON, as TaskEventBlock keeps them). One object for the whole log, where
 * the log as it was held an object and one or two strings per event (a task of 100 tool calls:
 * ~600 objects): what a mark-compact marks is objects and the pointers between them, and a string
 * is one object however long. Reading an event back slices the segment (no copy) or rebuilds a
 * tool frame's event around its slices: the same JSON, and the same SSE bytes, as the event it was.
 *
 * Read only: a settled task appends nothing, and it is flattened only while its log holds every
 * event within capacity (no trim drops one).
 */
export class SettledTaskEvents implements EventLogView<TaskEvent> {
  private constructor(
    /** The shared string (each task's events' text, then their entries as 8-bit characters). */
    private readonly segment: string,
    /** Where this task's text begins in it. */
    private readonly start: number,
    /** Where its entries begin (right after its text). */
    private readonly entries: number,
    readonly firstSeq: number,
    readonly size: number,
    readonly bytes: number,
    private readonly head: string,
  ) {}

  /**
   * The tasks' events in one new string, one SettledTaskEvents each, in the order given. A segment
   * longer than V8's regular objects (128 KiB) is allocated in its large-object space, which the
   * young-generation GC promotes without copying.
   */
  static flatten(logs: readonly EventLog<TaskEvent>[], heads: readonly string[]): SettledTaskEvents[] {
    const pieces: string[] = [];
    const at: number[] = [];
    let length = 0;
    for (let t = 0; t < logs.length; t++) {
      const log = logs[t];
      const head = heads[t];
      ENTRIES.length = 0;
      let end = 0;
      for (let seq = log.firstSeq; seq <= log.lastSeq; seq++) {
        const event = log.get(seq) as TaskEvent;
        let flags = (event.isToolFrame ? TOOL_FRAME : 0) + (event.terminal ? TERMINAL : 0);
        if (event instanceof ToolFrameEvent && event.head === head) {
          pieces.push(event.artifactIdJson, event.frameJson);
          end += event.artifactIdJson.length + event.frameJson.length;
          flags += COMPACT + (event.lastChunk ? LAST_CHUNK : 0) + event.artifactIdJson.length * FLAG_BITS;
        } else {
          pieces.push(event.json);
          end += event.json.length;
        }
        ENTRIES.push(entry(end, flags));
      }
      at.push(length, length + end);
      for (let i = 0; i < ENTRIES.length; i++) pieces.push(ENTRIES[i]);
      length += end + ENTRIES.length * ENTRY;
    }
    ENTRIES.length = 0;
    const segment = pieces.join('');
    return logs.map((log, t) => new SettledTaskEvents(segment, at[2 * t], at[2 * t + 1], log.firstSeq, log.size, log.bytes, heads[t]));
  }

  get lastSeq(): number {
    return this.firstSeq + this.size - 1;
  }

  get nextSeq(): number {
    return this.lastSeq + 1;
  }

  /** Every event it had: as many as it holds (no capacity left to fill). */
  get capacity(): number {
    return Math.max(1, this.size);
  }

  get(seq: number): TaskEvent | undefined {
    if (!Number.isInteger(seq) || seq < this.firstSeq || seq > this.lastSeq) return undefined;
    const i = seq - this.firstSeq;
    const from = this.start + (i === 0 ? 0 : this.read(this.entries + (i - 1) * ENTRY));
    const to = this.start + this.read(this.entries + i * ENTRY);
    const flags = this.read(this.entries + i * ENTRY + 4);
    if ((flags & COMPACT) === 0) return new TaskEvent(seq, this.segment.slice(from, to), (flags & TOOL_FRAME) !== 0, (flags & TERMINAL) !== 0);
    const split = from + Math.floor(flags / FLAG_BITS);
    return new ToolFrameEvent(seq, this.head, this.segment.slice(from, split), this.segment.slice(split, to), (flags & LAST_CHUNK) !== 0);
  }

  retainsAfter(seq: number): boolean {
    return seq >= this.firstSeq - 1;
  }

  /** Nothing to drop: it holds no more than it had when it was flattened, within the log's capacity. */
  trim(): void {}

  append(): void {
    throw new Error('a settled task appends no event');
  }

  pack(): void {}

  fit(): void {}

  /** The 32-bit number at `at` (four 8-bit characters, the most significant first). */
  private read(at: number): number {
    const s = this.segment;
    return s.charCodeAt(at) * 0x1000000 + ((s.charCodeAt(at + 1) << 16) | (s.charCodeAt(at + 2) << 8) | s.charCodeAt(at + 3));
  }
}

/** A task's entries while its text is put in the segment (one list for every batch: no list per task). */
const ENTRIES: string[] = [];

/** An event's entry: its end and flags, each below 2^32, as four 8-bit characters (a one-byte string). */
function entry(end: number, flags: number): string {
  if (!(end < 2 ** 32 && flags < 2 ** 32)) throw new Error(`a settled log's entry out of range: ${end}, ${flags}`);
  return String.fromCharCode(Math.floor(end / 0x1000000), (end >>> 16) & 255, (end >>> 8) & 255, end & 255, Math.floor(flags / 0x1000000), (flags >>> 16) & 255, (flags >>> 8) & 255, flags & 255);
}
