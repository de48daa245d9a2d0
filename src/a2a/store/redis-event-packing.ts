import type { EventPackingByEvent, GrowingEventBlock } from '../event-log';
import { TaskEvent, ToolFrameEvent } from '../task-event';

const TOOL_FRAME = 1;
const TERMINAL = 2;
/** A ToolFrameEvent kept as its artifact id and frame (ID_BYTES says where the one ends). */
const COMPACT = 4;
/** A compact one's update is the artifact's last chunk. */
const LAST_CHUNK = 8;
/** An event whose JSON UTF-8 cannot carry exactly (a lone surrogate): kept as its string. */
const AS_STRING = 16;

/** Per event, four numbers in a block's `meta`: where its bytes end, its flags, its artifact id's bytes (compact), its weight. */
const END = 0;
const FLAG_BITS = 1;
const ID_BYTES = 2;
const WEIGHT = 3;
const META = 4;

/**
 * A block's first room; it doubles as events come, up to BLOCK_BYTES. Each size is an ArrayBuffer
 * of its own that the GC sweeps once dropped: a task of a few hundred frames needs two or three.
 */
const FIRST_BYTES = 16 * 1024;
/** A block is full past this many bytes (unless it holds one larger event alone)... */
const BLOCK_BYTES = 64 * 1024;
/** ...or this many events. */
const BLOCK_EVENTS = 2048;
const FIRST_EVENTS = 128;

/**
 * Consecutive events of one task kept outside the JavaScript heap: as UTF-8 bytes in one Buffer
 * (their JSONs, or for a tool frame's event only its artifact id and frame: a third of its JSON),
 * and four numbers each in an Int32Array. A few objects per block and none per event, so the
 * young-generation GC neither copies nor promotes what a running task retains. Each event is
 * written as it leaves the log's hot ones; reading one back decodes its bytes, or rebuilds a tool
 * frame's event around its parts.
 */
export class BufferEventBlock implements GrowingEventBlock<TaskEvent> {
  private bytes: Buffer = EMPTY;
  private used = 0;
  private meta: Int32Array = new Int32Array(FIRST_EVENTS * META);
  private events = 0;
  /** The tool frames' head (one task, one head). */
  private head: string | undefined;
  /** The events kept AS_STRING, by index. */
  private strings?: Map<number, string>;

  constructor(readonly firstSeq: number) {}

  get count(): number {
    return this.events;
  }

  add(event: TaskEvent): boolean {
    const i = this.events;
    if (i >= BLOCK_EVENTS) return false;
    let flags = (event.isToolFrame ? TOOL_FRAME : 0) + (event.terminal ? TERMINAL : 0);
    const compact = event instanceof ToolFrameEvent && (this.head === undefined || this.head === event.head);
    const json = compact ? '' : event.json;
    // JSON.stringify never writes a lone surrogate, but a string read back from a store might hold one.
    const asString = !compact && !(json as WellFormedCheck).isWellFormed();
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const most = compact ? 3 * (event.artifactIdJson.length + event.frameJson.length) : asString ? 0 : 3 * json.length;
    if (this.used + most > this.bytes.length && !this.grow(most)) return false;
    if ((i + 1) * META > this.meta.length) this.meta = resized(this.meta, 2 * this.meta.length);
    const at = i * META;
    if (compact) {
      this.head = event.head;
      const id = this.bytes.write(event.artifactIdJson, this.used);
      this.used += id + this.bytes.write(event.frameJson, this.used + id);
      this.meta[at + ID_BYTES] = id;
      flags += COMPACT + (event.lastChunk ? LAST_CHUNK : 0);
    } else if (asString) {
      (this.strings ??= new Map()).set(i, json);
      flags += AS_STRING;
    } else this.used += this.bytes.write(json, this.used);
    this.meta[at + WEIGHT] = event.weight;
    this.meta[at + END] = this.used;
    this.meta[at + FLAG_BITS] = flags;
    this.events = i + 1;
    return true;
  }

  /** Room for `more` bytes: the buffer doubles (up to BLOCK_BYTES, or exactly one larger event's); false when the block is full. */
  private grow(more: number): boolean {
    const need = this.used + more;
    if (this.used > 0 && need > BLOCK_BYTES) return false;
    const bytes = Buffer.allocUnsafeSlow(Math.max(need, Math.min(BLOCK_BYTES, Math.max(FIRST_BYTES, 2 * this.bytes.length))));
    this.bytes.copy(bytes, 0, 0, this.used);
    this.bytes = bytes;
    return true;
  }

  /** Keeps its room as it is: the writer forgets a task once its end is stored (a smaller copy would be garbage at once). */
  seal(): void {}

  get(seq: number): TaskEvent {
    const i = seq - this.firstSeq;
    const at = i * META;
    const flags = this.meta[at + FLAG_BITS];
    const isToolFrame = (flags & TOOL_FRAME) !== 0;
    const terminal = (flags & TERMINAL) !== 0;
    if ((flags & AS_STRING) !== 0) return new TaskEvent(seq, this.strings?.get(i) as string, isToolFrame, terminal);
    const start = at === 0 ? 0 : this.meta[at - META + END];
    const end = this.meta[at + END];
    if ((flags & COMPACT) === 0) return new TaskEvent(seq, this.bytes.toString('utf8', start, end), isToolFrame, terminal);
    const split = start + this.meta[at + ID_BYTES];
    return new ToolFrameEvent(seq, this.head as string, this.bytes.toString('utf8', start, split), this.bytes.toString('utf8', split, end), (flags & LAST_CHUNK) !== 0);
  }

  weight(seq: number): number {
    return this.meta[(seq - this.firstSeq) * META + WEIGHT];
  }
}

/** A copy of `meta` with room for `length` numbers (more than it has). */
function resized(meta: Int32Array, length: number): Int32Array {
  const out = new Int32Array(length);
  out.set(meta);
  return out;
}

const EMPTY = Buffer.alloc(0);
/** String.prototype.isWellFormed (Node 20), which the project's TypeScript lib does not declare yet. */
type WellFormedCheck = string & { isWellFormed(): boolean };

/**
 * How a task's log keeps its events on the instance that writes it to Redis: the newest as it is
 * (what a live stream on this instance takes), each older one written into a BufferEventBlock as
 * it leaves. The log is in the task's Redis Stream too, and read back from here only by a stream
 * on this instance that fell behind; kept as objects, a running task's events were what each
 * young-generation GC copied and then promoted (the pauses that set the p99 of paced streams).
 */
export const REDIS_EVENT_PACKING: EventPackingByEvent<TaskEvent> = {
  hot: 1,
  open: (firstSeq) => new BufferEventBlock(firstSeq),
};
