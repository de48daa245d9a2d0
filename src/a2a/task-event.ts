import { StreamResponse } from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { TOOL_CALL_V1_ARTIFACT_NAME, TOOL_CALL_V1_MIME_TYPE, TOOL_CALL_V1_PART_MEDIA_TYPE } from '../extensions';
import type { ProtocolVersion } from './a2a.constants';
import { EventBlock, OpenEventBlock, type EventPacking } from './event-log';

const v03 = new V03PushNotificationSerializer();

const TOOL_FRAME_EVENT = 1;
const TERMINAL_EVENT = 2;
const LAST_CHUNK_EVENT = 4;

/** An event's flags, below its sequence number in one field (FLAG_BITS bits). */
const FLAG_BITS = 8;

/** The 0.3 shape of the events a 0.3 stream has read, made on first demand (few streams are 0.3: no field on every event for it). */
const JSON_03 = new WeakMap<TaskEvent, string>();

/**
 * One event of a task's stream, serialised once per protocol version and shared by every
 * subscriber: the 1.0 ProtoJSON eagerly (it also proves the payload serialisable), the 0.3 shape
 * on first demand. Only the JSON is kept: holding each logged event's object graph as well
 * (kept for replay, up to maxEventsPerTask per task) doubled what the log keeps alive, and the
 * garbage collector's work with it. Its sequence number and flags are one field: every retained
 * event is an object the young generation copies and promotes, and each field is 8 bytes of it.
 */
export class TaskEvent {
  /** The 1.0 ProtoJSON (a ToolFrameEvent keeps its frame's JSON here). */
  protected readonly text: string;
  /** seq × FLAG_BITS + TOOL_FRAME_EVENT, TERMINAL_EVENT and LAST_CHUNK_EVENT. */
  protected seqAndFlags: number;

  constructor(
    seq: number,
    /** The event, or its 1.0 ProtoJSON already serialised (read back from a shared store). */
    response: StreamResponse | string,
    /** A tool-call-v1 frame: only clients that activate the extension receive it. */
    isToolFrame = false,
    /** The task's terminal status update: streams end after it. */
    terminal = false,
  ) {
    this.text = typeof response === 'string' ? response : flat(JSON.stringify(StreamResponse.toJSON(response)));
    this.seqAndFlags = seq * FLAG_BITS + (isToolFrame ? TOOL_FRAME_EVENT : 0) + (terminal ? TERMINAL_EVENT : 0);
  }

  /** Its sequence number in the task's stream. */
  get seq(): number {
    return Math.floor(this.seqAndFlags / FLAG_BITS);
  }

  protected get bits(): number {
    return this.seqAndFlags % FLAG_BITS;
  }

  /** A tool-call-v1 frame: only clients that activate the extension receive it. */
  get isToolFrame(): boolean {
    return (this.bits & TOOL_FRAME_EVENT) !== 0;
  }

  /** The task's terminal status update: streams end after it. */
  get terminal(): boolean {
    return (this.bits & TERMINAL_EVENT) !== 0;
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
    let json = JSON_03.get(this);
    if (json === undefined) {
      // The 0.3 serialiser writes a push-notification body, which is exactly the 0.3 stream result.
      json = v03.serialize(this.response).body;
      JSON_03.set(this, json);
    }
    return json;
  }

  /** Its SSE message on a stream: `id: <seq>`, the stream's `line`, its JSON in that version, the stream's `end`. */
  sseMessage(version: ProtocolVersion, framing: SseMessageFraming): string {
    return 'id: ' + this.seq + framing.line + this.jsonFor(version) + framing.end;
  }
}

const BRACE = 123;

/**
 * The same string, flat: JSON.stringify returns a string of pieces (a cons string) past 32
 * characters, which a retained event would keep as four to seven objects (a kept empty task's
 * four events: ~19 objects and ~450 B more than flat) and every socket write of a message holding
 * it would walk. Reading a character flattens it in place (the garbage collector then drops the
 * pieces); the read is checked (a frame's or event's JSON starts with '{', a string's with '"'),
 * so the compiler cannot drop it.
 */
export function flat(json: string, first = BRACE): string {
  if (json.charCodeAt(0) !== first) throw new Error(`expected JSON starting with ${String.fromCharCode(first)}`);
  return json;
}

/**
 * The pieces as one flat string. A `+` or a template literal makes a string of pieces (a cons
 * string) instead, and a message put together from such pieces is a tree the socket write walks
 * leaf by leaf to measure and copy it (`Buffer.byteLength` flattens it: 5 % of the server's
 * samples at one stream); `Array.join` makes a flat one. For the text a stream or a task repeats
 * in every message: made once, walked once per write.
 */
export function joined(...pieces: string[]): string {
  return pieces.join('');
}

/**
 * How one stream frames its events' SSE messages: what comes between the `id` and an event's
 * JSON (`line`: the line break, `data: ` and, for JSON-RPC, the response's opening) and after it
 * (`end`). It also keeps those joined with the constant text of the tool frames of the task it
 * follows, so a tool frame's message is put together from five pieces instead of eight (every
 * piece a string the young generation allocates, and the socket write walks).
 */
export class SseMessageFraming {
  /** The tool frames' head these were made for (a stream follows one task: made once). */
  toolHead?: string;
  /** `line`, then the tool frames' head. */
  toolLine = '';
  /** What comes between a tool frame's id part and its frame JSON, for that head (see toolIdMiddle). */
  toolMiddle = '';
  /** A tool frame's text after its frame JSON, then `end` (not the last chunk, and the last). */
  readonly toolEnd: string;
  readonly toolLastEnd: string;

  constructor(
    readonly line: string,
    readonly end: string,
  ) {
    this.toolEnd = joined(TOOL_EVENT_TAIL_JSON, end);
    this.toolLastEnd = joined(TOOL_EVENT_LAST_TAIL_JSON, end);
  }
}

const TOOL_ARTIFACT_NAME_JSON = JSON.stringify(TOOL_CALL_V1_ARTIFACT_NAME);
const TOOL_PART_TAIL_JSON = joined('"metadata":{"mimeType":', JSON.stringify(TOOL_CALL_V1_MIME_TYPE), '},"mediaType":', JSON.stringify(TOOL_CALL_V1_PART_MEDIA_TYPE), '}');
const TOOL_ARTIFACT_MIDDLE_JSON = joined(',"name":', TOOL_ARTIFACT_NAME_JSON, ',"parts":[{"data":');
/** The same, after an id part that leaves the artifact id's string open: its closing quote first. */
const TOOL_ID_CLOSING_MIDDLE_JSON = joined('"', TOOL_ARTIFACT_MIDDLE_JSON);
const TOOL_EVENT_TAIL_JSON = joined(',', TOOL_PART_TAIL_JSON, ']}}}');
/** A tool frame's artifact alone (as a snapshot lists it): the same text as in the event. */
const TOOL_ARTIFACT_OPENING_JSON = '{"artifactId":';
const TOOL_ARTIFACT_TAIL_JSON = joined(',', TOOL_PART_TAIL_JSON, ']}');
const TOOL_EVENT_LAST_TAIL_JSON = joined(',', TOOL_PART_TAIL_JSON, ']},"lastChunk":true}}');

/** What a tool call's artifact id is made of: this, then the tool call id. */
export const TOOL_ARTIFACT_ID_PREFIX = 'tool-call-';
/** The artifact id's JSON up to the tool call id. */
const TOOL_ID_OPENING_JSON = joined('"', TOOL_ARTIFACT_ID_PREFIX);
/** Where a head that leaves the artifact id's string open ends. */
const HEAD_OPENS_ID = TOOL_ID_OPENING_JSON.charCodeAt(TOOL_ID_OPENING_JSON.length - 1);

/**
 * The tool frames' head of a task (`{"artifactUpdate":{"taskId":…,"contextId":…,"artifact":{"artifactId":"tool-call-`),
 * made once per task. It leaves the artifact id's string open, so an event's id part is the
 * tool call id's text in it (toolCallIdText), for most ids the id itself: no string per tool call.
 */
export function toolFrameHead(taskId: string, contextId: string): string {
  return joined('{"artifactUpdate":{"taskId":', JSON.stringify(taskId), ',"contextId":', JSON.stringify(contextId), ',"artifact":{"artifactId":', TOOL_ID_OPENING_JSON);
}

/** A tool call id as it reads inside a JSON string: the id itself unless JSON escapes some of it. */
export function toolCallIdText(toolCallId: string): string {
  for (let i = 0; i < toolCallId.length; i++) {
    const c = toolCallId.charCodeAt(i);
    // What JSON.stringify escapes: controls, the quote, the backslash, lone surrogates (any surrogate goes that way here).
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(toolCallId).slice(1, -1);
  }
  return toolCallId;
}

/**
 * What follows a tool frame's id part in its JSON. A head made by toolFrameHead leaves the artifact
 * id's string open (its id part is the tool call id's text, toolCallIdText), so the string's closing
 * quote comes first; a head that ends at `"artifactId":` takes the whole artifact id's JSON.
 */
function toolIdMiddle(head: string): string {
  return head.charCodeAt(head.length - 1) === HEAD_OPENS_ID ? TOOL_ID_CLOSING_MIDDLE_JSON : TOOL_ARTIFACT_MIDDLE_JSON;
}

/**
 * A tool-call-v1 frame's event (the artifact update of the tool's artifact), serialised by hand:
 * the task's head (its ids), the artifact id (its id part), the frame, and constant text between
 * and after. Only the id part and the frame vary, and only those are kept: the JSON is put together
 * when read (a string of pieces the socket write copies once), so a retained event holds a
 * third of its JSON, and a block keeps only those two parts (see TaskEventBlock).
 */
export class ToolFrameEvent extends TaskEvent {
  constructor(
    seq: number,
    /**
     * `{"artifactUpdate":{"taskId":…,"contextId":…,"artifact":{"artifactId":`, the same string for
     * every frame of a task, and `"tool-call-` after it when made by toolFrameHead.
     */
    readonly head: string,
    /** The artifact id's JSON, or, after a toolFrameHead head, the tool call id's text (toolCallIdText). */
    readonly idPart: string,
    frameJson: string,
    /** A terminal phase: the update is the artifact's last chunk. */
    lastChunk: boolean,
  ) {
    super(seq, frameJson, true);
    if (lastChunk) this.seqAndFlags += LAST_CHUNK_EVENT;
  }

  /** The frame's JSON (kept where a plain event keeps its whole JSON). */
  get frameJson(): string {
    return this.text;
  }

  /** A terminal phase: the update is the artifact's last chunk. */
  get lastChunk(): boolean {
    return (this.bits & LAST_CHUNK_EVENT) !== 0;
  }

  override get json(): string {
    return this.head + this.idPart + toolIdMiddle(this.head) + this.frameJson + (this.lastChunk ? TOOL_EVENT_LAST_TAIL_JSON : TOOL_EVENT_TAIL_JSON);
  }

  /** The same message as TaskEvent's, from the stream's joined pieces (1.0; 0.3 as any event). */
  override sseMessage(version: ProtocolVersion, framing: SseMessageFraming): string {
    if (version !== '1.0') return super.sseMessage(version, framing);
    if (framing.toolHead !== this.head) {
      framing.toolHead = this.head;
      framing.toolLine = joined(framing.line, this.head);
      framing.toolMiddle = toolIdMiddle(this.head);
    }
    return 'id: ' + this.seq + framing.toolLine + this.idPart + framing.toolMiddle + this.frameJson + (this.lastChunk ? framing.toolLastEnd : framing.toolEnd);
  }

  override get weight(): number {
    return toolFrameEventWeight(this.head, this.idPart.length + this.frameJson.length, this.lastChunk);
  }

  override get jsonBytes(): number {
    return Buffer.byteLength(this.head) + Buffer.byteLength(this.idPart) + Buffer.byteLength(this.frameJson) + toolFrameEventWeight(this.head, 0, this.lastChunk) - this.head.length;
  }

  /** Its artifact's JSON (`{"artifactId":…}`, as the event holds it) in UTF-8 bytes. */
  get artifactJsonBytes(): number {
    return this.artifactOpening.length + Buffer.byteLength(this.idPart) + toolIdMiddle(this.head).length + Buffer.byteLength(this.frameJson) + TOOL_ARTIFACT_TAIL_JSON.length;
  }

  /** Writes its artifact's JSON into `buffer` at `offset`, piece by piece (a snapshot's); returns the offset after it. */
  writeArtifactJson(buffer: Buffer, offset: number): number {
    offset += buffer.write(this.artifactOpening, offset, 'latin1');
    offset += buffer.write(this.idPart, offset);
    offset += buffer.write(toolIdMiddle(this.head), offset, 'latin1');
    offset += buffer.write(this.frameJson, offset);
    return offset + buffer.write(TOOL_ARTIFACT_TAIL_JSON, offset, 'latin1');
  }

  /** Piece by piece: the joined JSON (a string the size of the frame) is never made. */
  override writeJson(buffer: Buffer, offset: number): number {
    offset += buffer.write(this.head, offset);
    offset += buffer.write(this.idPart, offset);
    offset += buffer.write(toolIdMiddle(this.head), offset, 'latin1');
    offset += buffer.write(this.frameJson, offset);
    return offset + buffer.write(this.lastChunk ? TOOL_EVENT_LAST_TAIL_JSON : TOOL_EVENT_TAIL_JSON, offset, 'latin1');
  }

  /** The artifact's JSON up to its id part (the artifact id's string opened too, after a toolFrameHead head). */
  private get artifactOpening(): string {
    return toolIdMiddle(this.head) === TOOL_ID_CLOSING_MIDDLE_JSON ? TOOL_ARTIFACT_OPENING_JSON + TOOL_ID_OPENING_JSON : TOOL_ARTIFACT_OPENING_JSON;
  }
}

/** A tool frame event's weight (its JSON's length) from its head, the length of its id part and frame JSON, and whether it is a last chunk. */
export function toolFrameEventWeight(head: string, varying: number, lastChunk: boolean): number {
  return head.length + varying + toolIdMiddle(head).length + (lastChunk ? TOOL_EVENT_LAST_TAIL_JSON : TOOL_EVENT_TAIL_JSON).length;
}

const TOOL_FRAME = 1;
const TERMINAL = 2;
/** A ToolFrameEvent kept as its id part and frame (`split` says where the one ends). */
const COMPACT = 4;
const FLAGS = 8;
/** Slots in each chunk of an open block's list (two per event). */
const CHUNK = 128;
/** An open block's events' last-chunk bits: this many in each number of its list (small integers). */
const LAST_BITS = 30;

/**
 * The events leaving a task's hot ones, kept as they come (see EventPacking.open): of a tool
 * frame's event only its id part and its frame's JSON (the strings the event already
 * holds: no copy), of any other its flags and its JSON; no event object. An event a live stream
 * has taken then dies young instead of being promoted with its running task, and a kept task is
 * its strings and a few lists, not an object per event. Once full it is closed into a
 * TaskEventBlock (one string for all of it).
 */
export class OpenTaskEventBlock extends OpenEventBlock<TaskEvent> {
  addedWeight = 0;
  /**
   * Two per event: a compact event's id part and frame JSON; any other's flags
   * (TOOL_FRAME, TERMINAL: a number, never a string) and its JSON; in chunks of CHUNK made at
   * their full size. Every slot of a running task's lists is promoted with it, and a list grown
   * by pushes is promoted again each time it grows (about three slots for each it ends with).
   */
  private chunks: (string | number)[][] = [];
  /** Whether a compact event is its artifact's last chunk: bit i % LAST_BITS of entry i / LAST_BITS. */
  private lasts: number[] = [];
  /** The tool frames' head (one task, one head). */
  private head: string | undefined;

  constructor(firstSeq: number) {
    super(firstSeq, 0);
  }

  add(event: TaskEvent): void {
    const i = this.count;
    if (i % LAST_BITS === 0) this.lasts.push(0);
    const at = (2 * i) % CHUNK;
    if (at === 0) this.chunks.push(new Array<string | number>(CHUNK));
    const chunk = this.chunks[this.chunks.length - 1];
    if (event instanceof ToolFrameEvent && (this.head === undefined || this.head === event.head)) {
      this.head = event.head;
      chunk[at] = event.idPart;
      chunk[at + 1] = event.frameJson;
      if (event.lastChunk) this.lasts[(i / LAST_BITS) | 0] |= 1 << i % LAST_BITS;
    } else {
      chunk[at] = (event.isToolFrame ? TOOL_FRAME : 0) + (event.terminal ? TERMINAL : 0);
      chunk[at + 1] = event.json;
    }
    this.count = i + 1;
    this.addedWeight += event.weight;
  }

  get(seq: number): TaskEvent {
    const i = seq - this.firstSeq;
    const first = this.part(2 * i);
    const text = this.part(2 * i + 1) as string;
    if (typeof first === 'number') return new TaskEvent(seq, text, (first & TOOL_FRAME) !== 0, (first & TERMINAL) !== 0);
    return new ToolFrameEvent(seq, this.head as string, first, text, this.isLast(i));
  }

  weight(seq: number): number {
    const i = seq - this.firstSeq;
    const first = this.part(2 * i);
    const text = this.part(2 * i + 1) as string;
    return typeof first === 'number' ? text.length : toolFrameEventWeight(this.head as string, first.length + text.length, this.isLast(i));
  }

  close(): TaskEventBlock {
    const parts = new Array<string | number>(2 * this.count);
    const flags = new Array<number>(this.count);
    for (let i = 0; i < this.count; i++) {
      const first = (parts[2 * i] = this.part(2 * i));
      parts[2 * i + 1] = this.part(2 * i + 1);
      flags[i] = typeof first === 'number' ? first : COMPACT + (this.isLast(i) ? LAST : 0);
    }
    return new TaskEventBlock(this.firstSeq, parts, flags, this.head ?? '');
  }

  /** The last chunk cut to what it holds. */
  fit(): void {
    const last = this.chunks.length - 1;
    const used = 2 * this.count - last * CHUNK;
    if (last >= 0 && used < CHUNK) this.chunks[last] = this.chunks[last].slice(0, used);
  }

  private part(at: number): string | number {
    return this.chunks[(at / CHUNK) | 0][at % CHUNK];
  }

  private isLast(i: number): boolean {
    return (this.lasts[(i / LAST_BITS) | 0] & (1 << i % LAST_BITS)) !== 0;
  }
}

/** A compact event that is its artifact's last chunk, in the flags TaskEventBlock is built from. */
const LAST = 8;

/**
 * Consecutive events of one task kept as one string (their JSONs joined, or for a tool frame's
 * event only its id part and frame: a third of its JSON) and two arrays of numbers (where
 * each ends, and its flags; where a compact one's id ends, and whether it is a last chunk): a few
 * objects for the whole block instead of an event object and its string each. Reading an event
 * back slices the string (no copy), or rebuilds a tool frame's event around its slices.
 */
export class TaskEventBlock extends EventBlock<TaskEvent> {
  private readonly json: string;
  /** Per event: the end of what it keeps in `json`, times FLAGS, plus its flags. */
  private readonly ends: number[];
  /** Per compact event: the length of its id part, times 2, plus 1 for a last chunk; else 0. */
  private readonly splits: number[];

  /** From an open block's parts (two per event, see OpenTaskEventBlock) and each event's flags (COMPACT and LAST for a compact one). */
  constructor(
    firstSeq: number,
    parts: readonly (string | number)[],
    flags: readonly number[],
    /** The tool frames' head (one task, one head). */
    private readonly head: string,
  ) {
    super(firstSeq, flags.length);
    this.ends = new Array<number>(flags.length);
    this.splits = new Array<number>(flags.length);
    let end = 0;
    const texts: string[] = [];
    for (let i = 0; i < flags.length; i++) {
      const first = parts[2 * i];
      const text = parts[2 * i + 1] as string;
      const id = typeof first === 'string' ? first : '';
      texts.push(id, text);
      end += id.length + text.length;
      this.splits[i] = (flags[i] & COMPACT) === 0 ? 0 : id.length * 2 + ((flags[i] & LAST) !== 0 ? 1 : 0);
      this.ends[i] = end * FLAGS + (flags[i] & (FLAGS - 1));
    }
    this.json = texts.join('');
  }

  /** The events, packed. */
  static of(events: readonly TaskEvent[], firstSeq: number): TaskEventBlock {
    const open = new OpenTaskEventBlock(firstSeq);
    for (const event of events) open.add(event);
    return open.close();
  }

  get(seq: number): TaskEvent {
    const i = seq - this.firstSeq;
    const packed = this.ends[i];
    const start = this.startOf(i);
    const end = Math.floor(packed / FLAGS);
    if ((packed & COMPACT) === 0) return new TaskEvent(seq, this.json.slice(start, end), (packed & TOOL_FRAME) !== 0, (packed & TERMINAL) !== 0);
    const split = start + Math.floor(this.splits[i] / 2);
    return new ToolFrameEvent(seq, this.head, this.json.slice(start, split), this.json.slice(split, end), (this.splits[i] & 1) === 1);
  }

  weight(seq: number): number {
    const i = seq - this.firstSeq;
    const packed = this.ends[i];
    const kept = Math.floor(packed / FLAGS) - this.startOf(i);
    return (packed & COMPACT) === 0 ? kept : toolFrameEventWeight(this.head, kept, (this.splits[i] & 1) === 1);
  }

  private startOf(i: number): number {
    return i === 0 ? 0 : Math.floor(this.ends[i - 1] / FLAGS);
  }
}

/**
 * How a task's log keeps its events: the newest 4 as they are (what live streams take), each
 * older one at once in an open block (its strings and a number: no event object), closed into
 * one string once it holds 160 Ki characters of JSON (or 4,096 events). Retaining an object per
 * event made the young-generation GC promote every one of them with its running task, and every
 * mark-compact mark them while a finished task is kept. 4 hot ones are about what a task of the
 * 1,000-stream row appends between two scavenges (one per ~3,800 frames), so an event its
 * stream took dies young; an empty task (4 events) opens no block.
 * A closed block of tool frames keeps only their ids and frames, about a third of that JSON
 * (~52 K characters for the bench's frames), so it is not in V8's large-object space; blocks
 * sized for it were copied less but cost no less CPU (docs/performance.md, tenth and thirteenth
 * rounds).
 */
export const TASK_EVENT_PACKING: EventPacking<TaskEvent> = {
  hot: 4,
  block: 4096,
  blockWeight: 160 * 1024,
  pack: (events, firstSeq) => TaskEventBlock.of(events, firstSeq),
  open: (firstSeq) => new OpenTaskEventBlock(firstSeq),
};
