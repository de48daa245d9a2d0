import type Redis from 'ioredis';
import { MIN_CALL_GAP_MS } from './redis-task-appender';
import { emptiedForReuse } from './reused-list';

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
  /**
   * The sends due (and those waiting for the gap), and an empty list each that takes their place
   * while they run: splice(0) made a new list per turn and left the old one without a backing
   * store, which the next turn's push grew again (~0.2 kB of heap per turn).
   */
  private due: (() => void)[] = [];
  private dueSpare: (() => void)[] = [];
  private waiting: (() => void)[] = [];
  private waitingSpare: (() => void)[] = [];
  private corkedStream?: Redis['stream'];

  constructor(private readonly redis: Redis) {}

  /** Runs `send` once the current code and the promise callbacks queued so far are done, with the other sends due then. */
  defer(send: () => void): void {
    this.due.push(send);
    if (this.due.length > 1) return;
    afterThisCode(this.runDue);
  }

  // The microtasks' functions are made once, not per turn (each was a closure of ~56 B per frame).
  private readonly runDue = (): void => {
    const due = this.due;
    this.due = this.dueSpare;
    this.dueSpare = due;
    runAll(due);
  };

  /**
   * Runs `send` once MIN_CALL_GAP_MS have passed, with the other sends waiting for it then: one
   * timer for all the tasks that write fast, and their calls leave in one write.
   */
  later(send: () => void): void {
    this.waiting.push(send);
    if (this.waiting.length > 1) return;
    setTimeout(this.runWaiting, MIN_CALL_GAP_MS);
  }

  private readonly runWaiting = (): void => {
    const waiting = this.waiting;
    this.waiting = this.waitingSpare;
    this.waitingSpare = waiting;
    runAll(waiting);
  };

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
    afterThisCode(this.uncork);
  }

  private readonly uncork = (): void => {
    const stream = this.corkedStream;
    this.corkedStream = undefined;
    stream?.uncork();
  };
}

const RESOLVED = Promise.resolve();

/**
 * Runs `run` once the current code and the promise callbacks queued so far are done: a microtask,
 * as queueMicrotask queues it, in the same queue and order, but as a callback of a promise that is
 * resolved already, not through queueMicrotask's async resource and bound function (~250 against
 * ~100 B of heap per call, measured alone; two per turn).
 */
function afterThisCode(run: () => void): void {
  void RESOLVED.then(run);
}

/** Runs the sends in `list` (new ones go to the list that took its place), then empties it in place for the next turn. */
function runAll(list: (() => void)[]): void {
  try {
    for (let i = 0; i < list.length; i++) list[i]();
  } finally {
    emptiedForReuse(list);
  }
}
