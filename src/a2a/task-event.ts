import { StreamResponse } from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { TOOL_CALL_V1_ARTIFACT_NAME, TOOL_CALL_V1_MIME_TYPE, TOOL_CALL_V1_PART_MEDIA_TYPE } from '../extensions';
import type { ProtocolVersion } from './a2a.constants';
import { EventBlock, type EventPacking } from './event-log';

const v03 = new V03PushNotificationSerializer();

/**
 * One event of a task's stream, serialised once per protocol version and shared by every
 * subscriber: the 1.0 ProtoJSON eagerly (it also proves the payload serialisable), the 0.3 shape
 * on first demand. Only the JSON is kept: holding each logged event's object graph as well
 * (kept for replay, up to maxEventsPerTask per task) doubled what the log keeps alive, and the
 * garbage collector's work with it.
 */
export class TaskEvent {
  private readonly text: string;
  private json03?: string;

  constructor(
    readonly seq: number,
    /** The event, or its 1.0 ProtoJSON already serialised (read back from a shared store). */
    response: StreamResponse | string,
    /** A tool-call-v1 frame: only clients that activate the extension receive it. */
    readonly isToolFrame = false,
    /** The task's terminal status update: streams end after it. */
    readonly terminal = false,
  ) {
    this.text = typeof response === 'string' ? response : JSON.stringify(StreamResponse.toJSON(response));
  }

  /** The StreamResponse's 1.0 ProtoJSON. */
  get json(): string {
    return this.text;
  }

  /** What it weighs in a log: its JSON's length. */
  get weight(): number {
    return this.text.length;
  }

  /** Its JSON's length in UTF-8 bytes. */
  get jsonBytes(): number {
    return Buffer.byteLength(this.text);
  }

  /** Writes its JSON (UTF-8) into `buffer` at `offset`; returns the offset after it. */
  writeJson(buffer: Buffer, offset: number): number {
    return offset + buffer.write(this.text, offset);
  }

  /** The StreamResponse, decoded again from its JSON (a fresh object on each read). */
  get response(): StreamResponse {
    return StreamResponse.fromJSON(JSON.parse(this.json));
  }

  /** The StreamResponse in the wire shape of a protocol version (1.0 ProtoJSON, or the 0.3 event). */
  jsonFor(version: ProtocolVersion): string {
    if (version === '1.0') return this.json;
    // The 0.3 serialiser writes a push-notification body, which is exactly the 0.3 stream result.
    this.json03 ??= v03.serialize(this.response).body;
    return this.json03;
  }
}

const TOOL_ARTIFACT_NAME_JSON = JSON.stringify(TOOL_CALL_V1_ARTIFACT_NAME);
const TOOL_PART_TAIL_JSON = `"metadata":{"mimeType":${JSON.stringify(TOOL_CALL_V1_MIME_TYPE)}},"mediaType":${JSON.stringify(TOOL_CALL_V1_PART_MEDIA_TYPE)}}`;
const TOOL_ARTIFACT_MIDDLE_JSON = `,"name":${TOOL_ARTIFACT_NAME_JSON},"parts":[{"data":`;
const TOOL_EVENT_TAIL_JSON = `,${TOOL_PART_TAIL_JSON}]}}}`;
/** A tool frame's artifact alone (as a snapshot lists it): the same text as in the event. */
const TOOL_ARTIFACT_OPENING_JSON = '{"artifactId":';
const TOOL_ARTIFACT_TAIL_JSON = `,${TOOL_PART_TAIL_JSON}]}`;
const TOOL_EVENT_LAST_TAIL_JSON = `,${TOOL_PART_TAIL_JSON}]},"lastChunk":true}}`;

/**
 * A tool-call-v1 frame's event (the artifact update of the tool's artifact), serialised by hand:
 * the task's head (its ids), the artifact id, the frame, and constant text between and after.
 * Only the artifact id and the frame vary, and only those are kept: the JSON is put together
 * when read (a string of pieces the socket write copies once), so a retained event holds a
 * third of its JSON, and a block keeps only those two parts (see TaskEventBlock).
 */
export class ToolFrameEvent extends TaskEvent {
  constructor(
    seq: number,
    /** `{"artifactUpdate":{"taskId":…,"contextId":…,"artifact":{"artifactId":`, the same string for every frame of a task. */
    readonly head: string,
    readonly artifactIdJson: string,
    readonly frameJson: string,
    /** A terminal phase: the update is the artifact's last chunk. */
    readonly lastChunk: boolean,
  ) {
    super(seq, '', true);
  }

  override get json(): string {
    return this.head + this.artifactIdJson + TOOL_ARTIFACT_MIDDLE_JSON + this.frameJson + (this.lastChunk ? TOOL_EVENT_LAST_TAIL_JSON : TOOL_EVENT_TAIL_JSON);
  }

  override get weight(): number {
    return toolEventWeight(this.head, this.artifactIdJson.length + this.frameJson.length, this.lastChunk);
  }

  override get jsonBytes(): number {
    return Buffer.byteLength(this.head) + Buffer.byteLength(this.artifactIdJson) + Buffer.byteLength(this.frameJson) + toolEventWeight('', 0, this.lastChunk);
  }

  /** Its artifact's JSON (`{"artifactId":…}`, as the event holds it) in UTF-8 bytes. */
  get artifactJsonBytes(): number {
    return TOOL_ARTIFACT_OPENING_JSON.length + Buffer.byteLength(this.artifactIdJson) + TOOL_ARTIFACT_MIDDLE_JSON.length + Buffer.byteLength(this.frameJson) + TOOL_ARTIFACT_TAIL_JSON.length;
  }

  /** Writes its artifact's JSON into `buffer` at `offset`, piece by piece (a snapshot's); returns the offset after it. */
  writeArtifactJson(buffer: Buffer, offset: number): number {
    offset += buffer.write(TOOL_ARTIFACT_OPENING_JSON, offset, 'latin1');
    offset += buffer.write(this.artifactIdJson, offset);
    offset += buffer.write(TOOL_ARTIFACT_MIDDLE_JSON, offset, 'latin1');
    offset += buffer.write(this.frameJson, offset);
    return offset + buffer.write(TOOL_ARTIFACT_TAIL_JSON, offset, 'latin1');
  }

  /** Piece by piece: the joined JSON (a string the size of the frame) is never made. */
  override writeJson(buffer: Buffer, offset: number): number {
    offset += buffer.write(this.head, offset);
    offset += buffer.write(this.artifactIdJson, offset);
    offset += buffer.write(TOOL_ARTIFACT_MIDDLE_JSON, offset, 'latin1');
    offset += buffer.write(this.frameJson, offset);
    return offset + buffer.write(this.lastChunk ? TOOL_EVENT_LAST_TAIL_JSON : TOOL_EVENT_TAIL_JSON, offset, 'latin1');
  }
}

function toolEventWeight(head: string, varying: number, lastChunk: boolean): number {
  return head.length + varying + TOOL_ARTIFACT_MIDDLE_JSON.length + (lastChunk ? TOOL_EVENT_LAST_TAIL_JSON : TOOL_EVENT_TAIL_JSON).length;
}

const TOOL_FRAME = 1;
const TERMINAL = 2;
/** A ToolFrameEvent kept as its artifact id and frame (ID_BYTES says where the one ends). */
const COMPACT = 4;
/** A compact one's update is the artifact's last chunk. */
const LAST_CHUNK = 8;
/** An event whose JSON UTF-8 cannot carry exactly (a lone surrogate): kept as its string. */
const AS_STRING = 16;

/** Per event, four numbers in a block's `meta`: where its bytes end, its flags, its artifact id's bytes (compact), the characters it keeps. */
const END = 0;
const FLAG_BITS = 1;
const ID_BYTES = 2;
const CHARS = 3;
const META = 4;

/** A block's first room; it doubles as events come, up to BLOCK_BYTES. */
const FIRST_BYTES = 8 * 1024;
/** A block is full past this many bytes (unless it holds one larger event alone)... */
const BLOCK_BYTES = 64 * 1024;
/** ...or this many events. */
const BLOCK_EVENTS = 2048;
const FIRST_EVENTS = 32;

/**
 * Consecutive events of one task kept outside the JavaScript heap: as UTF-8 bytes in one Buffer
 * (their JSONs, or for a tool frame's event only its artifact id and frame: a third of its JSON),
 * and four numbers each in an Int32Array (where it ends, its flags, where a compact one's id
 * ends, its weight). A few objects per block and none per event, so the young-generation GC
 * neither copies nor promotes what a running task retains (it did so for every event the 1,000
 * running tasks of the 1,000-stream case held). Each event is written as it leaves the log's hot
 * ones. Reading one back decodes its bytes, or rebuilds a tool frame's event around its parts.
 */
export class TaskEventBlock extends EventBlock<TaskEvent> {
  private bytes: Buffer = EMPTY;
  private used = 0;
  private meta: Int32Array = new Int32Array(FIRST_EVENTS * META);
  private events = 0;
  /** The tool frames' head (one task, one head). */
  private head: string | undefined;
  /** The events kept AS_STRING, by index. */
  private strings?: Map<number, string>;

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
      this.meta[at + CHARS] = event.artifactIdJson.length + event.frameJson.length;
      flags += COMPACT + (event.lastChunk ? LAST_CHUNK : 0);
    } else {
      if (asString) {
        (this.strings ??= new Map()).set(i, json);
        flags += AS_STRING;
      } else this.used += this.bytes.write(json, this.used);
      this.meta[at + CHARS] = json.length;
    }
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

  override seal(): void {
    // A finished task's last block would otherwise keep up to half its room empty.
    if (this.bytes.length - this.used > Math.max(1024, this.used / 8)) {
      const bytes = Buffer.allocUnsafeSlow(this.used);
      this.bytes.copy(bytes, 0, 0, this.used);
      this.bytes = bytes;
    }
    if (this.meta.length > 2 * this.events * META) this.meta = resized(this.meta, this.events * META);
  }

  get(seq: number): TaskEvent {
    const at = (seq - this.firstSeq) * META;
    const flags = this.meta[at + FLAG_BITS];
    const isToolFrame = (flags & TOOL_FRAME) !== 0;
    const terminal = (flags & TERMINAL) !== 0;
    if ((flags & AS_STRING) !== 0) return new TaskEvent(seq, this.strings?.get(seq - this.firstSeq) as string, isToolFrame, terminal);
    const start = at === 0 ? 0 : this.meta[at - META + END];
    const end = this.meta[at + END];
    if ((flags & COMPACT) === 0) return new TaskEvent(seq, this.bytes.toString('utf8', start, end), isToolFrame, terminal);
    const split = start + this.meta[at + ID_BYTES];
    return new ToolFrameEvent(seq, this.head as string, this.bytes.toString('utf8', start, split), this.bytes.toString('utf8', split, end), (flags & LAST_CHUNK) !== 0);
  }

  weight(seq: number): number {
    const at = (seq - this.firstSeq) * META;
    const flags = this.meta[at + FLAG_BITS];
    return (flags & COMPACT) === 0 ? this.meta[at + CHARS] : toolEventWeight(this.head as string, this.meta[at + CHARS], (flags & LAST_CHUNK) !== 0);
  }
}

/** A copy of `meta` with room for `length` numbers. */
function resized(meta: Int32Array, length: number): Int32Array {
  const out = new Int32Array(length);
  out.set(length >= meta.length ? meta : meta.subarray(0, length));
  return out;
}

const EMPTY = Buffer.alloc(0);
/** String.prototype.isWellFormed (Node 20), which the project's TypeScript lib does not declare yet. */
type WellFormedCheck = string & { isWellFormed(): boolean };

/**
 * How a task's log keeps its events: the newest as it is (what live streams take), each older
 * one written into the newest TaskEventBlock as it leaves (see there why).
 */
export const TASK_EVENT_PACKING: EventPacking<TaskEvent> = {
  hot: 1,
  open: (firstSeq) => new TaskEventBlock(firstSeq),
};
