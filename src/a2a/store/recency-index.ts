/**
 * Where a RecencyIndex keeps each item's slot (its place in the index's arrays): a Map by
 * default, or a field of the item itself (the in-memory store keeps them on its tasks: no map of
 * every kept task per index).
 */
export interface RecencySlots<T> {
  get(item: T): number | undefined;
  set(item: T, slot: number | undefined): void;
}

/** Slots in a Map of their own (items of any kind). */
export function mapSlots<T>(): RecencySlots<T> {
  const slots = new Map<T, number>();
  return {
    get: (item) => slots.get(item),
    set: (item, slot) => {
      if (slot === undefined) slots.delete(item);
      else slots.set(item, slot);
    },
  };
}

/** Compaction waits for this many slots at least (and for the emptied ones to outnumber the live). */
const MIN_COMPACTED = 1024;

/**
 * Items in the order they were last touched, newest first, read page by page: touching moves an
 * item to the front in O(1) amortised, and a page after a cursor (a key) costs a binary search
 * plus the page (not the number of items). A move or a removal empties the item's old slot, so
 * the index never holds an item it no longer lists: a forgotten task (tens of kB) is not kept
 * alive until the next compaction, which drops the empty slots once they outnumber the live
 * ones. Each item's slot is kept where `slots` says (not its key, found again by a binary search
 * at every move: at 1,000 streams a task moves at each narration, and each search read a dozen
 * far places of arrays of every kept task). The entries are two parallel arrays (items, keys),
 * compacted in place: new arrays at each compaction, grown again by doubling, were hundreds of kB
 * each time, allocated young and promoted to die at the next one.
 * Keys come from a clock shared by every index that keeps its slots in the same place, so a key
 * names one touch of one index.
 */
export class RecencyIndex<T> {
  /** Slots [0, end) ascend by key (`stamps[i]` is the key `items[i]` was touched with); an emptied slot is undefined, as is every slot from `end` on. */
  private items: (T | undefined)[] = [];
  private stamps: number[] = [];
  private end = 0;
  private count = 0;

  constructor(
    private readonly clock: { next(): number },
    private readonly slots: RecencySlots<T> = mapSlots<T>(),
  ) {}

  get size(): number {
    return this.count;
  }

  keyOf(item: T): number | undefined {
    const slot = this.slots.get(item);
    return slot === undefined ? undefined : this.stamps[slot];
  }

  touch(item: T): void {
    const previous = this.slots.get(item);
    if (previous === undefined) this.count += 1;
    else this.items[previous] = undefined;
    const slot = this.end++;
    // At the arrays' length this appends; below it, it reuses a slot a compaction freed.
    this.items[slot] = item;
    this.stamps[slot] = this.clock.next();
    this.slots.set(item, slot);
    if (this.end >= MIN_COMPACTED && this.end >= 2 * this.count) this.compact();
  }

  remove(item: T): void {
    const slot = this.slots.get(item);
    if (slot === undefined) return;
    this.items[slot] = undefined;
    this.slots.set(item, undefined);
    this.count -= 1;
    if (this.end >= MIN_COMPACTED && this.end >= 2 * this.count) this.compact();
  }

  /** Items newest first, starting just below `beforeKey` (a cursor) or at the newest. */
  *newestFirst(beforeKey = Number.POSITIVE_INFINITY): Generator<{ item: T; key: number }> {
    for (let i = this.firstAtOrAfter(beforeKey) - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item !== undefined) yield { item, key: this.stamps[i] };
    }
  }

  /** Moves the live slots to the front, in order, and empties the rest (the arrays keep their length: touches refill it). */
  private compact(): void {
    const { items, stamps, slots } = this;
    const end = this.end;
    let to = 0;
    for (let i = 0; i < end; i++) {
      const item = items[i];
      if (item === undefined) continue;
      if (to !== i) {
        items[to] = item;
        stamps[to] = stamps[i];
        slots.set(item, to);
      }
      to += 1;
    }
    for (let i = to; i < end; i++) items[i] = undefined;
    this.end = to;
    // An index that shrank for good (its owner's tasks forgotten) gives its arrays back.
    const keep = Math.max(MIN_COMPACTED, 4 * to);
    if (items.length > 2 * keep) {
      items.length = keep;
      stamps.length = keep;
    }
  }

  /** The first slot whose key is `key` or later (binary search: the keys ascend). */
  private firstAtOrAfter(key: number): number {
    const stamps = this.stamps;
    let lo = 0;
    let hi = this.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (stamps[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
