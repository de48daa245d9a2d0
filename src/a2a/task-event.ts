import { isAscii } from 'node:buffer';
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
 * piece a string the young generation allocates, and the socket write walks). The stream's
 * writer keeps these fields itself (sse-framing.ts ResponseWriter.frame): one object less per
 * stream on every event's path.
 */
export interface SseMessageFraming {
  /** The tool frames' head these were made for (a stream follows one task: made once). */
  toolHead?: string;
  /** `line`, then the tool frames' head. */
  toolLine: string;
  /** What comes between a tool frame's id part and its frame JSON, for that head (see toolIdMiddle). */
  toolMiddle: string;
  /** A tool frame's text after its frame JSON, then `end` (not the last chunk, and the last): see toolEventEnd. */
  readonly toolEnd: string;
  readonly toolLastEnd: string;
  readonly line: string;
  readonly end: string;
}

/** A framing of its own, for code that frames messages without a response writer (specs, bench probes). */
export function sseMessageFraming(line: string, end: string): SseMessageFraming {
  return { toolLine: '', toolMiddle: '', toolEnd: toolEventEnd(end), toolLastEnd: toolEventEnd(end, true), line, end };
}

/** A tool frame's text after its frame JSON, then a stream's `end`: SseMessageFraming's toolEnd, or toolLastEnd for the last chunk. */
export function toolEventEnd(end: string, lastChunk = false): string {
  return joined(lastChunk ? TOOL_EVENT_LAST_TAIL_JSON : TOOL_EVENT_TAIL_JSON, end);
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
/** A ToolFrameEvent kept as its frame (and, with SPLIT, its id part before it). */
const COMPACT = 4;
/** A compact event that is its artifact's last chunk. */
const LAST = 8;
/** A compact event whose id part is kept before its frame (its frame JSON does not give it). */
const SPLIT = 16;
const FLAGS = 32;
/** Slots in each chunk of an open block's list (one per event). */
const CHUNK = 128;
/** An open block's marks per event (LAST_MARK, SIDE_MARK), and how many events share one number of its list (small integers). */
const MARK_BITS = 2;
const MARKS_PER = 15;
const LAST_MARK = 1;
const SIDE_MARK = 2;

/** An open block's chunk before its first event (one frozen list for all of them). */
const NO_CHUNK = Object.freeze([]) as unknown as string[];

/** How a tool frame's JSON starts: its tool call id first (the wire order, see tool-call-v1.ts). */
const FRAME_ID_OPENING = '{"toolCallId":"';
/** Where the tool call id's text starts in a frame's JSON. */
const FRAME_ID_AT = FRAME_ID_OPENING.length;

/** Where the JSON string whose text starts at `from` ends (its closing quote), or -1. */
function stringEnd(json: string, from: number): number {
  for (let i = from; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22) return i;
    // An escape: the character after it cannot end the string.
    if (c === 0x5c) i += 1;
  }
  return -1;
}

/**
 * Whether a tool frame's event's id part reads back from its frame JSON: the frame names its
 * tool call id first, and that string's text is the id part (a toolFrameHead head's). Then a
 * block keeps the frame only: the id's characters once, and no slot or length for them.
 */
function idInFrame(idPart: string, frameJson: string): boolean {
  // Most id parts have nothing escaped: compared in place (frameNamesId, about half the time of
  // the two startsWith and the scan); one with escapes is checked the slower way.
  if (frameNamesId(frameJson, idPart)) return true;
  return frameJson.startsWith(FRAME_ID_OPENING) && frameJson.startsWith(idPart, FRAME_ID_AT) && stringEnd(frameJson, FRAME_ID_AT) === FRAME_ID_AT + idPart.length;
}

/** The same as stringEnd, in bytes of ASCII JSON. */
function bytesStringEnd(bytes: Buffer, from: number): number {
  for (let i = from; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === 0x22) return i;
    if (c === 0x5c) i += 1;
  }
  return -1;
}

/**
 * The pieces (`length` characters in all) as bytes outside the JS heap, one per character, or
 * undefined when one of them is not ASCII. A closed block lives until its log drops it (in a
 * task of 30,000 calls, ~10,000 events: past two scavenges), so a string of it is copied by the
 * young generation and promoted; bytes in a Buffer are not copied (only its small wrapper is).
 */
function asciiBytes(pieces: readonly string[], length: number, spare: Buffer | undefined): Buffer | undefined {
  // A dropped block's room is taken over when it fits (a long task's blocks come and go at about the same size): no new
  // memory outside the heap per block, which V8 counts towards starting a mark-compact until one frees the old block's.
  // Not a room much larger than the block: what a kept block holds stays within an eighth of its text (and 4 KiB).
  const room = spare?.buffer;
  const fits = room !== undefined && room.byteLength >= length && room.byteLength <= roomFor(length) + (length >> 3);
  const bytes = Buffer.from(fits ? room : Buffer.allocUnsafeSlow(roomFor(length)).buffer, 0, length);
  let at = 0;
  for (const piece of pieces) {
    // A piece that is not ASCII takes more bytes than characters, or is cut short at the end with bytes above 127 written (isAscii).
    const written = bytes.write(piece, at, 'utf8');
    if (written !== piece.length) return undefined;
    at += written;
  }
  return isAscii(bytes) ? bytes : undefined;
}

/** A block's bytes rounded up, so that a later block of about the same size fits in them. */
function roomFor(length: number): number {
  return Math.ceil((length + 1) / 4096) * 4096;
}

/** The id part of a frame at `start` in `json` whose id is in it (idInFrame). */
export function idFromFrame(json: string, start = 0): string {
  return json.slice(start + FRAME_ID_AT, idEndInFrame(json, start));
}

/** Where the id part of a frame at `start` in `json` whose id is in it (idInFrame) ends. */
export function idEndInFrame(json: string, start = 0): number {
  return stringEnd(json, start + FRAME_ID_AT);
}

/** Where a tool frame's id part starts in its JSON (when it is in it: idInFrame). */
export const FRAME_ID_START = FRAME_ID_AT;

/**
 * Whether `id` is the whole text of the JSON string at FRAME_ID_START of a tool frame's JSON
 * (where a frame names its tool call id first), with nothing JSON escapes in it: then the id
 * reads back from the frame (idFromFrame, idEndInFrame). A quote or backslash in that text
 * never matches (an id holding `","` would otherwise match the start of another id's frame).
 * Compares in place, character by character (no string made; `startsWith` at an offset costs
 * about three times as much here).
 */
export function frameNamesId(frameJson: string, id: string): boolean {
  if (frameJson.charCodeAt(FRAME_ID_AT + id.length) !== 0x22) return false;
  for (let i = 0; i < id.length; i++) {
    const c = frameJson.charCodeAt(FRAME_ID_AT + i);
    if (c !== id.charCodeAt(i) || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** The index in `pairs` (index, value, index, value…, by index) of the value for `index`. */
function pairAt(pairs: readonly (string | number)[], index: number): number {
  let lo = 0;
  let hi = pairs.length / 2 - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((pairs[2 * mid] as number) < index) lo = mid + 1;
    else hi = mid;
  }
  return 2 * lo + 1;
}

/**
 * The events leaving a task's hot ones, kept as they come (see EventPacking.open): one string
 * each, no event object and no copy. Of a tool frame's event that is its frame's JSON: the
 * id part reads back from it (idInFrame), else it is kept aside. Any other event keeps its JSON
 * and, aside, its flags. An event a live stream has taken then dies young instead of being
 * promoted with its running task, and a kept task is its strings and a few lists, not an
 * object per event. Once full it is closed into a TaskEventBlock (one string for all of it).
 */
export class OpenTaskEventBlock extends OpenEventBlock<TaskEvent> {
  addedWeight = 0;
  /**
   * One slot per event (a tool frame's frame JSON, any other's JSON) in chunks of CHUNK made at
   * their full size. Every slot of a running task's lists is promoted with it, and a list grown
   * by pushes is promoted again each time it grows (about three slots for each it ends with).
   */
  private chunks: string[][] = [];
  /**
   * The last of `chunks`, the one `add` writes: read from here, not through the list (at 1,000
   * streams every object a frame reads is a first touch of a cold task's: the list and its store
   * are two).
   */
  private chunk: string[] = NO_CHUNK;
  /** Per event MARK_BITS: LAST_MARK (its artifact's last chunk), SIDE_MARK (it has an entry in `side`); MARKS_PER events a number. */
  private marks: number[] = [];
  /** The marks of the events after those `marks` holds (fewer than MARKS_PER): pushed once complete, so `add` writes the list once per MARKS_PER events. */
  private word = 0;
  /** The events with SIDE_MARK, by index: a tool frame's id part, any other event's flags (TOOL_FRAME, TERMINAL); none for most blocks. */
  private side: (string | number)[] | undefined;
  /** The tool frames' head (one task, one head). */
  private head: string | undefined;

  constructor(firstSeq: number) {
    super(firstSeq, 0);
  }

  add(event: TaskEvent): void {
    const i = this.count;
    const at = i % CHUNK;
    if (at === 0) this.chunks.push((this.chunk = new Array<string>(CHUNK)));
    const chunk = this.chunk;
    let mark: number;
    if (event instanceof ToolFrameEvent && (this.head === undefined || this.head === event.head)) {
      this.head = event.head;
      const text = (chunk[at] = event.frameJson);
      mark = event.lastChunk ? LAST_MARK : 0;
      if (!idInFrame(event.idPart, text)) {
        mark += SIDE_MARK;
        (this.side ??= []).push(i, event.idPart);
      }
    } else {
      chunk[at] = event.json;
      mark = SIDE_MARK;
      (this.side ??= []).push(i, (event.isToolFrame ? TOOL_FRAME : 0) + (event.terminal ? TERMINAL : 0));
    }
    const place = i % MARKS_PER;
    if (mark !== 0) this.word |= mark << (MARK_BITS * place);
    if (place === MARKS_PER - 1) {
      this.marks.push(this.word);
      this.word = 0;
    }
    this.count = i + 1;
    this.addedWeight += event.weight;
  }

  get(seq: number): TaskEvent {
    const i = seq - this.firstSeq;
    const text = this.text(i);
    const mark = this.mark(i);
    if ((mark & SIDE_MARK) === 0) return new ToolFrameEvent(seq, this.head as string, idFromFrame(text, 0), text, (mark & LAST_MARK) !== 0);
    const aside = this.aside(i);
    if (typeof aside === 'number') return new TaskEvent(seq, text, (aside & TOOL_FRAME) !== 0, (aside & TERMINAL) !== 0);
    return new ToolFrameEvent(seq, this.head as string, aside, text, (mark & LAST_MARK) !== 0);
  }

  weight(seq: number): number {
    const i = seq - this.firstSeq;
    const text = this.text(i);
    const mark = this.mark(i);
    const last = (mark & LAST_MARK) !== 0;
    if ((mark & SIDE_MARK) === 0) return toolFrameEventWeight(this.head as string, stringEnd(text, FRAME_ID_AT) - FRAME_ID_AT + text.length, last);
    const aside = this.aside(i);
    return typeof aside === 'number' ? text.length : toolFrameEventWeight(this.head as string, aside.length + text.length, last);
  }

  close(spare?: EventBlock<TaskEvent>): TaskEventBlock {
    const count = this.count;
    const side = this.side ?? [];
    let ids = 0;
    for (let s = 1; s < side.length; s += 2) if (typeof side[s] === 'string') ids += 1;
    // Made at their full size: no list grown by pushes, and no copy of the parts but the joined one.
    const texts = new Array<string>(count + ids);
    const ends = new Array<number>(count);
    let splits: number[] | undefined;
    let end = 0;
    let p = 0;
    let s = 1;
    for (let i = 0; i < count; i++) {
      const text = this.text(i);
      const mark = this.mark(i);
      let bits = COMPACT + ((mark & LAST_MARK) !== 0 ? LAST : 0);
      if ((mark & SIDE_MARK) !== 0) {
        // The side entries are in index order: the next one is this event's.
        const aside = side[s];
        s += 2;
        if (typeof aside === 'number') bits = aside;
        else {
          texts[p++] = aside;
          end += aside.length;
          (splits ??= []).push(i, aside.length);
          bits += SPLIT;
        }
      }
      texts[p++] = text;
      end += text.length;
      ends[i] = end * FLAGS + bits;
    }
    return new TaskEventBlock(this.firstSeq, asciiBytes(texts, end, spare instanceof TaskEventBlock ? spare.bytes : undefined) ?? texts.join(''), ends, splits, this.head ?? '');
  }

  /** The last chunk cut to what it holds. */
  fit(): void {
    const last = this.chunks.length - 1;
    const used = this.count - last * CHUNK;
    if (last >= 0 && used < CHUNK) this.chunks[last] = this.chunk = this.chunks[last].slice(0, used);
  }

  private text(i: number): string {
    return this.chunks[(i / CHUNK) | 0][i % CHUNK];
  }

  private mark(i: number): number {
    const at = (i / MARKS_PER) | 0;
    const word = at < this.marks.length ? this.marks[at] : this.word;
    return (word >> (MARK_BITS * (i % MARKS_PER))) & (LAST_MARK | SIDE_MARK);
  }

  private aside(i: number): string | number {
    const side = this.side as (string | number)[];
    return side[pairAt(side, i)];
  }
}

/**
 * Consecutive events of one task kept as one string (their JSONs joined, or for a tool frame's
 * event only its frame, a third of its JSON, with its id part before it when the frame does not
 * give it) and an array of numbers (where each ends, and its flags): a few objects for the
 * whole block instead of an event object and its string each. Reading an event back slices the
 * string (no copy), or rebuilds a tool frame's event around its slices.
 */
export class TaskEventBlock extends EventBlock<TaskEvent> {
  constructor(
    firstSeq: number,
    /** The kept text: bytes (one per character) when it is all ASCII (see asciiBytes), else a string. */
    private readonly json: string | Buffer,
    /** Per event: the end of what it keeps in `json`, times FLAGS, plus its flags (TOOL_FRAME and TERMINAL, or COMPACT, LAST and SPLIT). */
    private readonly ends: number[],
    /** Per SPLIT event, by index: its index and the length of its id part (undefined when there is none). */
    private readonly splits: number[] | undefined,
    /** The tool frames' head (one task, one head). */
    private readonly head: string,
  ) {
    super(firstSeq, ends.length);
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
    // By remainder, not `&`: an end past 2^26 makes a number past 32 bits.
    const bits = packed % FLAGS;
    if ((bits & COMPACT) === 0) return new TaskEvent(seq, this.slice(start, end), (bits & TOOL_FRAME) !== 0, (bits & TERMINAL) !== 0);
    const last = (bits & LAST) !== 0;
    if ((bits & SPLIT) === 0) {
      const frameJson = this.slice(start, end);
      return new ToolFrameEvent(seq, this.head, idFromFrame(frameJson, 0), frameJson, last);
    }
    const split = start + this.splitOf(i);
    return new ToolFrameEvent(seq, this.head, this.slice(start, split), this.slice(split, end), last);
  }

  weight(seq: number): number {
    const i = seq - this.firstSeq;
    const packed = this.ends[i];
    const start = this.startOf(i);
    const kept = Math.floor(packed / FLAGS) - start;
    const bits = packed % FLAGS;
    if ((bits & COMPACT) === 0) return kept;
    const json = this.json;
    const id = (bits & SPLIT) !== 0 ? 0 : (typeof json === 'string' ? stringEnd(json, start + FRAME_ID_AT) : bytesStringEnd(json, start + FRAME_ID_AT)) - start - FRAME_ID_AT;
    return toolFrameEventWeight(this.head, kept + id, (bits & LAST) !== 0);
  }

  /** Its bytes, when it keeps them (see asciiBytes). */
  get bytes(): Buffer | undefined {
    return typeof this.json === 'string' ? undefined : this.json;
  }

  /** The kept text from `start` to `end`: a slice of the string, or a string decoded from the bytes (a copy: no read keeps the block alive). */
  private slice(start: number, end: number): string {
    const json = this.json;
    return typeof json === 'string' ? json.slice(start, end) : json.toString('latin1', start, end);
  }

  private startOf(i: number): number {
    return i === 0 ? 0 : Math.floor(this.ends[i - 1] / FLAGS);
  }

  private splitOf(i: number): number {
    const splits = this.splits as number[];
    return splits[pairAt(splits, i)];
  }
}

/**
 * How a task's log keeps its events: the newest 4 as they are (what live streams take), each
 * older one at once in an open block (a string: no event object), closed into
 * one string once it holds 160 Ki characters of JSON (or 4,096 events). Retaining an object per
 * event made the young-generation GC promote every one of them with its running task, and every
 * mark-compact mark them while a finished task is kept. 4 hot ones are about what a task of the
 * 1,000-stream row appends between two scavenges (one per ~3,800 frames), so an event its
 * stream took dies young; an empty task (4 events) opens no block.
 * A closed block of tool frames keeps only their frames (their ids read back from them), about
 * a third of that JSON (~48 K characters for the bench's frames), so it is not in V8's
 * large-object space; blocks sized for it were copied less but cost no less CPU
 * (docs/performance.md, tenth and thirteenth rounds).
 */
export const TASK_EVENT_PACKING: EventPacking<TaskEvent> = {
  hot: 4,
  block: 4096,
  blockWeight: 160 * 1024,
  pack: (events, firstSeq) => TaskEventBlock.of(events, firstSeq),
  open: (firstSeq) => new OpenTaskEventBlock(firstSeq),
};
