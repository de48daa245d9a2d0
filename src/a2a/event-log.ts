/**
 * Consecutive events packed together: one object holds them all and gives each back on demand
 * (a fresh object per read).
 */
export abstract class EventBlock<T> {
  constructor(
    /** Sequence number of the block's first event. */
    readonly firstSeq: number,
    /** How many events it holds (an open block's grows). */
    public count: number,
  ) {}

  /** The event numbered `seq` (within the block). */
  abstract get(seq: number): T;
  /** That event's weight, as the log's `weigh` gives it. */
  abstract weight(seq: number): number;
}

/**
 * A block that takes the events one at a time as they leave a log's hot ones, keeping of each
 * only what it needs to give it back (no object per event, and no copy of its text), until it
 * is full and is closed into a block of its own kind (which may join them).
 */
export abstract class OpenEventBlock<T> extends EventBlock<T> {
  /** The sum of its events' weights (by the log's `weigh`). */
  abstract readonly addedWeight: number;
  abstract add(event: T): void;
  /** The block it becomes once full; `spare` is a block its log dropped, whose room it may take over. */
  abstract close(spare?: EventBlock<T>): EventBlock<T>;
  /** Lets go of the room kept for more events (a log that takes no more). */
  abstract fit(): void;
}

/**
 * How a log keeps its older events: packed into blocks. A log that retains thousands of events
 * then holds one object per block instead of one or more per event, which is what the garbage
 * collector's young generation would otherwise copy and promote for every event.
 */
export interface EventPacking<T> {
  /** The newest events kept as they are: live readers take them with no unpacking. */
  hot: number;
  /** The events older than the hot ones are packed once they are this many... */
  block: number;
  /** ...or once they weigh this much (by the log's `weigh`). */
  blockWeight?: number;
  pack(events: readonly T[], firstSeq: number): EventBlock<T>;
  /**
   * With it, each event that leaves the hot ones goes at once into an open block (made by this),
   * which is closed once it holds `block` events or `blockWeight`: no event older than the hot
   * ones is kept as an object, even in a log that never fills a block.
   */
  open?(firstSeq: number): OpenEventBlock<T>;
}

/** The blocks of a log that has packed none: one frozen array for all of them. */
const NO_BLOCKS = Object.freeze([]) as unknown as never[];

/**
 * A task's ordered event log: sequence numbers start at 1 and grow by one per event. It keeps
 * the newest `capacity` events, and beyond them those a reader still needs (`keepAfter`), up to
 * twice the capacity. Appending and reading by sequence number are O(1) (amortised: the dropped
 * head is compacted away once it outweighs the live part; a packed event is found among the
 * blocks by binary search). With `packing`, the events older than the hot ones are kept in
 * blocks, and all of them once `pack()` is called (e.g. when the task ends).
 */
export class EventLog<T> {
  /** Packed events, oldest first, all older than `tail`'s (NO_BLOCKS until the first block: most tasks' logs never pack one). */
  private blocks: (EventBlock<T> | undefined)[] = NO_BLOCKS;
  /** Index in `blocks` of the oldest block still (partly) retained. */
  private blockStart = 0;
  /** Events not packed, oldest first; `tail[tailStart]` is numbered `tailFirst`. */
  private tail: (T | undefined)[] = [];
  private tailStart = 0;
  private tailFirst = 1;
  /** Sequence number of the oldest retained event. */
  private first = 1;
  /** Sequence number of the newest event (first - 1 while empty). */
  private last = 0;

  /** The newest block while it takes events (see EventPacking.open): the last of `blocks`. */
  private opened?: OpenEventBlock<T>;
  /** The block dropped last, until the next block closes (which may take over its room). */
  private spare?: EventBlock<T>;

  /** Sum of the retained events' weights. */
  private weight = 0;
  /** Sum of the weights of the tail's events older than the hot ones (with `packing` and `weigh`). */
  private pendingWeight = 0;

  constructor(
    /** The events it keeps (more only while readers still need them, see `trim`). */
    readonly capacity: number,
    /** An event's weight (e.g. its bytes); the log keeps the sum over what it retains. */
    private readonly weigh?: (event: T) => number,
    /** Sequence number of the first event appended (a log that continues one kept elsewhere). */
    firstSeq = 1,
    private readonly packing?: EventPacking<T>,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`EventLog capacity must be a positive integer, got ${capacity}`);
    this.first = firstSeq;
    this.tailFirst = firstSeq;
    this.last = firstSeq - 1;
  }

  /** The retained events' total weight (0 without a `weigh` function). */
  get bytes(): number {
    return this.weight;
  }

  /** Sequence number of the newest event, 0 while empty. */
  get lastSeq(): number {
    return this.last;
  }

  /** Sequence number of the oldest retained event (lastSeq + 1 while empty). */
  get firstSeq(): number {
    return this.first;
  }

  get size(): number {
    return this.last - this.first + 1;
  }

  /** The sequence number the next event gets. */
  get nextSeq(): number {
    return this.last + 1;
  }

  /** Appends the event numbered `nextSeq`, then trims to capacity (see `trim`). */
  append(event: T, keepAfter = Number.POSITIVE_INFINITY): void {
    this.tail.push(event);
    this.last += 1;
    if (this.weigh) this.weight += this.weigh(event);
    const packing = this.packing;
    if (packing?.open) {
      this.trim(keepAfter);
      // At most one event leaves the hot ones per append (none while the log holds fewer).
      while (this.last - this.tailFirst + 1 > packing.hot) this.openOldest(packing);
      return;
    }
    if (packing && this.weigh) {
      // The event that just left the hot ones now waits to be packed.
      const left = this.last - packing.hot;
      if (left >= this.tailFirst) this.pendingWeight += this.weigh(this.tail[this.tailStart + left - this.tailFirst] as T);
    }
    this.trim(keepAfter);
    if (!packing) return;
    const pending = this.last - packing.hot - this.tailFirst + 1;
    if (pending >= packing.block || (pending > 0 && packing.blockWeight !== undefined && this.pendingWeight >= packing.blockWeight)) {
      this.packTail(pending);
    }
  }

  /**
   * Appends the event numbered `nextSeq` straight into the open block, as `append` then `cool`
   * would leave it (trimmed the same), when the log cools (see `cool`) and no event waits in its
   * tail; else appends nothing and returns false. For an event its live readers take from the
   * caller's hand (a tool frame's): the tail's list is not written and emptied again per event,
   * one object less (two with its store) that every frame of a cold task touches.
   */
  appendCooled(event: T, keepAfter = Number.POSITIVE_INFINITY): boolean {
    const packing = this.packing;
    if (!packing?.open || this.capacity <= packing.hot || this.tailFirst <= this.last) return false;
    this.last += 1;
    if (this.weigh) this.weight += this.weigh(event);
    // The new event is the tail's only one: trim never reaches it (the capacity is at least 1).
    this.trim(keepAfter);
    this.tailFirst += 1;
    this.addOpened(packing, this.last, event);
    return true;
  }

  /** Packs every event not packed yet (the log reads the same as before); without `packing`, nothing. */
  pack(): void {
    const packing = this.packing;
    if (packing?.open) {
      while (this.tailFirst <= this.last) this.openOldest(packing);
      if (this.opened) this.closeOpened();
    } else if (packing) this.packTail(this.last - this.tailFirst + 1);
  }

  /**
   * For a log that takes no more (a kept settled task's): with an open block, the hot events go
   * into it too and it lets go of its spare room; the events still unpacked are put in a list of
   * their own length (a list grown by appends has room for more: a task's four events, 17 slots).
   */
  fit(): void {
    const packing = this.packing;
    // An open block takes the hot ones too (no copy); a log that opened none keeps its few as they are.
    if (packing?.open && this.opened) {
      while (this.tailFirst <= this.last) this.openOldest(packing);
      this.opened?.fit();
    }
    this.spare = undefined;
    this.tail = this.tail.slice(this.tailStart);
    this.tailStart = 0;
  }

  /**
   * Moves every event not in a block yet into the open block, hot ones too (with `packing.open`;
   * else nothing): for a log whose live readers have taken its newest event. The block keeps
   * what it needs of them, and the event objects die young instead of surviving a scavenge in
   * the tail; a reader that comes later gets them back from the block. A log that keeps no more
   * events than the hot ones (Redis mode's writer log keeps one) never packs: its events leave by
   * trim, and cooling it would open a block for every event.
   */
  cool(): void {
    const packing = this.packing;
    if (!packing?.open || this.capacity <= packing.hot) return;
    while (this.tailFirst <= this.last) this.openOldest(packing);
  }

  /** Drops the oldest events past capacity, but none numbered above `keepAfter` until twice the capacity. */
  trim(keepAfter = Number.POSITIVE_INFINITY): void {
    while (this.size > this.capacity && (this.first <= keepAfter || this.size > 2 * this.capacity)) this.dropOldest();
  }

  /** The event with this sequence number, if retained. */
  get(seq: number): T | undefined {
    if (!Number.isInteger(seq) || seq < this.first || seq > this.last) return undefined;
    if (seq >= this.tailFirst) return this.tail[this.tailStart + seq - this.tailFirst];
    return this.blockOf(seq).get(seq);
  }

  /** Whether every event after `seq` is still here to be replayed. */
  retainsAfter(seq: number): boolean {
    return seq >= this.first - 1;
  }

  /** The retained block holding `seq` (which is older than the tail). */
  private blockOf(seq: number): EventBlock<T> {
    let lo = this.blockStart;
    let hi = this.blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.blocks[mid] as EventBlock<T>).firstSeq <= seq) lo = mid;
      else hi = mid - 1;
    }
    return this.blocks[lo] as EventBlock<T>;
  }

  /** Packs the oldest `count` events of the tail into one block. */
  private packTail(count: number): void {
    // Events of the tail already dropped (a capacity below the hot ones) are not packed.
    const from = Math.max(this.tailFirst, this.first);
    const skip = from - this.tailFirst;
    count -= skip;
    if (!this.packing || count <= 0) return;
    const at = this.tailStart + skip;
    const block = this.packing.pack(this.tail.slice(at, at + count) as T[], from);
    // A log's first block makes a list of one (a push into an empty list reserves room for 17: a settled task's log packs one).
    if (this.blocks === NO_BLOCKS) this.blocks = [block];
    else this.blocks.push(block);
    this.tail = this.tail.slice(at + count);
    this.tailStart = 0;
    this.tailFirst = from + count;
    // Whatever waited is packed now (pack() also packs the hot ones).
    this.pendingWeight = 0;
  }

  /** Moves the tail's oldest event into the open block (opening one), and closes that block once full. */
  private openOldest(packing: EventPacking<T>): void {
    const seq = this.tailFirst;
    const event = this.tail[this.tailStart] as T;
    this.tail[this.tailStart] = undefined;
    this.tailStart += 1;
    this.tailFirst += 1;
    // The tail holds the hot ones only: moved to its front in place now and then (no new list).
    // One empty slot stays before them: a list cut to length 0 lets go of its store (a cooled
    // log's tail is empty), and the next push would make a new one.
    if (this.tailStart >= 16) {
      const tail = this.tail;
      const live = tail.length - this.tailStart;
      for (let i = 0; i < live; i++) tail[1 + i] = tail[this.tailStart + i];
      tail.length = 1 + live;
      this.tailStart = 1;
    }
    this.addOpened(packing, seq, event);
  }

  /** Adds the event numbered `seq` (the next after the open block's, or the first of a new one) to the open block (opening one), and closes that block once full. */
  private addOpened(packing: EventPacking<T>, seq: number, event: T): void {
    let opened = this.opened;
    if (!opened) {
      opened = this.opened = packing.open?.(seq) as OpenEventBlock<T>;
      // A log's first block makes a list of one (a push into an empty list reserves room for 17).
      if (this.blocks === NO_BLOCKS) this.blocks = [opened];
      else this.blocks.push(opened);
    }
    opened.add(event);
    if (opened.count >= packing.block || (packing.blockWeight !== undefined && opened.addedWeight >= packing.blockWeight)) this.closeOpened();
  }

  /** The open block (the log's last block), closed in its place; events of it already dropped stay unread, as they were. */
  private closeOpened(): void {
    this.blocks[this.blocks.length - 1] = (this.opened as OpenEventBlock<T>).close(this.spare);
    this.opened = undefined;
    this.spare = undefined;
  }

  private dropOldest(): void {
    const seq = this.first;
    this.first += 1;
    if (seq >= this.tailFirst) {
      const dropped = this.tail[this.tailStart];
      if (this.weigh && dropped !== undefined) {
        const weight = this.weigh(dropped);
        this.weight -= weight;
        if (this.packing && !this.packing.open && seq <= this.last - this.packing.hot) this.pendingWeight -= weight;
      }
      this.tail[this.tailStart] = undefined;
      this.tailStart += 1;
      this.tailFirst += 1;
      if (this.tailStart >= 1024 && this.tailStart * 2 >= this.tail.length) {
        this.tail = this.tail.slice(this.tailStart);
        this.tailStart = 0;
      }
      return;
    }
    const block = this.blocks[this.blockStart] as EventBlock<T>;
    if (this.weigh) this.weight -= block.weight(seq);
    if (seq < block.firstSeq + block.count - 1) return;
    // The block's last event went: the block goes.
    if (block === this.opened) this.opened = undefined;
    else this.spare = block;
    this.blocks[this.blockStart] = undefined;
    this.blockStart += 1;
    if (this.blockStart >= 64 && this.blockStart * 2 >= this.blocks.length) {
      this.blocks = this.blocks.slice(this.blockStart);
      this.blockStart = 0;
    }
  }
}
