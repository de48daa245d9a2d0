/**
 * A minimal observable holder for the timeline: dispatch events, subscribe to changes, or hand
 * it a whole stream. Listeners hear only real changes (the reducer keeps identity otherwise).
 */
import { initialTimelineState, reduceTimeline, settleTimeline, type TimelineInput, type TimelineState } from './timeline.reducer';

export type TimelineListener = (state: TimelineState) => void;

export class TimelineStore {
  private state: TimelineState = initialTimelineState;
  private readonly listeners = new Set<TimelineListener>();

  getState(): TimelineState {
    return this.state;
  }

  dispatch(input: TimelineInput): TimelineState {
    return this.set(reduceTimeline(this.state, input));
  }

  private set(next: TimelineState): TimelineState {
    if (next !== this.state) {
      this.state = next;
      for (const listener of [...this.listeners]) listener(next);
    }
    return next;
  }

  /** Calls `listener` on every change; returns the unsubscribe function. */
  subscribe(listener: TimelineListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** The task ended on the client's side (stopped, gone, connection given up): see settleTimeline. */
  settle(reason: string, at = Date.now()): TimelineState {
    return this.set(settleTimeline(this.state, reason, at));
  }

  /** Back to the empty timeline (a new question), telling listeners. */
  reset(): void {
    this.state = initialTimelineState;
    for (const listener of [...this.listeners]) listener(this.state);
  }

  /** Dispatches every event of a stream (e.g. `followMessage(...)`); resolves with the final state. */
  async follow(events: AsyncIterable<TimelineInput>): Promise<TimelineState> {
    for await (const input of events) this.dispatch(input);
    return this.state;
  }
}
