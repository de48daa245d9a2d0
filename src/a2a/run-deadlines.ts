/**
 * The run deadlines of the tasks an instance writes, kept by one timer instead of one per task:
 * every task gets the same `runDeadlineMs`, so deadlines come in the order tasks start, and the
 * timer waits for the soonest one. A task that settles is not taken out (no timer to clear, no
 * search): its entry is skipped when its time comes, and entries of settled tasks are dropped
 * once they outnumber those of running ones. A timer per task cost a Timeout, and a timer list
 * of Node's made and dropped again for every task that ran alone.
 */
export class RunDeadlines {
  /** Task ids and their deadlines (`performance.now()` ms: a monotonic clock, as timers use), in start order from `head` on. */
  private ids: string[] = [];
  private ats: number[] = [];
  private head = 0;
  /** Entries whose task has not been reported settled: what compaction keeps. */
  private running = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly deadlineMs: number,
    /** Whether the task is still running (its entry counts). */
    private readonly isRunning: (id: string) => boolean,
    /** The task ran past its deadline. */
    private readonly overrun: (id: string) => void,
  ) {}

  /** A task that starts now. */
  add(id: string): void {
    this.ids.push(id);
    this.ats.push(performance.now() + this.deadlineMs);
    this.running += 1;
    if (this.timer === undefined) this.arm();
  }

  /** A task that settled before its deadline (its entry stays until passed or compacted). */
  settled(): void {
    this.running -= 1;
    const pending = this.ids.length - this.head;
    if (pending >= 2 * this.running + 1024) this.compact();
  }

  /** Entries kept, a settled task's included until it is passed or compacted away. */
  get size(): number {
    return this.ids.length - this.head;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    while (this.head < this.ids.length && !this.isRunning(this.ids[this.head])) this.head += 1;
    if (this.head === this.ids.length) {
      this.ids = [];
      this.ats = [];
      this.head = 0;
      return;
    }
    this.timer = setTimeout(this.expire, Math.max(0, this.ats[this.head] - performance.now()));
    this.timer.unref();
  }

  private readonly expire = (): void => {
    this.timer = undefined;
    const now = performance.now();
    while (this.head < this.ids.length && this.ats[this.head] <= now) {
      const id = this.ids[this.head];
      this.head += 1;
      if (this.isRunning(id)) this.overrun(id);
    }
    this.arm();
  };

  /** Keeps the entries of running tasks only. */
  private compact(): void {
    const ids: string[] = [];
    const ats: number[] = [];
    for (let i = this.head; i < this.ids.length; i++) {
      if (!this.isRunning(this.ids[i])) continue;
      ids.push(this.ids[i]);
      ats.push(this.ats[i]);
    }
    this.ids = ids;
    this.ats = ats;
    this.head = 0;
  }
}
