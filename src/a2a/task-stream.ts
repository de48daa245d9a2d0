import { Observable } from 'rxjs';
import { TaskEvent } from './task-event';
import type { TaskListener } from './task-record';
import type { TaskView } from './store/task-store';

/** A consumer's pace: whether it takes an event now, and a call back when it does again. */
export interface StreamPace {
  ready(): boolean;
  /** Calls `callback` once the consumer can take events again; returns the function that stops waiting. */
  whenReady(callback: () => void): () => void;
}

export interface FollowOptions {
  /** Replay the events after this sequence number (Last-Event-ID); unset: a Task snapshot first. */
  after?: number;
  /** Whether tool-call-v1 frames are delivered (extension activation). */
  toolFrames: boolean;
  /** The consumer's pace; events wait in the task's log while it is busy. */
  pace?: StreamPace;
}

/** A paced stream fell so far behind that the task's log no longer holds its next events. */
export class StreamOverrunError extends Error {
  constructor(taskId: string, cursor: number) {
    super(`the stream of task ${taskId} fell behind the retained events after ${cursor}; resume with Last-Event-ID`);
    this.name = 'StreamOverrunError';
  }
}

/** Events a stream takes per event-loop turn before it lets the writer (and other requests) run. */
const EVENTS_PER_TURN = 256;

/** Where a stream's events go: an RxJS subscriber, or a writer of its own (no operator hop per event). */
export interface TaskEventSink {
  next(event: TaskEvent): void;
  error(err: unknown): void;
  complete(): void;
}

/**
 * A stream's events, to subscribe to as an Observable or to `attach` a sink to directly (the
 * JSON-RPC binding writes each event to its response from here). Attaching returns the function
 * that stops the stream; the stream also stops itself once it completes or fails.
 */
export class TaskEventStream extends Observable<TaskEvent> {
  constructor(readonly attach: (sink: TaskEventSink) => () => void) {
    super(subscribeByAttaching);
  }
}

/** A subscriber attached as a sink: one function for every stream (RxJS calls it on the stream), not a closure per stream. */
function subscribeByAttaching(this: Observable<TaskEvent>, subscriber: TaskEventSink): () => void {
  return (this as TaskEventStream).attach(subscriber);
}

/**
 * The stream pacing: one client's view of a task's events, after `after` (replay, then live)
 * or, without it or when those events are no longer retained, a Task snapshot and then the live
 * events. Completes after the terminal status. At most EVENTS_PER_TURN per event-loop turn, and
 * none while `pace` says the consumer is busy; a consumer so slow that its next events leave the
 * log gets StreamOverrunError. `streams` counts the open ones. `after` is the options' unless
 * given; `attached`, if given, runs once the stream has attached (its first events sent).
 */
export function followTask(
  task: TaskView,
  options: Omit<FollowOptions, 'after'>,
  streams: { open: number },
  after = (options as FollowOptions).after,
  attached?: () => void,
): TaskEventStream {
  return new TaskEventStream((sink) => {
    const stop = attachFollower(task, options, after, streams, sink);
    attached?.();
    return stop;
  });
}

function attachFollower(task: TaskView, options: Omit<FollowOptions, 'after'>, after: number | undefined, streams: { open: number }, sink: TaskEventSink): () => void {
  streams.open += 1;
  let cursor = after;
  if (cursor === undefined || !task.retainsAfter(cursor)) {
    cursor = task.lastSeq;
    sink.next(new TaskEvent(cursor, { payload: { $case: 'task', value: task.snapshot() } }));
  }
  const follower = new Follower(task, options, streams, sink, cursor);
  if (task.isTerminal && cursor >= task.lastSeq) {
    follower.end();
    return follower.teardown;
  }
  follower.follow();
  return follower.teardown;
}

/**
 * One stream's listener on its task: its state in fields and its calls as methods (one object
 * per stream, where closures over the same state were six and their context). What it reads for
 * every event is in its own fields, the options' too: at 1,000 streams each separate object a
 * frame passes is one more cache line to fetch.
 */
class Follower implements TaskListener {
  private ended = false;
  private budget = EVENTS_PER_TURN;
  private nextTurn?: NodeJS.Immediate = undefined;
  private stopWaiting?: () => void = undefined;
  private readonly toolFrames: boolean;
  private readonly pace: StreamPace | undefined;
  private stop?: () => void = undefined;

  constructor(
    private readonly task: TaskView,
    options: Omit<FollowOptions, 'after'>,
    private readonly streams: { open: number },
    private readonly sink: TaskEventSink,
    public cursor: number,
  ) {
    this.toolFrames = options.toolFrames;
    this.pace = options.pace;
  }

  /** Stops the stream without a word to the sink (what attaching returns). */
  readonly teardown = (): void => {
    if (this.ended) return;
    this.ended = true;
    this.stop?.();
    if (this.nextTurn) clearImmediate(this.nextTurn);
    this.stopWaiting?.();
    this.streams.open -= 1;
  };

  follow(): void {
    this.stop = this.task.follow(this);
    // The replay may have reached the terminal event already.
    if (this.ended) this.stop();
  }

  /** Ends the stream: completes it, or fails it with `err`. */
  end(err?: unknown): void {
    if (this.ended) return;
    this.teardown();
    if (err === undefined) this.sink.complete();
    else this.sink.error(err);
  }

  ready(): boolean {
    if (this.nextTurn || this.stopWaiting) return false;
    if (this.budget === 0) {
      this.nextTurn = setImmediate(() => {
        this.nextTurn = undefined;
        this.budget = EVENTS_PER_TURN;
        this.task.resume(this);
      });
      return false;
    }
    const pace = this.pace;
    if (pace && !pace.ready()) {
      this.stopWaiting = pace.whenReady(() => {
        this.stopWaiting = undefined;
        this.task.resume(this);
      });
      return false;
    }
    this.budget -= 1;
    return true;
  }

  push(event: TaskEvent): void {
    if (this.ended || (event.isToolFrame && !this.toolFrames)) return;
    this.sink.next(event);
    if (event.terminal) this.end();
  }

  overrun(): void {
    this.end(new StreamOverrunError(this.task.id, this.cursor));
  }
}
