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

/**
 * The stream pacing: one client's view of a task's events, after `after` (replay, then live)
 * or, without it or when those events are no longer retained, a Task snapshot and then the live
 * events. Completes after the terminal status. At most EVENTS_PER_TURN per event-loop turn, and
 * none while `pace` says the consumer is busy; a consumer so slow that its next events leave the
 * log gets StreamOverrunError. `streams` counts the open ones.
 */
export function followTask(task: TaskView, options: FollowOptions, streams: { open: number }): Observable<TaskEvent> {
  return new Observable<TaskEvent>((subscriber) => {
    streams.open += 1;
    let cursor = options.after;
    if (cursor === undefined || !task.retainsAfter(cursor)) {
      cursor = task.lastSeq;
      subscriber.next(new TaskEvent(cursor, { payload: { $case: 'task', value: task.snapshot() } }));
    }
    let budget = EVENTS_PER_TURN;
    let nextTurn: NodeJS.Immediate | undefined;
    let stopWaiting: (() => void) | undefined;
    const listener: TaskListener = {
      cursor,
      ready: () => {
        if (nextTurn || stopWaiting) return false;
        if (budget === 0) {
          nextTurn = setImmediate(() => {
            nextTurn = undefined;
            budget = EVENTS_PER_TURN;
            task.resume(listener);
          });
          return false;
        }
        if (options.pace && !options.pace.ready()) {
          stopWaiting = options.pace.whenReady(() => {
            stopWaiting = undefined;
            task.resume(listener);
          });
          return false;
        }
        budget -= 1;
        return true;
      },
      push: (event) => {
        if (event.isToolFrame && !options.toolFrames) return;
        subscriber.next(event);
        if (event.terminal) subscriber.complete();
      },
      overrun: () => subscriber.error(new StreamOverrunError(task.id, listener.cursor)),
    };
    const stop = task.isTerminal && cursor >= task.lastSeq ? undefined : task.follow(listener);
    if (!stop) subscriber.complete();
    return () => {
      stop?.();
      if (nextTurn) clearImmediate(nextTurn);
      stopWaiting?.();
      streams.open -= 1;
    };
  });
}
