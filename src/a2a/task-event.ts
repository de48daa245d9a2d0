import { StreamResponse } from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
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
  readonly json: string;
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
    this.json = typeof response === 'string' ? response : JSON.stringify(StreamResponse.toJSON(response));
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

const TOOL_FRAME = 1;
const TERMINAL = 2;

/**
 * Consecutive events of one task kept as one string (their JSONs joined) and one array of
 * numbers (where each ends, and its flags): two objects for the whole block instead of an event
 * object and its string each. Reading an event back slices the string (no copy).
 */
export class TaskEventBlock extends EventBlock<TaskEvent> {
  private readonly json: string;
  /** Per event: the end of its JSON in `json`, times 4, plus its flags (TOOL_FRAME, TERMINAL). */
  private readonly ends: number[];

  constructor(events: readonly TaskEvent[], firstSeq: number) {
    super(firstSeq, events.length);
    this.json = events.map((event) => event.json).join('');
    this.ends = new Array<number>(events.length);
    let end = 0;
    for (let i = 0; i < events.length; i++) {
      end += events[i].json.length;
      this.ends[i] = end * 4 + (events[i].isToolFrame ? TOOL_FRAME : 0) + (events[i].terminal ? TERMINAL : 0);
    }
  }

  get(seq: number): TaskEvent {
    const i = seq - this.firstSeq;
    const packed = this.ends[i];
    return new TaskEvent(seq, this.json.slice(this.startOf(i), Math.floor(packed / 4)), (packed & TOOL_FRAME) !== 0, (packed & TERMINAL) !== 0);
  }

  weight(seq: number): number {
    const i = seq - this.firstSeq;
    return Math.floor(this.ends[i] / 4) - this.startOf(i);
  }

  private startOf(i: number): number {
    return i === 0 ? 0 : Math.floor(this.ends[i - 1] / 4);
  }
}

/**
 * How a task's log keeps its events: the newest 64 as they are (what live streams take), older
 * ones packed once they hold 160 Ki characters of JSON (or 4,096 events). Retaining
 * maxEventsPerTask (10,000) events as objects made the young-generation GC copy and promote
 * every one of them; a block of that size is allocated in V8's large-object space, which that
 * GC promotes without copying.
 */
export const TASK_EVENT_PACKING: EventPacking<TaskEvent> = {
  hot: 64,
  block: 4096,
  blockWeight: 160 * 1024,
  pack: (events, firstSeq) => new TaskEventBlock(events, firstSeq),
};
