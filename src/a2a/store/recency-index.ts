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
 * page (not the number of items). Entries left behind by a move are skipped, and compacted away
 * once they outnumber the live ones. The entries are two parallel arrays (items, keys), not an
 * object per touch: every task is touched at each status change, and those objects lived until
 * the next compaction, so the young-generation collector copied and promoted each of them.
 * An item's current key is where `keys` keeps it; keys come from a clock shared by every index
 * that keeps them in the same place, so a key names one touch of one index.
 */
export class RecencyIndex<T> {
  /** Ascending by key (`stamps[i]` is the key `items[i]` was touched with); live while it is the item's current key. */
  private items: T[] = [];
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
    if (this.keys.get(item) === undefined) this.count += 1;
    this.keys.set(item, key);
    this.items.push(item);
    this.stamps.push(key);
    this.compact();
  }

  remove(item: T): void {
    if (this.keys.get(item) === undefined) return;
    this.keys.set(item, undefined);
    this.count -= 1;
    this.compact();
  }

  /** Items newest first, starting just below `beforeKey` (a cursor) or at the newest. */
  *newestFirst(beforeKey = Number.POSITIVE_INFINITY): Generator<{ item: T; key: number }> {
    const stamps = this.stamps;
    let lo = 0;
    let hi = stamps.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (stamps[mid] < beforeKey) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo - 1; i >= 0; i--) {
      const item = this.items[i];
      const key = this.stamps[i];
      if (this.keys.get(item) === key) yield { item, key };
    }
  }

  private compact(): void {
    const length = this.stamps.length;
    if (length < 1024 || length < 2 * this.count) return;
    const items: T[] = [];
    const stamps: number[] = [];
    for (let i = 0; i < length; i++) {
      const item = this.items[i];
      if (this.keys.get(item) !== this.stamps[i]) continue;
      items.push(item);
      stamps.push(this.stamps[i]);
    }
    this.items = items;
    this.stamps = stamps;
  }
}
