/**
 * Where a RecencyIndex keeps each item's current key: a Map by default, or a field of the item
 * itself (the in-memory store keeps them on its tasks: no map of every kept task per index).
 */
export interface RecencyKeys<T> {
  get(item: T): number | undefined;
  set(item: T, key: number | undefined): void;
}

/** Keys in a Map of their own (items of any kind). */
export function mapKeys<T>(): RecencyKeys<T> {
  const keys = new Map<T, number>();
  return {
    get: (item) => keys.get(item),
    set: (item, key) => {
      if (key === undefined) keys.delete(item);
      else keys.set(item, key);
    },
  };
}

/**
 * Items in the order they were last touched, newest first, read page by page: touching moves an
 * item to the front in O(1) amortised, and a page after a cursor costs a binary search plus the
 * page (not the number of items). A move or a removal empties the item's old slot (found by a
 * binary search on its key), so the index never holds an item it no longer lists: a forgotten
 * task (tens of kB) is not kept alive until the next compaction, which drops the empty slots once
 * they outnumber the live ones. The entries are two parallel arrays (items, keys), not an
 * object per touch: every task is touched at each status change, and those objects lived until
 * the next compaction, so the young-generation collector copied and promoted each of them.
 * An item's current key is where `keys` keeps it; keys come from a clock shared by every index
 * that keeps them in the same place, so a key names one touch of one index.
 */
export class RecencyIndex<T> {
  /** Ascending by key (`stamps[i]` is the key `items[i]` was touched with); an emptied slot is undefined. */
  private items: (T | undefined)[] = [];
  private stamps: number[] = [];
  private count = 0;

  constructor(
    private readonly clock: { next(): number },
    private readonly keys: RecencyKeys<T> = mapKeys<T>(),
  ) {}

  get size(): number {
    return this.count;
  }

  keyOf(item: T): number | undefined {
    return this.keys.get(item);
  }

  touch(item: T): void {
    const key = this.clock.next();
    const previous = this.keys.get(item);
    if (previous === undefined) this.count += 1;
    else this.empty(previous);
    this.keys.set(item, key);
    this.items.push(item);
    this.stamps.push(key);
    this.compact();
  }

  remove(item: T): void {
    const key = this.keys.get(item);
    if (key === undefined) return;
    this.empty(key);
    this.keys.set(item, undefined);
    this.count -= 1;
    this.compact();
  }

  /** Items newest first, starting just below `beforeKey` (a cursor) or at the newest. */
  *newestFirst(beforeKey = Number.POSITIVE_INFINITY): Generator<{ item: T; key: number }> {
    for (let i = this.firstAtOrAfter(beforeKey) - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item !== undefined) yield { item, key: this.stamps[i] };
    }
  }

  private compact(): void {
    const length = this.stamps.length;
    if (length < 1024 || length < 2 * this.count) return;
    const items: T[] = [];
    const stamps: number[] = [];
    for (let i = 0; i < length; i++) {
      const item = this.items[i];
      if (item === undefined) continue;
      items.push(item);
      stamps.push(this.stamps[i]);
    }
    this.items = items;
    this.stamps = stamps;
  }

  /** Empties the slot of `key` (an item's current key: always in the arrays, as compaction keeps live slots). */
  private empty(key: number): void {
    const at = this.firstAtOrAfter(key);
    if (this.stamps[at] === key) this.items[at] = undefined;
  }

  /** The first slot whose key is `key` or later (binary search: the keys ascend). */
  private firstAtOrAfter(key: number): number {
    const stamps = this.stamps;
    let lo = 0;
    let hi = stamps.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (stamps[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
