import { StreamResponse } from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import type { ProtocolVersion } from './a2a.constants';

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
