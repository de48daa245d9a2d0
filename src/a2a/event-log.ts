/**
 * A task's ordered event log: sequence numbers start at 1 and grow by one per event. It keeps
 * the newest `capacity` events, and beyond them those a reader still needs (`keepAfter`), up to
 * twice the capacity. Appending and reading by sequence number are O(1) (amortised: the dropped
 * head is compacted away once it outweighs the live part).
 */
export class EventLog<T> {
  private items: (T | undefined)[] = [];
  /** Index in `items` of the oldest retained event. */
  private start = 0;
  /** Sequence number of `items[start]`. */
  private first = 1;

  /** Sum of the retained events' weights. */
  private weight = 0;

  constructor(
    private readonly capacity: number,
    /** An event's weight (e.g. its bytes); the log keeps the sum over what it retains. */
    private readonly weigh?: (event: T) => number,
    /** Sequence number of the first event appended (a log that continues one kept elsewhere). */
    firstSeq = 1,
  ) {
    this.first = firstSeq;
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`EventLog capacity must be a positive integer, got ${capacity}`);
  }

  /** The retained events' total weight (0 without a `weigh` function). */
  get bytes(): number {
    return this.weight;
  }

  /** Sequence number of the newest event, 0 while empty. */
  get lastSeq(): number {
    return this.first + this.size - 1;
  }

  /** Sequence number of the oldest retained event (lastSeq + 1 while empty). */
  get firstSeq(): number {
    return this.first;
  }

  get size(): number {
    return this.items.length - this.start;
  }

  /** The sequence number the next event gets. */
  get nextSeq(): number {
    return this.lastSeq + 1;
  }

  /** Appends the event numbered `nextSeq`, then trims to capacity (see `trim`). */
  append(event: T, keepAfter = Number.POSITIVE_INFINITY): void {
    this.items.push(event);
    if (this.weigh) this.weight += this.weigh(event);
    this.trim(keepAfter);
  }

  /** Drops the oldest events past capacity, but none numbered above `keepAfter` until twice the capacity. */
  trim(keepAfter = Number.POSITIVE_INFINITY): void {
    while (this.size > this.capacity && (this.first <= keepAfter || this.size > 2 * this.capacity)) this.dropOldest();
  }

  /** The event with this sequence number, if retained. */
  get(seq: number): T | undefined {
    if (!Number.isInteger(seq) || seq < this.first || seq > this.lastSeq) return undefined;
    return this.items[this.start + seq - this.first];
  }

  /** Whether every event after `seq` is still here to be replayed. */
  retainsAfter(seq: number): boolean {
    return seq >= this.first - 1;
  }

  private dropOldest(): void {
    const dropped = this.items[this.start];
    if (this.weigh && dropped !== undefined) this.weight -= this.weigh(dropped);
    this.items[this.start] = undefined;
    this.start += 1;
    this.first += 1;
    if (this.start >= 1024 && this.start * 2 >= this.items.length) {
      this.items = this.items.slice(this.start);
      this.start = 0;
    }
  }
}
