import type Redis from 'ioredis';
import { MIN_CALL_GAP_MS } from './redis-task-appender';

/**
 * When the appenders' script calls leave, and in how many socket writes.
 *
 * A task's events go to Redis as soon as the code that made them is done (`defer`: a microtask,
 * not the next event-loop turn): a frame is delivered only once Redis acknowledged it, so
 * every wait before the call is the frame's latency, and the rest of a busy turn (other
 * streams' I/O, a burst of new requests) was a large part of it.
 *
 * The calls made together, and the next batches of appenders whose acknowledgements arrived
 * together, leave in one socket write (`cork`: the socket is corked until the promise
 * callbacks queued so far have run): on loopback each write costs the instance tens of µs of
 * CPU and wakes Redis once more. The commands, their order and their replies are unchanged.
 */
export class RedisTurnWrites {
  private readonly due: (() => void)[] = [];
  private readonly waiting: (() => void)[] = [];
  private corkedStream?: Redis['stream'];

  constructor(private readonly redis: Redis) {}

  /** Runs `send` once the current code and the promise callbacks queued so far are done, with the other sends due then. */
  defer(send: () => void): void {
    this.due.push(send);
    if (this.due.length > 1) return;
    queueMicrotask(this.runDue);
  }

  // The microtasks' functions are made once, not per turn (each was a closure of ~56 B per frame).
  private readonly runDue = (): void => {
    for (const due of this.due.splice(0)) due();
  };

  /**
   * Runs `send` once MIN_CALL_GAP_MS have passed, with the other sends waiting for it then: one
   * timer for all the tasks that write fast, and their calls leave in one write.
   */
  later(send: () => void): void {
    this.waiting.push(send);
    if (this.waiting.length > 1) return;
    setTimeout(() => {
      for (const waited of this.waiting.splice(0)) waited();
    }, MIN_CALL_GAP_MS);
  }

  /**
   * Corks the socket until this turn's queued promise callbacks are done: what is written
   * meanwhile goes out in one write (acknowledgements that arrive together make their appenders
   * send their next batches together, too). Call it right before issuing a command.
   */
  cork(): void {
    if (this.corkedStream || this.redis.status !== 'ready') return;
    const stream = this.redis.stream;
    stream.cork();
    this.corkedStream = stream;
    queueMicrotask(this.uncork);
  }

  private readonly uncork = (): void => {
    const stream = this.corkedStream;
    this.corkedStream = undefined;
    stream?.uncork();
  };
}
